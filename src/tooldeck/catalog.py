"""The catalog: every built-in tool domain assembled into one Toolbox.

Hosts (MCP server, CLI, ChatMD runner) call :func:`build_toolbox`. A profile
limits which tools are advertised (keeping schema cost small); ChatMD
declaration aliases (``read_dir``, ``get_contents``) map to model-visible names.
"""

from __future__ import annotations

import importlib
import os
from collections.abc import Iterable
from typing import Any

from tooldeck.core.tool import Tool
from tooldeck.core.toolbox import DEFAULT_TIMEOUT, Toolbox
from tooldeck.runtime import Runtime

# One module per domain, each exposing tools(runtime) -> list[Tool].
DOMAINS: tuple[str, ...] = (
    "tooldeck.tools.workspaces",  # stored roots are restored by Runtime.start(), not here: order is free
    "tooldeck.tools.files",
    "tooldeck.tools.selection",
    "tooldeck.tools.git",
    "tooldeck.tools.edits",
    "tooldeck.tools.search",
    "tooldeck.tools.structure",
    "tooldeck.tools.context_builder",
    "tooldeck.tools.web",
    "tooldeck.tools.shell",
    "tooldeck.tools.index",
    "tooldeck.tools.agents",
)

# The domains whose tools need nothing but a runtime's roots: what an agent session
# on a named workspace gets (the rest act on the process's bound workspace and tab).
ROOT_DOMAINS: tuple[str, ...] = (
    "tooldeck.tools.files",
    "tooldeck.tools.git",
    "tooldeck.tools.edits",
    "tooldeck.tools.search",
    "tooldeck.tools.structure",
    "tooldeck.tools.web",
    "tooldeck.tools.shell",
    "tooldeck.tools.index",
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
        "markdown_search",
        "query_vector_db",
        "pydoc_search",
    ),
}


def canonical_name(name: str) -> str:
    return ALIASES.get(name, name)


def build_tools(rt: Runtime, domains: Iterable[str] = DOMAINS) -> list[Tool]:
    # agent sessions run with the whole catalog whatever the host's profile (tooldeck.agents.manager),
    # or, on a named workspace, with the root domains over a runtime of that workspace's roots
    rt.provide("catalog_tools", lambda: build_tools(rt))
    rt.provide("root_tools", lambda child: build_tools(child, ROOT_DOMAINS))
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


def tool_timeout() -> float:
    """The per-call timeout hosts use: ``TOOLDECK_TOOL_TIMEOUT`` seconds, else
    :data:`~tooldeck.core.toolbox.DEFAULT_TIMEOUT` (every call ends)."""
    raw = os.environ.get("TOOLDECK_TOOL_TIMEOUT", "")
    try:
        value = float(raw) if raw else DEFAULT_TIMEOUT
    except ValueError:
        value = DEFAULT_TIMEOUT
    return value if value > 0 else DEFAULT_TIMEOUT


class CatalogToolbox(Toolbox):
    """The catalog's Toolbox: its tools follow the workspace.

    Some tools describe the roots when built (read_file's description and its
    ``root`` enum). After a switch or a folder change they are rebuilt, and
    :attr:`generation` counts the changes so a host can tell its client (MCP
    ``notifications/tools/list_changed``). :attr:`runtime` lets a host attach
    what only it can offer (``rt.ask_person``)."""

    def __init__(self, rt: Runtime, profile: str | None, tools: list[Tool], **kwargs: Any) -> None:
        super().__init__(tools, **kwargs)
        self.runtime = rt
        self.profile = profile
        self.generation = 0
        rt.on_workspace_change(self._rebuild)

    def _rebuild(self, _workspace: object) -> None:
        fresh = select_profile(build_tools(self.runtime), self.profile)
        for t in fresh:
            if t.name in self._tools:
                self._tools[t.name] = t  # one dict store: a concurrent lookup sees the old or the new tool
        self.generation += 1


def build_toolbox(rt: Runtime, profile: str | None = None, **kwargs: Any) -> CatalogToolbox:
    tools = select_profile(build_tools(rt), profile)
    kwargs.setdefault("timeout", tool_timeout())
    return CatalogToolbox(rt, profile, tools, budget_tokens=rt.budget_tokens, count_tokens=rt.count_tokens, **kwargs)
