"""The catalog: every built-in tool domain assembled into one Toolbox.

Hosts (MCP server, CLI, ChatMD runner) call :func:`build_toolbox`. A profile
limits which tools are advertised (keeping schema cost small); ChatMD
declaration aliases (``read_dir``, ``get_contents``) map to model-visible names.
"""

from __future__ import annotations

import importlib
from collections.abc import Iterable

from tooldeck.core.tool import Tool
from tooldeck.core.toolbox import Toolbox
from tooldeck.runtime import Runtime

# One module per domain, each exposing tools(runtime) -> list[Tool].
DOMAINS: tuple[str, ...] = (
    "tooldeck.tools.workspaces",  # first: restores stored roots before other domains describe them
    "tooldeck.tools.files",
    "tooldeck.tools.selection",
    "tooldeck.tools.git",
    "tooldeck.tools.edits",
    "tooldeck.tools.search",
    "tooldeck.tools.structure",
    "tooldeck.tools.context_builder",
    "tooldeck.tools.agents",
)

# ChatMD declaration name -> model-visible tool name (seed 000).
ALIASES: dict[str, str] = {"read_dir": "read_directory", "get_contents": "read_file"}

PROFILES: dict[str, tuple[str, ...] | None] = {
    "full": None,
    "core": (
        "read_file",
        "read_directory",
        "get_file_tree",
        "file_search",
        "get_code_structure",
        "apply_patch",
        "apply_edits",
        "file_actions",
    ),
    "read-only": (
        "read_file",
        "read_directory",
        "get_file_tree",
        "file_search",
        "get_code_structure",
        "find_symbol",
        "find_references",
    ),
}


def canonical_name(name: str) -> str:
    return ALIASES.get(name, name)


def build_tools(rt: Runtime, domains: Iterable[str] = DOMAINS) -> list[Tool]:
    # agent sessions run with the whole catalog whatever the host's profile (tooldeck.agents.manager)
    rt.provide("catalog_tools", lambda: build_tools(rt))
    tools: list[Tool] = []
    for module_name in domains:
        module = importlib.import_module(module_name)
        tools.extend(module.tools(rt))
    return tools


def select_profile(tools: list[Tool], profile: str | None) -> list[Tool]:
    if profile is None or profile == "full":
        return tools
    if profile not in PROFILES:
        raise ValueError(f"unknown profile {profile!r}; choose one of {', '.join(PROFILES)}")
    allowed = PROFILES[profile]
    return [t for t in tools if allowed is None or t.name in allowed]


def build_toolbox(rt: Runtime, profile: str | None = None, **kwargs: object) -> Toolbox:
    tools = select_profile(build_tools(rt), profile)
    return Toolbox(tools, budget_tokens=rt.budget_tokens, count_tokens=rt.count_tokens, **kwargs)  # type: ignore[arg-type]
