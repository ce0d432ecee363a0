"""The catalog: every built-in tool domain assembled into one Toolbox.

Hosts (MCP server, CLI, ChatMD runner) call :func:`build_toolbox`. A profile
limits which tools are advertised (keeping schema cost small); ChatMD
declaration aliases (``read_dir``, ``get_contents``) map to model-visible names.
"""

from __future__ import annotations

import contextlib
import difflib
import importlib
import os
import threading
from collections.abc import Iterable, Iterator, Mapping
from dataclasses import dataclass
from typing import Any

from tooldeck.config import load_config
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


class _Turns:
    """One domain is imported and built at a time, whichever thread asks: two
    threads importing the same cycle of modules at once can see one half
    initialised (a server builds one domain for an early call while the whole
    catalog builds). A single-domain build (``urgent``) goes before the next
    domain of a whole-catalog build; a thread already in a turn goes on."""

    def __init__(self) -> None:
        self._cond = threading.Condition()
        self._owner: int | None = None
        self._urgent = 0

    @contextlib.contextmanager
    def turn(self, urgent: bool = False) -> Iterator[None]:
        me = threading.get_ident()
        if self._owner == me:
            yield
            return
        with self._cond:
            self._urgent += urgent
            while self._owner is not None or (not urgent and self._urgent):
                self._cond.wait()
            self._urgent -= urgent
            self._owner = me
        try:
            yield
        finally:
            with self._cond:
                self._owner = None
                self._cond.notify_all()


_TURNS = _Turns()

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


def build_tools(
    rt: Runtime, domains: Iterable[str] = DOMAINS, origin: dict[str, str] | None = None, urgent: bool = False
) -> list[Tool]:
    """Every tool of ``domains``; ``origin`` (when given) receives each tool's
    domain module; ``urgent``: before the domains other threads wait to build."""
    # agent sessions run with the whole catalog whatever the host's profile (tooldeck.agents.manager),
    # less the tools the person switched off (build_toolbox); on a named workspace, the root domains
    # over a runtime of that workspace's roots (switched-off tools stay off there too)
    rt.provide("catalog_tools", lambda: [t for t in build_tools(rt) if t.name not in _switched_off(rt)])
    rt.provide("root_tools", lambda child: [t for t in build_tools(child, ROOT_DOMAINS)
                                            if t.name not in _switched_off(rt)])  # fmt: skip
    tools: list[Tool] = []
    for module_name in domains:
        with _TURNS.turn(urgent):
            module = importlib.import_module(module_name)
            made = module.tools(rt)
        if origin is not None:
            origin.update((t.name, module_name) for t in made)
        tools.extend(made)
    return tools


DISABLED_KEY = "tools.disabled"  # in rt.settings: the tools the person switched off


def _switched_off(rt: Runtime) -> frozenset[str]:
    return frozenset(rt.settings.get(DISABLED_KEY) or ())


def select_profile(tools: list[Tool], profile: str | None) -> list[Tool]:
    if profile is None or profile == "full":
        return tools
    if profile not in PROFILES:
        raise ValueError(f"unknown profile {profile!r}; choose one of {', '.join(PROFILES)}")
    allowed = PROFILES[profile]
    return [t for t in tools if allowed is None or t.name in allowed]


