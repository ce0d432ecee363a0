"""ChatMD declarations: ``<shell_access>`` runtimes and ``<tool type="shell">`` tools.

Each element is turned into the same mapping a TOML table gives (see
:mod:`tooldeck.shell.declare` and :mod:`tooldeck.shell.spec`) while the
position of every attribute and child is remembered, so an error names the
line and column of the culprit. Unknown children and attributes fail closed.

Vocabulary (docs/shell.md has examples)::

    <shell_access id extends cwd pipefail>
      <policy default="allow|ask|deny" raw="allow|deny">
        <rule id action program basename path prefix contains regex/>
      </policy>
      <limits wall idle output stdin processes/>
      <environment inherit path><set name value/></environment>
      <secrets env patterns><secret env/><secret pattern/></secrets>   (one regex per <secret pattern>)
      <sandbox mode network read write child_processes system_paths/>
      <hooks><hook event="before|after" command id/></hooks>
    </shell_access>

    <tool name type="shell" mode runtime description rationale stdin result cwd>
      <command program><arg value/></command>          fixed
      <arguments mode="none|append"/>                  fixed, script
      <interpreter program><arg value/></interpreter>  raw (and optionally script)
      <script path sha256/>                            script
    </tool>

    <tool name command description runtime/>            legacy: a fixed tool
"""

from __future__ import annotations

import os
from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING, Any, NoReturn

from tooldeck.markup.element import ChatmdError, Element, Position
from tooldeck.shell.chain import ChainSyntaxError, parse_chain
from tooldeck.shell.declare import as_list, build_runtime
from tooldeck.shell.profiles import BUILTIN, ShellRuntime
from tooldeck.shell.spec import ShellToolSpec, build_tool_spec
from tooldeck.shell.tool_factory import make_tool

if TYPE_CHECKING:
    from tooldeck.core.tool import Tool
    from tooldeck.shell.service import ShellService

RUNTIME_ATTRS = frozenset({"id", "extends", "cwd", "pipefail"})
SECTION_ATTRS: dict[str, frozenset[str]] = {
    "policy": frozenset({"default", "raw"}),
    "limits": frozenset({"wall", "idle", "output", "stdin", "processes"}),
    "environment": frozenset({"inherit", "path"}),
    "secrets": frozenset({"env", "patterns"}),
    "sandbox": frozenset({"mode", "network", "read", "write", "child_processes", "system_paths"}),
}
SECTION_CHILDREN: dict[str, tuple[str, frozenset[str]]] = {
    "policy": ("rule", frozenset({"id", "action", "program", "basename", "path", "prefix", "contains", "regex"})),
    "environment": ("set", frozenset({"name", "value"})),
    "secrets": ("secret", frozenset({"env", "pattern"})),
}
TOOL_ATTRS = frozenset({"name", "type", "mode", "runtime", "description", "rationale", "stdin", "result", "cwd"})
TOOL_CHILDREN = frozenset({"command", "arguments", "interpreter", "script"})


class _Where:
    """Positions of the mapping's keys, for errors that name line and column."""

    def __init__(self, root: Element) -> None:
        self.root = root
        self.pos: dict[str, Position] = {}

    def fail(self, message: str, key: str) -> NoReturn:
        probe = key
        while probe and probe not in self.pos:
            probe = probe.rpartition(".")[0]
        raise ChatmdError(self.pos.get(probe, self.root.pos), f"<{self.root.tag}>: {message}")


def _elements(el: Element, allowed: frozenset[str] | set[str], where: _Where) -> list[Element]:
    out: list[Element] = []
    for child in el.children:
        if isinstance(child, str):
            if child.strip():
                raise ChatmdError(el.pos, f"<{el.tag}>: unexpected text {child.strip()[:40]!r}; use child elements")
            continue
        if child.tag not in allowed:
            known = ", ".join(f"<{t}>" for t in sorted(allowed)) or "none"
            raise ChatmdError(child.pos, f"<{el.tag}>: unknown child <{child.tag}> (allowed: {known})")
        out.append(child)
    return out


