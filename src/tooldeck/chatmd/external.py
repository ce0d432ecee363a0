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
from collections.abc import Callable
from pathlib import Path
from types import ModuleType
from typing import Any

from tooldeck.chatmd.element import ChatmdError, Element
from tooldeck.chatmd.paths import PathVars
from tooldeck.core.tool import Tool
from tooldeck.runtime import Runtime


def _module(name: str, el: Element, needs: str) -> ModuleType:
    try:
        return importlib.import_module(name)
    except ModuleNotFoundError as exc:
        if exc.name is not None and not name.startswith(exc.name):
            raise  # a missing dependency inside the module: a real bug, not an absent feature
        raise ChatmdError(el.pos, f"<{el.tag}> needs the {needs}, which this tooldeck does not have ({name})") from exc


def _base_dir(el: Element, vars: PathVars) -> Path:
    """Relative paths of a declaration resolve from the file it appears in (``${source_dir}``)."""
    return el.pos.file.parent if el.pos.file is not None else vars.prompt_dir


def shell_runtimes(
    elements: list[Element], rt: Runtime, *, vars: PathVars, check: Callable[[Element, Any], None] | None = None
) -> dict[str, Any]:
    """``<shell_access id=...>`` elements -> runtimes by id (shell domain); a
    later runtime may extend an earlier one. ``check(el, runtime)`` sees each
    one before it is kept (the authority check)."""
    if not elements:
        return {}
    decl = _module("tooldeck.shell.chatmd_decl", elements[0], "shell runtime")
    roots = [root.path for root in rt.workspace.roots]
    out: dict[str, Any] = {}
    for el in elements:
        runtime = decl.runtime_from_element(el, base_dir=_base_dir(el, vars), roots=roots, known=out)
        if check is not None:
            check(el, runtime)
        out[el.get("id") or getattr(runtime, "id", "")] = runtime
    return out


def shell_tool(el: Element, runtimes: dict[str, Any], rt: Runtime, *, vars: PathVars) -> Tool:
    """``<tool type="shell" ...>`` or a legacy ``<tool command="...">`` -> a Tool
    sharing the process's shell service (audit log, session approvals)."""
    decl = _module("tooldeck.shell.chatmd_decl", el, "shell runtime")
    from tooldeck.tools.shell import shell_service

    service = shell_service(rt)
    if el.has("command"):
        return decl.legacy_command_tool(el, runtimes, service=service)  # type: ignore[no-any-return]
    return decl.tool_from_element(el, runtimes, base_dir=_base_dir(el, vars), service=service)  # type: ignore[no-any-return]


def mcp_tools(el: Element, rt: Runtime, **ctx: Any) -> list[Tool]:
    """``<tool mcp_server="stdio:CMD" | "https://..." ...>`` -> the mounted remote tools."""
    client = _module("tooldeck.mcp.client", el, "MCP client")
    tools = client.mount_from_element(el, rt=rt, **ctx)
    return list(tools)
