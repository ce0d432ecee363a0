"""The TOML types of shell runtime and tool settings, checked before building.

Why: TOML has real booleans, numbers and lists, so a string where one
belongs is a mistake, never a value to guess from. ``network = "1"`` must
not turn the network on (nor ``"allow"``, nor ``" true"``): it is an error
naming the key, in the person's own file as in an approved project file.
ChatMD attributes are strings by nature and keep their own vocabulary
(:func:`tooldeck.shell.declare.as_bool`); this check is for TOML only, and
runs before :func:`~tooldeck.shell.declare.build_runtime` so the builder
stays one for both.

Durations and sizes may be numbers or strings *with a unit* (``"30s"``,
``"64KB"``): a unit is a format, not a guess.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Mapping
from typing import Any

from tooldeck.shell.declare import Fail

Check = Callable[[Any], bool]


def _is_bool(v: Any) -> bool:
    return isinstance(v, bool)


def _is_int(v: Any) -> bool:
    return isinstance(v, int) and not isinstance(v, bool)


def _is_str(v: Any) -> bool:
    return isinstance(v, str)


def _is_strs(v: Any) -> bool:
    return isinstance(v, list) and all(isinstance(x, str) for x in v)


def _is_duration(v: Any) -> bool:
    return (isinstance(v, int | float) and not isinstance(v, bool)) or (
        isinstance(v, str) and re.fullmatch(r"\s*\d+(?:\.\d+)?\s*(ms|s|m|h)\s*", v) is not None
    )


def _is_size(v: Any) -> bool:
    return _is_int(v) or (isinstance(v, str) and re.fullmatch(r"\s*\d+\s*[a-zA-Z]+\s*", v) is not None)


def _is_str_table(v: Any) -> bool:
    return isinstance(v, Mapping) and all(isinstance(x, str) for x in v.values())


def _is_command(v: Any) -> bool:
    return isinstance(v, str) or _is_strs(v)


_EXPECT = {
    _is_bool: "true or false (a TOML boolean, not a string)",
    _is_int: "an integer",
    _is_str: "a string",
    _is_strs: "a list of strings",
    _is_duration: "a number of seconds or a string with a unit such as \"30s\"",
    _is_size: "a number of bytes or a string with a unit such as \"64KB\"",
    _is_str_table: "a table of NAME = \"value\" strings",
    _is_command: "a list of strings (program first) or one command string",
}

RUNTIME_TYPES: dict[str, Check] = {
    "extends": _is_str, "cwd": _is_str, "pipefail": _is_bool,
    "policy.default": _is_str, "policy.raw": _is_str,
    "limits.wall": _is_duration, "limits.idle": _is_duration, "limits.output": _is_size,
    "limits.stdin": _is_size, "limits.processes": _is_int,
    "environment.inherit": _is_strs, "environment.set": _is_str_table, "environment.path": _is_str,
    "secrets.env": _is_strs, "secrets.patterns": _is_strs,
    "sandbox.mode": _is_str, "sandbox.network": _is_bool, "sandbox.read": _is_strs, "sandbox.write": _is_strs,
    "sandbox.child_processes": _is_bool, "sandbox.system_paths": _is_strs,
}  # fmt: skip
RULE_TYPES: dict[str, Check] = {
    "id": _is_str, "action": _is_str, "program": _is_str, "basename": _is_str, "path": _is_str,
    "prefix": _is_strs, "contains": _is_str, "regex": _is_str,
}  # fmt: skip
HOOK_TYPES: dict[str, Check] = {"event": _is_str, "command": _is_command, "id": _is_str}
TOOL_TYPES: dict[str, Check] = {
    "type": _is_str, "mode": _is_str, "runtime": _is_str, "description": _is_str, "result": _is_str,
    "stdin": _is_bool, "cwd": _is_bool, "command": _is_command, "interpreter": _is_command,
    "arguments": _is_str, "script": _is_str, "sha256": _is_str,
}  # fmt: skip


def _check(value: Any, check: Check, key: str, fail: Fail) -> None:
    if not check(value):
        fail(f"{key}: expected {_EXPECT[check]}, got {value!r}", key)


def _check_table(data: Mapping[str, Any], types: Mapping[str, Check], prefix: str, fail: Fail) -> None:
    for key, check in types.items():
        if key in data:
            _check(data[key], check, f"{prefix}{key}", fail)


def _check_items(value: Any, types: Mapping[str, Check], key: str, fail: Fail) -> None:
    if not isinstance(value, list) or not all(isinstance(x, Mapping) for x in value):
        fail(f"{key}: expected a list of tables", key)
    for i, item in enumerate(value):
        _check_table(item, types, f"{key}[{i}].", fail)


def check_runtime(data: Mapping[str, Any], fail: Fail) -> None:
    """Every known key of a ``[shell.runtimes.<id>]`` table has its TOML type
    (unknown keys are left to the builder, which names them)."""
    for dotted, check in RUNTIME_TYPES.items():
        section, _, key = dotted.rpartition(".")
        table = data.get(section) if section else data
        if isinstance(table, Mapping) and key in table:
            _check(table[key], check, dotted, fail)
    policy = data.get("policy")
    if isinstance(policy, Mapping) and "rules" in policy:
        _check_items(policy["rules"], RULE_TYPES, "policy.rules", fail)
    if "hooks" in data:
        _check_items(data["hooks"], HOOK_TYPES, "hooks", fail)


def check_tool(data: Mapping[str, Any], fail: Fail) -> None:
    """Every known key of a ``[shell.tools.<name>]`` table has its TOML type."""
    _check_table(data, TOOL_TYPES, "", fail)
    if "rationale" in data and not (isinstance(data["rationale"], str) or data["rationale"] is True):
        fail(f"rationale: expected none, optional, required (or true), got {data['rationale']!r}", "rationale")
