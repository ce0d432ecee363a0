"""Agents, chats and models: agent_run, agent_manage, list_models, chat_send, chats, meta_refine.

The services live in :mod:`tooldeck.agents` (session manager, presets,
workflows, chats); these modules are the tools' faces over them.
"""

from __future__ import annotations

from tooldeck.core.tool import Tool
from tooldeck.runtime import Runtime


def tools(rt: Runtime) -> list[Tool]:
    from tooldeck.tools.agents import manage_tool, run_tool

    return [run_tool.build(rt), manage_tool.build(rt)]
