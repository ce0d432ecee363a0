"""Runtime declarations → :class:`ShellRuntime`, one builder for TOML and ChatMD.

Why one builder: a ``[shell.runtimes.dev]`` table and a ``<shell_access
id="dev">`` element describe the same thing, so both are turned into the same
plain mapping and checked by the same code. Anything unknown fails closed: a
misspelt ``netwrok = true`` must be an error, not a silently stricter (or
looser) sandbox. ``fail(message, key)`` lets each caller raise its own error
type with its own location (a TOML file name, a ChatMD line and column).
"""

from __future__ import annotations

import os
import re
import shlex
from collections.abc import Callable, Mapping
from dataclasses import replace
from typing import Any, NoReturn

from tooldeck.shell.profiles import (
    ACTIONS,
    BUILTIN,
    Environment,
    Hook,
    Limits,
    Policy,
    Rule,
    Sandbox,
    Secrets,
    ShellRuntime,
)

Fail = Callable[[str, str], NoReturn]

RUNTIME_KEYS = frozenset(
    {"extends", "cwd", "pipefail", "policy", "limits", "environment", "secrets", "sandbox", "hooks"}
)
HOOK_KEYS = frozenset({"event", "command", "id"})
POLICY_KEYS = frozenset({"default", "raw", "rules"})
RULE_KEYS = frozenset({"id", "action", "program", "basename", "path", "prefix", "contains", "regex"})
LIMIT_KEYS = frozenset({"wall", "idle", "output", "stdin", "processes"})
ENV_KEYS = frozenset({"inherit", "set", "path"})
SECRET_KEYS = frozenset({"env", "patterns"})
SANDBOX_KEYS = frozenset({"mode", "network", "read", "write", "child_processes", "system_paths"})
ID_RE = re.compile(r"^[A-Za-z0-9_.:@-]{1,64}$")
ENV_NAME_RE = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*$")
_UNITS = {"ms": 0.001, "s": 1.0, "m": 60.0, "h": 3600.0}
_SIZES = {"": 1, "b": 1, "kb": 1000, "k": 1000, "kib": 1024, "mb": 1_000_000, "m": 1_000_000, "mib": 1 << 20}


def _check_keys(data: Mapping[str, Any], allowed: frozenset[str], where: str, fail: Fail) -> None:
    for key in data:
        if key not in allowed:
            fail(f"unknown {where} setting {key!r} (known: {', '.join(sorted(allowed))})", f"{where}.{key}")


def as_list(value: Any, key: str, fail: Fail) -> tuple[str, ...]:
    """A TOML list, or a ChatMD string of comma- or space-separated words."""
    if isinstance(value, str):
        return tuple(w for w in re.split(r"[\s,]+", value) if w)
    if isinstance(value, list) and all(isinstance(v, str) for v in value):
        return tuple(value)
    fail(f"{key}: expected a list of strings", key)


def as_bool(value: Any, key: str, fail: Fail) -> bool:
    """A boolean: TOML's own, a ChatMD flag, or a ChatMD word (on/off, true/false,
    yes/no, exactly). No numbers or other words: a value that only looks truthy
    (``"1"``, ``"allow"``) is an error, never a wider sandbox."""
    if isinstance(value, bool):
        return value
    if value is None:  # a ChatMD flag attribute
        return True
    if value in ("true", "on", "yes"):
        return True
    if value in ("false", "off", "no"):
        return False
    fail(f"{key}: expected on/off (true/false), got {value!r}", key)


def as_seconds(value: Any, key: str, fail: Fail) -> float:
    if isinstance(value, int | float) and not isinstance(value, bool) and value > 0:
        return float(value)
    m = re.fullmatch(r"\s*(\d+(?:\.\d+)?)\s*(ms|s|m|h)?\s*", str(value))
    if m and float(m.group(1)) > 0:
        return float(m.group(1)) * _UNITS[m.group(2) or "s"]
    fail(f"{key}: expected a positive duration such as 30s, 500ms or 2m, got {value!r}", key)


def as_bytes(value: Any, key: str, fail: Fail) -> int:
    if isinstance(value, int) and not isinstance(value, bool) and value > 0:
        return value
    m = re.fullmatch(r"\s*(\d+)\s*([a-zA-Z]*)\s*", str(value))
    if m and m.group(2).lower() in _SIZES and int(m.group(1)) > 0:
        return int(m.group(1)) * _SIZES[m.group(2).lower()]
    fail(f"{key}: expected a positive size such as 65536, 64KB or 1MB, got {value!r}", key)


