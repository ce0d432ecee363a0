"""``<tool>`` declarations -> the Toolbox a conversation offers the model.

Only declared tools are offered. Every declaration is checked here, at load
time, before any model call: an unknown built-in, a ``<tool>`` mixing
``command=``/``agent=``/``mcp_server=``, a missing ``<read>`` root, two tools
with one name are ChatMD errors naming the line and column.

Built-ins come from the catalog by their declaration name (``read_dir`` and
``get_contents`` are aliases, seed 000). A built-in with nested ``<read id
path description/>`` elements gets its own roots: a Runtime whose
workspace is exactly those directories, so the tool's description lists
each root (id, absolute path, description) and its ``root`` enum holds
exactly their ids; the ``<tool description>`` is appended after them.

Authority (:mod:`tooldeck.chatmd.grants`): an MCP mount, a shell runtime
beyond the built-in ones (and the shell tools on it), a ``<read>`` root,
``agent=`` prompt or script outside the roots are honoured only from a file
with authority; otherwise the load stops with the refusal's notice before
anything is started or read.
"""

from __future__ import annotations

import os
import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from tooldeck.catalog import DOMAINS, build_domain, build_tools, canonical_name
from tooldeck.chatmd import asks, external
from tooldeck.chatmd.agents import Prepare, agent_tool, fork_tool
from tooldeck.chatmd.document import Document
from tooldeck.chatmd.grants import Grants
from tooldeck.chatmd.paths import PathVars
from tooldeck.core.tool import NAME_RE, Tool
from tooldeck.core.toolbox import Toolbox
from tooldeck.markup.element import ChatmdError, Element
from tooldeck.runtime import Runtime
from tooldeck.tool_manifest import domain_of
from tooldeck.workspace.roots import Root, Workspace, make_root

KINDS = ("command", "agent", "mcp_server")
BUILTIN_ATTRS = frozenset({"name", "description", "namespace", "strict"})
AGENT_ATTRS = frozenset({"name", "agent", "local", "description", "namespace"})
_ROOT_ID_RE = re.compile(r"^[A-Za-z0-9_.-]{1,64}$")


@dataclass
class LoadContext:
    """What declarations resolve against: the launch runtime, path variables, nesting depth."""

    rt: Runtime
    vars: PathVars
    prompt: Path | None = None
    depth: int = 0
    grants: Grants = field(default_factory=Grants)
    prepare: Prepare | None = None  # how an agent tool makes its prompt ready: the session's own
    _catalogs: dict[int, dict[str, Tool]] = field(default_factory=dict)
    _domains: dict[tuple[int, str], dict[str, Tool]] = field(default_factory=dict)

    @classmethod
    def for_document(cls, doc: Document, rt: Runtime, *, depth: int = 0, prepare: Prepare | None = None) -> LoadContext:
        """``prepare``: what an agent tool runs its prompt with (``session.prepare``
        hands itself in); without it, a document declaring an agent is an error."""
        if doc.grants.workspace is None:  # loaded without roots: its declarations are judged against rt's
            doc.grants.workspace = lambda: rt.workspace
        launch = Path(rt.workspace.primary.path)
        vars = PathVars.for_prompt(doc.path, rt.state_dir, launch_dir=launch)
        return cls(rt, vars, doc.path, depth, doc.grants, prepare)

    @property
    def roots(self) -> list[str]:
        return [root.path for root in self.rt.workspace.roots]

    def catalog(self, rt: Runtime, *, with_workspaces: bool = True) -> dict[str, Tool]:
        """The built-in tools of ``rt`` by model-visible name (built once per runtime)."""
        cached = self._catalogs.get(id(rt))
        if cached is None:
            domains = _domains(with_workspaces)
            cached = self._catalogs[id(rt)] = {t.name: t for t in build_tools(rt, domains)}
        return cached

    def builtin(self, rt: Runtime, name: str, *, with_workspaces: bool = True) -> Tool | None:
        """The built-in ``name`` of ``rt``, building only the domain the shipped
        declarations name for it (a prompt declares a few tools; importing every
        domain cost ~0.2 s of CPU a run). A name they do not hold, or one its
        domain does not build (a ``[shell]`` table's tools replace the default
        one), is looked up in the whole catalog, whose answer is the same."""
        domain = domain_of(name)
        if domain is None or domain not in _domains(with_workspaces) or id(rt) in self._catalogs:
            return self.catalog(rt, with_workspaces=with_workspaces).get(name)
        key = (id(rt), domain)
        made = self._domains.get(key)
        if made is None:
            made = self._domains[key] = {t.name: t for t in build_domain(rt, domain)}
        return made.get(name) or self.catalog(rt, with_workspaces=with_workspaces).get(name)


