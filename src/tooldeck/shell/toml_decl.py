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

Trust (SPEC §7): a project file arrives with a checkout, so a runtime it
declares may not switch the sandbox off, turn the network on, or allow raw
code; those need the user's own file. Such a project runtime is an error
naming the file, not a silently weaker one.
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, NoReturn

from tooldeck.config import Config, ConfigError, load_config
from tooldeck.shell.declare import build_runtime
from tooldeck.shell.profiles import BUILTIN, ShellRuntime
from tooldeck.shell.spec import ShellToolSpec, build_tool_spec

SHELL_KEYS = frozenset({"runtimes", "tools", "default_tool"})
PROJECT_FORBIDDEN = (
    ("sandbox", "mode", "off", "switch the sandbox off"),
    ("sandbox", "network", True, "turn the network on"),
    ("policy", "raw", "allow", "allow raw code"),
)


@dataclass
class ShellConfig:
    runtimes: dict[str, ShellRuntime] = field(default_factory=dict)
    tools: list[ShellToolSpec] = field(default_factory=list)
    default_tool: bool = True


def _failer(source: str) -> Any:
    def fail(message: str, key: str) -> NoReturn:
        raise ConfigError(f"{source}: {message}")

    return fail


def _check_project(project: Mapping[str, Any], path: Path | None) -> None:
    runtimes = project.get("shell", {}).get("runtimes", {}) if isinstance(project.get("shell"), dict) else {}
    for rid, data in runtimes.items():
        for section, key, bad, what in PROJECT_FORBIDDEN:
            value = (data.get(section) or {}).get(key) if isinstance(data, dict) else None
            if value == bad or (bad is True and str(value).lower() in ("on", "true", "yes")):
                raise ConfigError(
                    f"{path}: [shell.runtimes.{rid}] may not {what} from a project file; "
                    "declare that runtime in your user config instead"
                )


def _runtimes(table: Mapping[str, Any], source: str, base_dir: str) -> dict[str, ShellRuntime]:
    pending = dict(table)
    built: dict[str, ShellRuntime] = {}
    while pending:
        progressed = False
        for rid, data in list(pending.items()):
            if not isinstance(data, Mapping):
                raise ConfigError(f"{source}: [shell.runtimes.{rid}] must be a table")
            parent = str(data.get("extends", "builtin:workspace-readonly@1"))
            if parent in pending and parent != rid:
                continue  # build the parent first
            built[rid] = build_runtime(rid, data, known=built, base_dir=base_dir,
                                       origin=f"{source} [shell.runtimes.{rid}]",
                                       fail=_failer(f"{source} [shell.runtimes.{rid}]"))  # fmt: skip
            del pending[rid]
            progressed = True
        if not progressed:
            raise ConfigError(f"{source}: shell runtimes extend each other in a cycle: {', '.join(pending)}")
    return built


def shell_config(config: Config, project_dir: str | os.PathLike[str] | None) -> ShellConfig:
    """The shell section of ``config``; raises ConfigError naming the file and key."""
    section = config.section("shell")
    source = " + ".join(str(p) for p in (config.user_path, config.project_path) if p) or "config"
    for key in section:
        if key not in SHELL_KEYS:
            raise ConfigError(f"{source}: unknown [shell] setting {key!r} (known: {', '.join(sorted(SHELL_KEYS))})")
    if config.project_path is not None and project_dir is not None:
        project = load_config(project_dir, user_path=Path(os.devnull)).data
        _check_project(project, config.project_path)
    base_dir = os.fspath(project_dir) if project_dir is not None else os.getcwd()
    runtimes = _runtimes(section.get("runtimes", {}), source, base_dir)
    tools: list[ShellToolSpec] = []
    for name, data in (section.get("tools") or {}).items():
        if not isinstance(data, Mapping):
            raise ConfigError(f"{source}: [shell.tools.{name}] must be a table")
        spec = build_tool_spec(name, data, base_dir=base_dir, fail=_failer(f"{source} [shell.tools.{name}]"))
        if spec.runtime not in runtimes and spec.runtime not in BUILTIN:
            raise ConfigError(f"{source}: [shell.tools.{name}] runtime {spec.runtime!r} is not declared "
                              f"(known: {', '.join([*runtimes, *BUILTIN])})")  # fmt: skip
        tools.append(spec)
    default_tool = section.get("default_tool", True)
    if not isinstance(default_tool, bool):
        raise ConfigError(f"{source}: [shell] default_tool must be true or false")
    return ShellConfig(runtimes, tools, default_tool)


def load_shell_config(project_dir: str | os.PathLike[str] | None) -> ShellConfig:
    return shell_config(load_config(project_dir), project_dir)
