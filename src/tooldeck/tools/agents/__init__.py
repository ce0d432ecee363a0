"""Agents, chats and models: agent_run, agent_manage, list_models, chat_send, chats, meta_refine.

The services live in :mod:`tooldeck.agents` (session manager, presets,
workflows, chats); these modules are the tools' faces over them.
"""

from __future__ import annotations

from tooldeck.core.tool import Tool
from tooldeck.runtime import Runtime
from tooldeck.tools.agents import chat_tools, manage_tool, refine_tool, run_tool


def tools(rt: Runtime) -> list[Tool]:
    return [
        chat_tools.build_list_models(rt),
        chat_tools.build_chat_send(rt),
        chat_tools.build_chats(rt),
        run_tool.build(rt),
        manage_tool.build(rt),
        refine_tool.build(rt),
    ]