def _action(value: Any, key: str, fail: Fail, choices: tuple[str, ...] = ACTIONS) -> Any:
    if value not in choices:
        fail(f"{key}: expected one of {', '.join(choices)}, got {value!r}", key)
    return value


def _rule(data: Mapping[str, Any], index: int, fail: Fail) -> Rule:
    where = f"policy.rules[{index}]"
    _check_keys(data, RULE_KEYS, where, fail)
    rid = data.get("id")
    if not isinstance(rid, str) or not rid:
        fail(f"{where}: every rule needs an id", f"{where}.id")
    action = _action(data.get("action"), f"{where}.action", fail)
    prefix = as_list(data["prefix"], f"{where}.prefix", fail) if data.get("prefix") is not None else None
    regex = data.get("regex")
    if regex is not None:
        try:
            re.compile(str(regex))
        except re.error as exc:
            fail(f"{where}.regex: not a valid regular expression ({exc})", f"{where}.regex")
    matchers = {k: data.get(k) for k in ("program", "basename", "path", "contains")}
    if prefix is None and regex is None and not any(v for v in matchers.values()):
        fail(f"{where} ({rid}): give at least one matcher (program, basename, path, prefix, contains, regex)", where)
    given = {k: (str(v) if v else None) for k, v in matchers.items()}
    return Rule(id=rid, action=action, prefix=prefix, regex=regex, **given)


def _policy(base: Policy, data: Mapping[str, Any], fail: Fail) -> Policy:
    _check_keys(data, POLICY_KEYS, "policy", fail)
    default = _action(data.get("default", base.default), "policy.default", fail)
    raw = _action(data.get("raw", base.raw), "policy.raw", fail, ("allow", "deny"))
    rules = data.get("rules")
    if rules is None:
        return Policy(default, base.rules, raw)
    if not isinstance(rules, list) or not all(isinstance(r, Mapping) for r in rules):
        fail("policy.rules: expected a list of tables", "policy.rules")
    # declared rules come first; the profile's rules stay (deny > ask > allow decides, not order)
    return Policy(default, tuple(_rule(r, i, fail) for i, r in enumerate(rules)) + base.rules, raw)


def _limits(base: Limits, data: Mapping[str, Any], fail: Fail) -> Limits:
    _check_keys(data, LIMIT_KEYS, "limits", fail)
    out = base
    if "wall" in data:
        out = replace(out, wall_seconds=as_seconds(data["wall"], "limits.wall", fail))
    if "idle" in data:
        out = replace(out, idle_seconds=as_seconds(data["idle"], "limits.idle", fail))
    if "output" in data:
        out = replace(out, output_bytes=max(256, as_bytes(data["output"], "limits.output", fail)))
    if "stdin" in data:
        out = replace(out, stdin_bytes=as_bytes(data["stdin"], "limits.stdin", fail))
    if "processes" in data:
        n = data["processes"]
        if not (isinstance(n, int) or str(n).isdigit()) or int(n) < 1:
            fail(f"limits.processes: expected a positive integer, got {n!r}", "limits.processes")
        out = replace(out, processes=int(n))
    return out


def _environment(base: Environment, data: Mapping[str, Any], fail: Fail) -> Environment:
    _check_keys(data, ENV_KEYS, "environment", fail)
    inherit = as_list(data["inherit"], "environment.inherit", fail) if "inherit" in data else base.inherit
    fixed = dict(base.set)
    raw_set = data.get("set", {})
    if not isinstance(raw_set, Mapping):
        fail("environment.set: expected a table of NAME = value", "environment.set")
    fixed.update({str(k): str(v) for k, v in raw_set.items()})
    for name in (*inherit, *fixed):
        if not ENV_NAME_RE.match(name):
            fail(f"environment: {name!r} is not a variable name", "environment")
    path = str(data.get("path", base.path))
    if any(not p.startswith("/") for p in path.split(":")):
        fail("environment.path: every PATH entry must be absolute (a relative entry lets a file in the "
             "workspace shadow a system program)", "environment.path")  # fmt: skip
    return Environment(inherit, tuple(sorted(fixed.items())), path)


def _secrets(base: Secrets, data: Mapping[str, Any], fail: Fail) -> Secrets:
    _check_keys(data, SECRET_KEYS, "secrets", fail)
    env = base.env + (as_list(data["env"], "secrets.env", fail) if "env" in data else ())
    patterns = base.patterns + (as_list(data["patterns"], "secrets.patterns", fail) if "patterns" in data else ())
    for pat in patterns:
        try:
            re.compile(pat)
        except re.error as exc:
            fail(f"secrets.patterns: {pat!r} is not a valid regular expression ({exc})", "secrets.patterns")
    return Secrets(env, patterns)