@dataclass(frozen=True)
class ToolSwitches:
    """Single tools switched on or off by the person (RepoPrompt's per-tool
    MCP settings, Serena's ``excluded_tools``).

    ``enabled`` (``serve --tools a,b``, ``[tools] enabled`` in the person's
    own config): the tools served, instead of the whole catalog, or beside
    the tools of an explicit ``--profile``. ``disabled`` (``--exclude-tools``,
    ``[tools] disabled`` in the user config or in a project's
    ``.tooldeck.toml``, which may only narrow: :mod:`tooldeck.config_authority`)
    is taken out of whatever is served, and out of the catalog agent sessions
    run with. Names are the model-visible ones (ChatMD aliases accepted)."""

    enabled: tuple[str, ...] | None = None
    disabled: tuple[str, ...] = ()

    def over(self, base: ToolSwitches) -> ToolSwitches:
        """These switches (the command line) over ``base`` (the config files):
        an ``enabled`` list replaces the base's; disabled tools add up."""
        enabled = self.enabled if self.enabled is not None else base.enabled
        return ToolSwitches(enabled, tuple(dict.fromkeys((*base.disabled, *self.disabled))))

    def unknown(self, known: Iterable[str]) -> list[str]:
        """Names that are no tool, each with the nearest tool name when there is one."""
        names = set(known)
        out = []
        for name in (*(self.enabled or ()), *self.disabled):
            name = canonical_name(name)
            if name not in names:
                near = difflib.get_close_matches(name, sorted(names), n=1)
                out.append(f"{name!r}" + (f" (did you mean {near[0]!r}?)" if near else ""))
        return out

    def apply(self, tools: list[Tool], chosen: list[Tool], profile: str | None) -> list[Tool]:
        """``chosen`` (the profile's tools out of ``tools``) switched."""
        keep = {t.name for t in chosen}
        if self.enabled is not None:
            wanted = {canonical_name(n) for n in self.enabled}
            keep = (keep | wanted) if profile is not None else wanted
        keep -= {canonical_name(n) for n in self.disabled}
        return [t for t in tools if t.name in keep]

    @classmethod
    def from_config(cls, section: Mapping[str, Any]) -> ToolSwitches:
        """From a ``[tools]`` table: a list of names, or one comma-separated string."""

        def names(value: Any) -> tuple[str, ...]:
            if isinstance(value, str):
                value = value.split(",")
            if not isinstance(value, list):
                raise ValueError(f"[tools]: expected a list of tool names, got {value!r}")
            return tuple(str(v).strip() for v in value if str(v).strip())

        enabled = names(section["enabled"]) if "enabled" in section else None
        return cls(enabled, names(section["disabled"]) if "disabled" in section else ())

    @classmethod
    def parse(cls, enabled: str | None, disabled: str | None) -> ToolSwitches:
        """From ``--tools a,b`` and ``--exclude-tools c`` (None: not given)."""
        split = lambda v: tuple(n.strip() for n in v.split(",") if n.strip())  # noqa: E731
        return cls(split(enabled) if enabled is not None else None, split(disabled) if disabled else ())


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

    def __init__(
        self, rt: Runtime, profile: str | None, tools: list[Tool], switches: ToolSwitches | None = None, **kwargs: Any
    ) -> None:
        super().__init__(tools, **kwargs)
        self.runtime = rt
        self.profile = profile
        self.switches = switches or ToolSwitches()
        self.generation = 0
        self.origin: dict[str, str] = {}  # tool name -> its domain module
        rt.on_workspace_change(self._rebuild)

    def _rebuild(self, _workspace: object) -> None:
        every = build_tools(self.runtime)
        fresh = self.switches.apply(every, select_profile(every, self.profile), self.profile)
        for t in fresh:
            if t.name in self._tools:
                self._tools[t.name] = t  # one dict store: a concurrent lookup sees the old or the new tool
        self.generation += 1


def build_toolbox(
    rt: Runtime, profile: str | None = None, switches: ToolSwitches | None = None, **kwargs: Any
) -> CatalogToolbox:
    """The catalog for a host: the profile's tools, then the person's ``switches``
    (unknown names raise ValueError naming the nearest tool)."""
    origin: dict[str, str] = {}
    every = build_tools(rt, origin=origin)
    switches = switches or ToolSwitches()
    unknown = switches.unknown(t.name for t in every)
    if unknown:
        raise ValueError(f"no tool named {', '.join(unknown)}; `tooldeck tools` lists the catalog")
    tools = switches.apply(every, select_profile(every, profile), profile)
    if switches.disabled:  # a tool the person switched off is off for agent sessions too
        rt.settings[DISABLED_KEY] = _switched_off(rt) | {canonical_name(n) for n in switches.disabled}
    kwargs.setdefault("timeout", tool_timeout())
    box = CatalogToolbox(
        rt, profile, tools, switches, budget_tokens=rt.budget_tokens, count_tokens=rt.count_tokens, **kwargs
    )
    box.origin = origin
    return box


def build_domain_toolbox(rt: Runtime, domain: str, profile: str | None = None) -> Toolbox:
    """The tools of one domain module as :func:`build_toolbox` would serve them
    (same profile, no switches: a host with switches builds the whole catalog
    first). For a server that must answer a first call before the whole
    catalog is imported (:mod:`tooldeck.mcp.early`); its runtime is shared."""
    if domain not in DOMAINS:
        raise ValueError(f"{domain!r} is no catalog domain")
    tools = select_profile(build_tools(rt, (domain,), urgent=True), profile)
    return Toolbox(tools, budget_tokens=rt.budget_tokens, count_tokens=rt.count_tokens, timeout=tool_timeout())


def config_switches(rt: Runtime) -> ToolSwitches:
    """The ``[tools]`` switches of the person's config and the project's
    ``.tooldeck.toml`` (which may only disable); raises ValueError for a
    malformed user file or table."""
    return ToolSwitches.from_config(load_config(rt.workspace.primary.path, state_dir=rt.state_dir).section("tools"))