def _domains(with_workspaces: bool) -> tuple[str, ...]:
    return DOMAINS if with_workspaces else tuple(d for d in DOMAINS if not d.endswith(".workspaces"))


def build_toolbox(doc: Document, ctx: LoadContext) -> Toolbox:
    """The declared tools of ``doc``. Raises ChatmdError for any bad declaration."""
    tools: list[Tool] = []
    seen: dict[str, Element] = {}
    decls = doc.of("tool")
    runtimes: dict[str, Any] | None = None
    widened: set[str] = set()
    for el in decls:
        if el.get("type") == "shell" or el.has("command"):
            _only_one_kind(el)
            if runtimes is None:
                runtimes = _shell_runtimes(doc, ctx, widened)
            _check_shell_tool(el, ctx, widened)
            made = [external.shell_tool(el, runtimes, ctx.rt, vars=ctx.vars)]
        else:
            made = tools_of(el, ctx)
        for t in made:
            t = _namespaced(t, el)
            if t.name in seen:
                first = seen[t.name].pos
                raise ChatmdError(el.pos, f"a tool named {t.name!r} is already declared at {first}")
            seen[t.name] = el
            tools.append(t)
    if runtimes is None and doc.of("shell_access"):
        _shell_runtimes(doc, ctx, widened)  # validate them anyway
    return Toolbox(tools, budget_tokens=ctx.rt.budget_tokens, count_tokens=ctx.rt.count_tokens)


def _shell_runtimes(doc: Document, ctx: LoadContext, widened: set[str]) -> dict[str, Any]:
    """The document's runtimes; one that widens the built-ins needs its file's authority."""
    from tooldeck.shell.widening import widening  # lazy: the shell package, only for a file that declares a shell

    def check(el: Element, runtime: Any) -> None:
        wide = widening(runtime, ctx.roots)
        if wide:
            ctx.grants.require(asks.runtime(el, wide))
            widened.add(el.get("id") or runtime.id)

    return external.shell_runtimes(doc.of("shell_access"), ctx.rt, vars=ctx.vars, check=check)


def _check_shell_tool(el: Element, ctx: LoadContext, widened: set[str]) -> None:
    """A shell tool on a runtime that needed authority needs it too (a model
    adding ``mode=raw`` on the person's runtime); so does a script outside the roots."""
    rid = el.get("runtime") or asks.DEFAULT_SHELL_RUNTIME
    if rid in widened:
        ctx.grants.require(asks.shell_tool(el, rid))
    for script in el.elements("script"):
        if script.get("path"):
            target = asks.source_dir(el, ctx.vars) / (script.get("path") or "")
            if ctx.grants.inside(target) is None:
                ctx.grants.require(asks.path(script, "path", os.path.realpath(target)))


def _only_one_kind(el: Element) -> None:
    given = [k for k in KINDS if el.has(k)]
    if len(given) > 1:
        raise ChatmdError(el.pos, f"<tool> takes one of command=, agent= or mcp_server=, not {' and '.join(given)}")


def tools_of(el: Element, ctx: LoadContext) -> list[Tool]:
    """A non-shell ``<tool>``: an agent, an MCP mount or a built-in."""
    _only_one_kind(el)
    if el.has("agent"):
        _known_attrs(el, AGENT_ATTRS, "an agent tool")
        return [agent_from_element(el, ctx)]
    if el.has("mcp_server"):
        ctx.grants.require(asks.mcp(el))  # before anything is started or connected to
        return external.mcp_tools(el, ctx.rt, vars=ctx.vars)
    return [builtin(el, ctx)]


def agent_from_element(el: Element, ctx: LoadContext) -> Tool:
    """``<tool name="triage" agent="prompts/triage.chatmd" local/>`` (relative to the prompt directory)."""
    name, src = el.get("name"), el.get("agent")
    if not name:
        raise ChatmdError(el.pos, '<tool agent=...> needs name="..." (the tool name the model calls)')
    if not src:
        raise ChatmdError(el.pos, '<tool agent=""> names no prompt file')
    if "://" in src:
        raise ChatmdError(el.pos, f"agent {src!r}: only local prompt files are supported (add `local`)")
    path = asks.agent_path(el, ctx.vars)
    outside = ctx.grants.inside(path) is None
    if outside:  # before saying whether it exists
        ctx.grants.require(asks.path(el, "agent", os.path.realpath(path)))
    if not path.is_file():
        raise ChatmdError(el.pos, f"agent prompt {src!r} not found (looked for {path})")
    if ctx.prepare is None:
        raise ChatmdError(el.pos, f"agent {name!r}: agent tools run only in a ChatMD session (none was given)")
    desc = el.get("description")
    return agent_tool(
        path, ctx.rt, name=name, prepare=ctx.prepare, description=desc, depth=ctx.depth, read_outside=outside
    )