def _attrs(el: Element, allowed: frozenset[str], where: _Where, prefix: str) -> dict[str, Any]:
    for name in el.attrs:
        if name not in allowed:
            raise ChatmdError(el.pos, f"<{el.tag}>: unknown attribute {name!r} (allowed: {', '.join(sorted(allowed))})")
    for name in el.attrs:
        where.pos[f"{prefix}{name}"] = el.pos
    return dict(el.attrs)


def _section(el: Element, where: _Where) -> dict[str, Any]:
    where.pos[el.tag] = el.pos
    data = _attrs(el, SECTION_ATTRS[el.tag], where, f"{el.tag}.")
    child_tag, child_attrs = SECTION_CHILDREN.get(el.tag, ("", frozenset()))
    children = _elements(el, {child_tag} if child_tag else set(), where)
    if el.tag == "policy" and children:
        data["rules"] = []
        for i, child in enumerate(children):
            where.pos[f"policy.rules[{i}]"] = child.pos
            data["rules"].append(_attrs(child, child_attrs, where, f"policy.rules[{i}]."))
    elif el.tag == "environment" and children:
        data["set"] = {}
        for child in children:
            attrs = _attrs(child, child_attrs, where, "environment.")
            if not attrs.get("name"):
                raise ChatmdError(child.pos, "<set>: name is required")
            data["set"][attrs["name"]] = attrs.get("value") or ""
    elif el.tag == "secrets":
        _secret_lists(data, children, child_attrs, where)
    return data


def _secret_lists(data: dict[str, Any], children: list[Element], allowed: frozenset[str], where: _Where) -> None:
    """``<secrets>`` as the lists a TOML ``[secrets]`` table gives: each
    ``<secret pattern>`` is one regular expression, exactly as written (commas
    and spaces belong to it: ``sk-[A-Za-z0-9]{20,}``). The ``patterns``
    attribute holds several, separated by whitespace only; ``env`` names are
    separated by commas or whitespace."""
    env = list(as_list(data["env"], "secrets.env", where.fail)) if "env" in data else []
    patterns = data["patterns"].split() if isinstance(data.get("patterns"), str) else []
    for child in children:
        attrs = _attrs(child, allowed, where, "secrets.")
        if attrs.get("env"):
            env.extend(as_list(attrs["env"], "secrets.env", where.fail))
        if attrs.get("pattern"):
            patterns.append(attrs["pattern"])
    for key, values in (("env", env), ("patterns", patterns)):
        if values or key in data:
            data[key] = values


def _hook_list(el: Element, where: _Where) -> list[dict[str, Any]]:
    _attrs(el, frozenset(), where, "hooks.")
    out: list[dict[str, Any]] = []
    for i, child in enumerate(_elements(el, {"hook"}, where)):
        where.pos[f"hooks[{i}]"] = child.pos
        out.append(_attrs(child, frozenset({"event", "command", "id"}), where, f"hooks[{i}]."))
    return out


def runtime_from_element(
    el: Element,
    *,
    base_dir: str | os.PathLike[str],
    roots: Sequence[str] = (),
    known: Mapping[str, ShellRuntime] | None = None,
) -> ShellRuntime:
    """A ``<shell_access>`` element → a runtime. ``known`` holds runtimes
    declared earlier in the document (it may extend them); explicit write
    paths must lie inside ``roots`` when roots are given."""
    if el.tag != "shell_access":
        raise ChatmdError(el.pos, f"expected <shell_access>, got <{el.tag}>")
    where = _Where(el)
    data = _attrs(el, RUNTIME_ATTRS, where, "")
    rid = data.pop("id", None)
    if not rid:
        raise ChatmdError(el.pos, "<shell_access>: id is required")
    for child in _elements(el, {*SECTION_ATTRS, "hooks"}, where):
        if child.tag in data:
            raise ChatmdError(child.pos, f"<shell_access>: <{child.tag}> given twice")
        data[child.tag] = _hook_list(child, where) if child.tag == "hooks" else _section(child, where)
    rt = build_runtime(rid, data, known=known or {}, base_dir=os.fspath(base_dir), origin=str(el.pos), fail=where.fail)
    real_roots = [os.path.realpath(r) for r in roots]
    for path in rt.sandbox.write:
        if path != "workspace" and real_roots and not any(_inside(path, r) for r in real_roots):
            where.fail(f"sandbox write path {path} is outside the workspace roots", "sandbox.write")
    return rt


