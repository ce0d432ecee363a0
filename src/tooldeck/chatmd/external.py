"""Declaration kinds another package implements: shell tools and MCP mounts.

``<shell_access>``, ``type="shell"``/``command=`` tools and ``mcp_server=``
mounts are built by :mod:`tooldeck.shell.chatmd_decl` and
:mod:`tooldeck.mounts.declaration`, services below the hosts that read the
shared element form (:mod:`tooldeck.markup`). Each is imported here in plain
code, one function per kind, so the import graph shows every edge
(``scripts/check_layers.py``); the imports are lazy because a file without
such a declaration never needs the shell runtime or the MCP SDK.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

from tooldeck.chatmd.paths import PathVars
from tooldeck.core.tool import Tool
from tooldeck.markup.element import Element
from tooldeck.runtime import Runtime


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
    from tooldeck.shell import chatmd_decl as decl  # lazy: only a file declaring a shell loads the shell runtime

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
    from tooldeck.shell import chatmd_decl as decl  # lazy: only a file declaring a shell loads the shell runtime
    from tooldeck.tools.shell import shell_service  # lazy: as above

    service = shell_service(rt)
    if el.has("command"):
        return decl.legacy_command_tool(el, runtimes, service=service)
    return decl.tool_from_element(el, runtimes, base_dir=_base_dir(el, vars), service=service)


def mcp_tools(el: Element, rt: Runtime, **ctx: Any) -> list[Tool]:
    """``<tool mcp_server="stdio:CMD" | "https://..." ...>`` -> the mounted remote tools."""
    from tooldeck.mounts.declaration import mount_from_element  # lazy: the MCP SDK loads only for a mount

    return list(mount_from_element(el, rt=rt, **ctx))