def builtin(el: Element, ctx: LoadContext) -> Tool:
    name = el.get("name")
    if not name:
        raise ChatmdError(el.pos, '<tool> needs name="..." (a built-in), or command=, agent= or mcp_server=')
    _known_attrs(el, BUILTIN_ATTRS, "a built-in")
    description = el.get("description")
    if name == "fork":
        return fork_tool(description=description)
    visible = canonical_name(name)
    reads = el.elements("read")
    rt = roots_runtime(reads, ctx, tool=el) if reads else ctx.rt
    base = ctx.builtin(rt, visible, with_workspaces=not reads)
    if base is None:
        known = ", ".join(sorted({*ctx.catalog(rt, with_workspaces=not reads), "fork", "read_dir", "get_contents"}))
        raise ChatmdError(el.pos, f"unknown built-in tool {name!r}; built-ins: {known}")
    unknown = [c.tag for c in el.elements() if c.tag != "read"]
    if unknown:
        raise ChatmdError(el.pos, f"<tool name={name!r}> takes only <read/> elements inside, not <{unknown[0]}>")
    if description:
        return base.with_name(base.name, base.description.rstrip() + "\n\n" + description)
    return base


def _known_attrs(el: Element, allowed: frozenset[str], what: str) -> None:
    """A misspelt attribute (``agnet=``) is an error, not silently a different tool."""
    unknown = sorted(set(el.attrs) - allowed)
    if unknown:
        raise ChatmdError(el.pos, f"<tool> for {what} takes {', '.join(sorted(allowed))}; not {unknown[0]!r}")


def roots_runtime(reads: list[Element], ctx: LoadContext, *, tool: Element | None = None) -> Runtime:
    """A Runtime whose workspace is exactly the ``<read>`` roots (missing dir =
    error); a root outside the workspace's roots needs its file's authority
    (checked on the directory the root ends up with, links resolved)."""
    roots: list[Root] = []
    for r in reads:
        rid, path = r.get("id"), r.get("path")
        if not rid or not _ROOT_ID_RE.match(rid):
            raise ChatmdError(r.pos, '<read> needs id="..." (letters, digits, _ . -)')
        if any(x.id == rid for x in roots):
            raise ChatmdError(r.pos, f"root id {rid!r} is declared twice")
        if not path:
            raise ChatmdError(r.pos, f'<read id={rid!r}> needs path="..."')
        target = ctx.vars.expand(path, r)
        _root_allowed(ctx, tool or r, r, os.path.realpath(target))  # before saying whether it exists
        try:
            root = make_root(target, rid, r.get("description") or "")
        except FileNotFoundError as exc:
            raise ChatmdError(r.pos, f"root {rid!r}: {target} does not exist or is not a directory") from exc
        owner = _root_allowed(ctx, tool or r, r, root.path)  # and on the directory the root ends up with
        if owner is not None and owner.read_only:  # a root inside a read-only root stays read-only
            root = Root(root.id, root.path, root.description, read_only=True)
        roots.append(root)
    return Runtime(
        Workspace(roots, name="chatmd"),
        state_dir=ctx.rt.state_dir,
        budget_tokens=ctx.rt.budget_tokens,
        settings=ctx.rt.settings,
    )


def _root_allowed(ctx: LoadContext, tool: Element, read: Element, real: str) -> Root | None:
    """The workspace root holding ``real``; None (after the authority check) when outside them."""
    owner = ctx.grants.root_of(real)
    if owner is None:
        ctx.grants.require(asks.read_root(tool, read, real))
    return owner


def _namespaced(t: Tool, el: Element) -> Tool:
    ns = el.get("namespace")
    if not ns:
        return t
    name = f"{ns}_{t.name}"
    if not NAME_RE.match(name):
        raise ChatmdError(el.pos, f"namespaced tool name {name!r} is not a valid tool name (at most 64 characters)")
    return t.with_name(name)
