"""Shell runtimes and tools from the TOML configuration (user file + ``.tooldeck.toml``).

Layout::

    [shell]
    default_tool = true                  # offer `shell` when no tool is declared
    [shell.runtimes.dev]
    extends = "builtin:workspace-development@1"
    [shell.runtimes.dev.policy]
    default = "ask"
    rules = [{ id = "no-rm", action = "deny", basename = "rm" }]
    [shell.tools.run]
    mode = "structured"
    runtime = "dev"

Trust (SPEC §3): a runtime or tool is authority (a sandbox, a policy, an
environment, secrets, hooks, a command), so ``[shell.runtimes]`` and
``[shell.tools]`` of a project's ``.tooldeck.toml`` apply only when the
person approved that file (``tooldeck trust allow``); :func:`load_config`
drops them otherwise and reports what it dropped. Values are typed
(:mod:`tooldeck.shell.toml_types`): ``network = "1"`` is an error naming the
key, never a guess.
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any, NoReturn

from tooldeck.config import Config, ConfigError, load_config
from tooldeck.shell.declare import build_runtime
from tooldeck.shell.profiles import BUILTIN, ShellRuntime
from tooldeck.shell.spec import ShellToolSpec, build_tool_spec
from tooldeck.shell.toml_types import check_runtime, check_tool

SHELL_KEYS = frozenset({"runtimes", "tools", "default_tool"})


@dataclass
class ShellConfig:
    runtimes: dict[str, ShellRuntime] = field(default_factory=dict)
    tools: list[ShellToolSpec] = field(default_factory=list)
    default_tool: bool = True


def _failer(source: str) -> Any:
    def fail(message: str, key: str) -> NoReturn:
        raise ConfigError(f"{source}: {message}")

    return fail


def _runtimes(table: Mapping[str, Any], source: str, base_dir: str) -> dict[str, ShellRuntime]:
    pending = dict(table)
    built: dict[str, ShellRuntime] = {}
    while pending:
        progressed = False
        for rid, data in list(pending.items()):
            if not isinstance(data, Mapping):
                raise ConfigError(f"{source}: [shell.runtimes.{rid}] must be a table")
            fail = _failer(f"{source} [shell.runtimes.{rid}]")
            check_runtime(data, fail)
            parent = str(data.get("extends", "builtin:workspace-readonly@1"))
            if parent in pending and parent != rid:
                continue  # build the parent first
            built[rid] = build_runtime(rid, data, known=built, base_dir=base_dir,
                                       origin=f"{source} [shell.runtimes.{rid}]", fail=fail)  # fmt: skip
            del pending[rid]
            progressed = True
        if not progressed:
            raise ConfigError(f"{source}: shell runtimes extend each other in a cycle: {', '.join(pending)}")
    return built


def shell_config(config: Config, project_dir: str | os.PathLike[str] | None) -> ShellConfig:
    """The shell section of ``config``; raises ConfigError naming the file and key."""
    section = config.section("shell")
    # an unapproved project file contributes no shell settings: errors are the user file's
    project = config.project_path if config.project_approved else None
    source = " + ".join(str(p) for p in (config.user_path, project) if p) or "config"
    for key in section:
        if key not in SHELL_KEYS:
            raise ConfigError(f"{source}: unknown [shell] setting {key!r} (known: {', '.join(sorted(SHELL_KEYS))})")
    for key in ("runtimes", "tools"):
        if not isinstance(section.get(key, {}), Mapping):
            raise ConfigError(f"{source}: [shell.{key}] must be a table")
    base_dir = os.fspath(project_dir) if project_dir is not None else os.getcwd()
    runtimes = _runtimes(section.get("runtimes", {}), source, base_dir)
    tools: list[ShellToolSpec] = []
    for name, data in (section.get("tools") or {}).items():
        if not isinstance(data, Mapping):
            raise ConfigError(f"{source}: [shell.tools.{name}] must be a table")
        fail = _failer(f"{source} [shell.tools.{name}]")
        check_tool(data, fail)
        spec = build_tool_spec(name, data, base_dir=base_dir, fail=fail)
        if spec.runtime not in runtimes and spec.runtime not in BUILTIN:
            raise ConfigError(f"{source}: [shell.tools.{name}] runtime {spec.runtime!r} is not declared "
                              f"(known: {', '.join([*runtimes, *BUILTIN])})")  # fmt: skip
        tools.append(spec)
    default_tool = section.get("default_tool", True)
    if not isinstance(default_tool, bool):
        raise ConfigError(f"{source}: [shell] default_tool must be true or false")
    return ShellConfig(runtimes, tools, default_tool)


def load_shell_config(
    project_dir: str | os.PathLike[str] | None, *, state_dir: str | os.PathLike[str] | None = None
) -> ShellConfig:
    return shell_config(load_config(project_dir, state_dir=state_dir), project_dir)
