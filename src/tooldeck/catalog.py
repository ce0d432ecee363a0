"""The catalog: every built-in tool domain assembled into one Toolbox.

Hosts (MCP server, CLI, ChatMD runner) call :func:`build_toolbox`. A profile
limits which tools are advertised (keeping schema cost small); ChatMD
declaration aliases (``read_dir``, ``get_contents``) map to model-visible names.
"""

from __future__ import annotations

import contextlib
import importlib
import os
import threading
from collections.abc import Iterable, Iterator
from typing import Any

from tooldeck.config import load_config
from tooldeck.core.tool import Tool
from tooldeck.core.toolbox import DEFAULT_TIMEOUT, Toolbox
from tooldeck.profiles import ALIASES as ALIASES  # re-exported: the catalog's names, decided in profiles.py
from tooldeck.profiles import PROFILES as PROFILES
from tooldeck.profiles import ToolSwitches as ToolSwitches
from tooldeck.profiles import canonical_name as canonical_name
from tooldeck.profiles import select_profile as select_profile
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


class _Shared:
    """Each domain's tools built once at a server's start, whichever asks
    first: the whole catalog, the domain of an early call, the live shell
    tools of a cold ``tools/list``. Forgotten when the workspace changes
    (tools describe the roots). Used under :data:`_TURNS` only."""

    def __init__(self, rt: Runtime) -> None:
        self._made: dict[str, list[Tool]] = {}
        rt.on_workspace_change(lambda _ws: self._made.clear())

    def get(self, rt: Runtime, module_name: str) -> list[Tool]:
        made = self._made.get(module_name)
        if made is None:
            made = self._made[module_name] = importlib.import_module(module_name).tools(rt)
        return made

    def one(self, rt: Runtime, module_name: str, name: str) -> Tool | None:
        """``name`` alone when its domain can build it so (a domain's
        ``build_alone(rt, name)``) and is not built yet; else from the domain."""
        if module_name not in self._made:
            alone = getattr(importlib.import_module(module_name), "build_alone", None)
            made = alone(rt, name) if alone is not None else None
            if made is not None:
                return made  # type: ignore[no-any-return]
        return next((t for t in self.get(rt, module_name) if t.name == name), None)


def build_tools(
    rt: Runtime,
    domains: Iterable[str] = DOMAINS,
    origin: dict[str, str] | None = None,
    urgent: bool = False,
    shared: bool = False,
) -> list[Tool]:
    """Every tool of ``domains``; ``origin`` (when given) receives each tool's
    domain module; ``urgent``: before the domains other threads wait to build;
    ``shared``: a domain another ``shared`` build made already is not built
    again (a server's start, :class:`_Shared`)."""
    # agent sessions run with the whole catalog whatever the host's profile (tooldeck.agents.manager),
    # less the tools the person switched off (build_toolbox); on a named workspace, the root domains
    # over a runtime of that workspace's roots (switched-off tools stay off there too)
    rt.provide("catalog_tools", lambda: [t for t in build_tools(rt) if t.name not in _switched_off(rt)])
    rt.provide("root_tools", lambda child: [t for t in build_tools(child, ROOT_DOMAINS)
                                            if t.name not in _switched_off(rt)])  # fmt: skip
    tools: list[Tool] = []
    for module_name in domains:
        with _TURNS.turn(urgent):
            if shared:
                made = rt.service("catalog.shared", _Shared).get(rt, module_name)
            else:
                made = importlib.import_module(module_name).tools(rt)
        if origin is not None:
            origin.update((t.name, module_name) for t in made)
        tools.extend(made)
    return tools


DISABLED_KEY = "tools.disabled"  # in rt.settings: the tools the person switched off


def _switched_off(rt: Runtime) -> frozenset[str]:
    return frozenset(rt.settings.get(DISABLED_KEY) or ())


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
    rt: Runtime,
    profile: str | None = None,
    switches: ToolSwitches | None = None,
    shared: bool = False,
    **kwargs: Any,
) -> CatalogToolbox:
    """The catalog for a host: the profile's tools, then the person's ``switches``
    (unknown names raise ValueError naming the nearest tool); ``shared``: see
    :func:`build_tools`."""
    origin: dict[str, str] = {}
    every = build_tools(rt, origin=origin, shared=shared)
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


def build_domain_toolbox(rt: Runtime, domain: str, profile: str | None = None, name: str | None = None) -> Toolbox:
    """The tools of one domain module as :func:`build_toolbox` would serve them
    (same profile, no switches: the early front runs a tool of it only when
    the list it serves, which the switches shaped, has that tool); with
    ``name``, only that tool when its domain can build it alone (files:
    ``read_file``, ``read_directory``, ``get_file_tree``). For a server that
    must answer a first call before the whole catalog is imported
    (:mod:`tooldeck.mcp.early`); its runtime and the domain's tools are shared
    with the whole catalog's build."""
    if domain not in DOMAINS:
        raise ValueError(f"{domain!r} is no catalog domain")
    provide_selection(rt)
    if name is not None:
        with _TURNS.turn(urgent=True):
            one = rt.service("catalog.shared", _Shared).one(rt, domain, name)
        tools = [one] if one is not None else []
    else:
        tools = build_tools(rt, (domain,), urgent=True, shared=True)
    return Toolbox(
        select_profile(tools, profile),
        budget_tokens=rt.budget_tokens,
        count_tokens=rt.count_tokens,
        timeout=tool_timeout(),
    )


def build_domain(rt: Runtime, domain: str) -> list[Tool]:
    """The tools of one domain module over ``rt``, as the whole catalog's
    build makes them (a process that runs a few declared tools imports only
    their domains: ChatMD's built-ins)."""
    provide_selection(rt)
    return build_tools(rt, (domain,))


def provide_selection(rt: Runtime) -> None:
    """Publish the selection as the selection domain's build does, for a
    build of other domains alone: the tree's ``*`` marker and the
    ``scope=selected`` of get_code_structure and git read the stored
    selection whichever domains a process built (the selection domain's own
    build publishes the same function over the same service)."""
    if rt.provider("selected_paths") is not None:
        return

    def selected_paths() -> list[str]:
        from tooldeck.selection.service import selection_service  # lazy: the store's selection only when asked

        return selection_service(rt).selected_paths()

    rt.provide("selected_paths", selected_paths)


def config_switches(rt: Runtime) -> ToolSwitches:
    """The ``[tools]`` switches of the person's config and the project's
    ``.tooldeck.toml`` (which may only disable); raises ValueError for a
    malformed user file or table."""
    return ToolSwitches.from_config(load_config(rt.workspace.primary.path, state_dir=rt.state_dir).section("tools"))
