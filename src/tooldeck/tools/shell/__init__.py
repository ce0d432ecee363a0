"""Shell: the model-facing shell tools, declared in the TOML config (SPEC §4, seed 000).

Tools come from ``[shell.tools.<name>]`` (user file, and a ``.tooldeck.toml``
the person approved with ``tooldeck trust allow``),
each running under a runtime from ``[shell.runtimes.<id>]`` or a built-in
profile. With no tool declared, one ``shell`` tool is offered: structured
argv (``{program, arguments}``) on the runtime named ``default`` if the config
declares one, else on ``builtin:workspace-readonly@1`` (read-only sandbox, no
network, inspection programs allowed, anything else asks — and with nobody
to ask, is denied). ``[shell] default_tool = false`` removes it. See
docs/shell.md.
"""

from __future__ import annotations

import logging

from tooldeck.config import ConfigError
from tooldeck.core.errors import ErrorCode, ToolError
from tooldeck.core.tool import Tool, tool
from tooldeck.runtime import Runtime
from tooldeck.shell.profiles import BUILTIN, DEFAULT_RUNTIME
from tooldeck.shell.service import ShellService
from tooldeck.shell.spec import ShellToolSpec
from tooldeck.shell.toml_decl import load_shell_config
from tooldeck.shell.tool_factory import make_tool

log = logging.getLogger("tooldeck.shell")

DEFAULT_TOOL = "shell"


def shell_service(rt: Runtime):  # type: ignore[no-untyped-def]
    """The process's shell service (roots, audit log, session approvals), built once."""
    def factory(r: Runtime) -> ShellService:
        return ShellService(lambda: [(root.path, root.read_only) for root in r.workspace.roots], r.state_dir)

    return rt.service("shell", factory)


def _unavailable(reason: str) -> Tool:
    """A bad shell configuration (the person's own file, or one they approved)
    fails closed without taking the other tools down: one `shell` tool that
    runs nothing, takes any arguments, and says what to fix."""
    from pydantic import BaseModel, ConfigDict

    class AnyInput(BaseModel):
        model_config = ConfigDict(extra="allow")

    def shell(args: AnyInput) -> str:
        raise ToolError(ErrorCode.UNSUPPORTED, f"shell tools are unavailable: {reason}; ask the user to fix "
                        "their configuration (nothing was run)")  # fmt: skip

    return tool(shell, name=DEFAULT_TOOL, description=f"Unavailable: the shell configuration is invalid ({reason}).")


def tools(rt: Runtime) -> list[Tool]:
    try:
        cfg = load_shell_config(rt.workspace.roots[0].path, state_dir=rt.state_dir)
    except ConfigError as exc:
        log.error("shell configuration: %s", exc)
        return [_unavailable(str(exc))]
    specs = list(cfg.tools)
    if not specs and cfg.default_tool:
        runtime = "default" if "default" in cfg.runtimes else DEFAULT_RUNTIME
        specs = [ShellToolSpec(name=DEFAULT_TOOL, mode="structured", runtime=runtime, rationale="optional", stdin=True)]
    service = shell_service(rt)
    return [make_tool(s, cfg.runtimes.get(s.runtime) or BUILTIN[s.runtime], service) for s in specs]