def _roots(value: Any, key: str, base_dir: str, fail: Fail) -> tuple[str, ...]:
    out = []
    for spec in as_list(value, key, fail):
        if spec == "workspace":
            out.append(spec)
        else:
            out.append(os.path.realpath(os.path.join(base_dir, os.path.expanduser(spec))))
    return tuple(out)


def _sandbox(base: Sandbox, data: Mapping[str, Any], base_dir: str, fail: Fail) -> Sandbox:
    _check_keys(data, SANDBOX_KEYS, "sandbox", fail)
    out = base
    if "mode" in data:
        out = replace(out, mode=_action(data["mode"], "sandbox.mode", fail, ("required", "off")))
    if "network" in data:
        out = replace(out, network=as_bool(data["network"], "sandbox.network", fail))
    if "child_processes" in data:
        out = replace(out, child_processes=as_bool(data["child_processes"], "sandbox.child_processes", fail))
    if "read" in data:
        out = replace(out, read=_roots(data["read"], "sandbox.read", base_dir, fail))
    if "write" in data:
        out = replace(out, write=_roots(data["write"], "sandbox.write", base_dir, fail))
    if "system_paths" in data:
        out = replace(out, system_paths=_roots(data["system_paths"], "sandbox.system_paths", "/", fail))
    return out


def _hooks(value: Any, fail: Fail) -> tuple[Hook, ...]:
    """``hooks = [{event = "before", command = ["./guard"]}, ...]``; a command
    may also be one string, split like a shell would (no shell runs it)."""
    if not isinstance(value, list):
        fail("hooks: expected a list of tables {event, command, id}", "hooks")
    out: list[Hook] = []
    for i, item in enumerate(value):
        key = f"hooks[{i}]"
        if not isinstance(item, Mapping):
            fail(f"{key}: expected a table {{event, command, id}}", key)
        _check_keys(item, HOOK_KEYS, key, fail)
        event = item.get("event")
        if event not in ("before", "after"):
            fail(f"{key}.event: 'before' (may refuse the command) or 'after' (sees its result)", f"{key}.event")
        command = item.get("command")
        if isinstance(command, str):
            try:
                argv = tuple(shlex.split(command))
            except ValueError as exc:
                fail(f"{key}.command: {exc}", f"{key}.command")
        else:
            argv = as_list(command, f"{key}.command", fail) if command is not None else ()
        if not argv:
            fail(f"{key}.command: give the program and its arguments", f"{key}.command")
        hid = str(item.get("id") or "")
        if hid and not ID_RE.match(hid):
            fail(f"{key}.id {hid!r}: use letters, digits and _.-@", f"{key}.id")
        out.append(Hook(event, argv, hid))
    return tuple(out)


def build_runtime(
    rid: str,
    data: Mapping[str, Any],
    *,
    known: Mapping[str, ShellRuntime],
    base_dir: str,
    origin: str,
    fail: Fail,
) -> ShellRuntime:
    """One runtime from its mapping; ``known`` holds runtimes it may extend
    (the built-ins are always known)."""
    if not ID_RE.match(rid) or rid.startswith("builtin:"):
        fail(f"runtime id {rid!r}: use letters, digits and _.-@ (the builtin: prefix is reserved)", "id")
    _check_keys(data, RUNTIME_KEYS, "shell_access", fail)
    parent_id = str(data.get("extends", "builtin:workspace-readonly@1"))
    parent = known.get(parent_id) or BUILTIN.get(parent_id)
    if parent is None:
        choices = ", ".join([*BUILTIN, *known])
        fail(f"extends={parent_id!r}: no such runtime or profile (known: {choices})", "extends")
    rt = parent.renamed(rid, origin)
    if "cwd" in data:
        rt = replace(rt, cwd=str(data["cwd"]))
    if "pipefail" in data:
        rt = replace(rt, pipefail=as_bool(data["pipefail"], "pipefail", fail))
    for key, fn in (("policy", _policy), ("limits", _limits), ("environment", _environment), ("secrets", _secrets)):
        section = data.get(key)
        if section is not None:
            if not isinstance(section, Mapping):
                fail(f"{key}: expected a table", key)
            rt = replace(rt, **{key: fn(getattr(rt, key), section, fail)})
    section = data.get("sandbox")
    if section is not None:
        if not isinstance(section, Mapping):
            fail("sandbox: expected a table", "sandbox")
        rt = replace(rt, sandbox=_sandbox(rt.sandbox, section, base_dir, fail))
    if "hooks" in data:  # added to the parent's: extending a runtime never drops its guards
        rt = replace(rt, hooks=rt.hooks + _hooks(data["hooks"], fail))
    return rt