def _inside(path: str, root: str) -> bool:
    return path == root or path.startswith(root.rstrip("/") + "/")


def _argv(el: Element, where: _Where) -> list[str]:
    _attrs(el, frozenset({"program"}), where, f"{el.tag}.")
    program = el.get("program")
    if not program:
        raise ChatmdError(el.pos, f"<{el.tag}>: program is required")
    argv = [program]
    for arg in _elements(el, {"arg"}, where):
        _attrs(arg, frozenset({"value"}), where, f"{el.tag}.")
        if arg.get("value") is None:
            raise ChatmdError(arg.pos, "<arg>: value is required")
        argv.append(arg.get("value") or "")
    return argv


def spec_from_element(el: Element, *, base_dir: str | os.PathLike[str]) -> ShellToolSpec:
    """A ``<tool type="shell">`` element → a tool spec (no runtime lookup yet)."""
    where = _Where(el)
    data = _attrs(el, TOOL_ATTRS, where, "")
    name = data.pop("name", None)
    if not name:
        raise ChatmdError(el.pos, "<tool>: name is required")
    if "rationale" in data and data["rationale"] is None:  # the bare flag: the model may give one
        data["rationale"] = "optional"
    for child in _elements(el, TOOL_CHILDREN, where):
        where.pos[child.tag] = child.pos
        if child.tag in ("command", "interpreter"):
            data[child.tag] = _argv(child, where)
        elif child.tag == "arguments":
            data["arguments"] = _attrs(child, frozenset({"mode"}), where, "arguments.").get("mode") or "append"
            where.pos["arguments"] = child.pos
        else:
            attrs = _attrs(child, frozenset({"path", "sha256"}), where, "script.")
            data["script"], data["sha256"] = attrs.get("path"), attrs.get("sha256")
            where.pos["sha256"] = child.pos
    return build_tool_spec(name, data, base_dir=os.fspath(base_dir), fail=where.fail)


def legacy_spec_from_element(el: Element) -> ShellToolSpec:
    """``<tool name command description runtime/>`` → a fixed tool whose
    model-supplied arguments are appended as literal argv."""
    where = _Where(el)
    _attrs(el, frozenset({"name", "command", "description", "runtime"}), where, "")
    command = el.get("command") or ""
    try:
        chain = parse_chain(command)
    except ChainSyntaxError as exc:
        raise ChatmdError(el.pos, f"<tool command>: {exc}") from exc
    if len(chain.steps) != 1 or len(chain.steps[0].pipeline) != 1:
        raise ChatmdError(el.pos, "<tool command>: give one program and its arguments (no |, ;, && or ||)")
    data = {
        "mode": "fixed",
        "command": chain.steps[0].pipeline[0],
        "arguments": "append",
        "description": el.get("description") or f"Run `{command}` with extra arguments.",
        "runtime": el.get("runtime") or "builtin:workspace-readonly@1",
    }
    return build_tool_spec(el.get("name") or "", data, base_dir=".", fail=where.fail)


def _runtime_for(spec: ShellToolSpec, runtimes: Mapping[str, ShellRuntime], pos: Position) -> ShellRuntime:
    rt = runtimes.get(spec.runtime) or BUILTIN.get(spec.runtime)
    if rt is None:
        known = ", ".join([*runtimes, *BUILTIN])
        raise ChatmdError(pos, f"<tool name={spec.name!r}>: runtime {spec.runtime!r} is not declared (known: {known})")
    return rt


def tool_from_element(
    el: Element,
    runtimes: Mapping[str, ShellRuntime],
    *,
    base_dir: str | os.PathLike[str],
    service: ShellService,
) -> Tool:
    """A ``<tool type="shell" ...>`` element → a Tool running under one of ``runtimes``."""
    spec = spec_from_element(el, base_dir=base_dir)
    return make_tool(spec, _runtime_for(spec, runtimes, el.pos), service)


def legacy_command_tool(
    el: Element, runtimes: Mapping[str, ShellRuntime] | None = None, *, service: ShellService
) -> Tool:
    """A legacy ``<tool name command/>`` element → a fixed shell Tool."""
    spec = legacy_spec_from_element(el)
    return make_tool(spec, _runtime_for(spec, runtimes or {}, el.pos), service)
