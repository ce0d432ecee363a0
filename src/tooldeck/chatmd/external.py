"""Hooks to declaration kinds another domain implements: shell tools and MCP mounts.

Why one small module: ``<shell_access>``, ``type="shell"``/``command=`` tools
and ``mcp_server=`` mounts are built by ``tooldeck.shell.chatmd_decl`` and
``tooldeck.mcp.client``. When those modules are not installed yet, loading
a file that needs them fails with a clear ChatMD error at load time (before
any model call) instead of an ImportError. The wiring is kept here, in one
function per hook, so it is the only place to adjust when they land.
"""

from __future__ import annotations

import importlib
from types import ModuleType
from typing import Any

from tooldeck.chatmd.element import ChatmdError, Element
from tooldeck.core.tool import Tool
from tooldeck.runtime import Runtime


def _module(name: str, el: Element, needs: str) -> ModuleType:
    try:
        return importlib.import_module(name)
    except ModuleNotFoundError as exc:
        if exc.name is not None and not name.startswith(exc.name):
            raise  # a missing dependency inside the module: a real bug, not an absent feature
        raise ChatmdError(el.pos, f"<{el.tag}> needs the {needs}, which this tooldeck does not have ({name})") from exc


def shell_runtimes(elements: list[Element], rt: Runtime, **ctx: Any) -> dict[str, Any]:
    """``<shell_access id=...>`` elements -> runtimes by id (shell domain)."""
    if not elements:
        return {}
    decl = _module("tooldeck.shell.chatmd_decl", elements[0], "shell runtime")
    out: dict[str, Any] = {}
    for el in elements:
        runtime = decl.runtime_from_element(el, rt=rt, **ctx)
        out[el.get("id") or getattr(runtime, "id", "")] = runtime
    return out


def shell_tool(el: Element, runtimes: dict[str, Any], rt: Runtime, **ctx: Any) -> Tool:
    """``<tool type="shell" ...>`` or a legacy ``<tool command="...">`` -> a Tool."""
    decl = _module("tooldeck.shell.chatmd_decl", el, "shell runtime")
    if el.has("command"):
        return decl.legacy_command_tool(el, rt=rt, **ctx)  # type: ignore[no-any-return]
    return decl.tool_from_element(el, runtimes, rt=rt, **ctx)  # type: ignore[no-any-return]


def mcp_tools(el: Element, rt: Runtime, **ctx: Any) -> list[Tool]:
    """``<tool mcp_server="stdio:CMD" | "https://..." ...>`` -> the mounted remote tools."""
    client = _module("tooldeck.mcp.client", el, "MCP client")
    tools = client.mount_from_element(el, rt=rt, **ctx)
    return list(tools)
