"""Shell tool declarations → :class:`ShellToolSpec` (TOML and ChatMD share it).

A spec is what the model-facing tool is built from: a name, a mode, the
runtime it runs under and the mode's fixed parts (the program of a fixed
tool, the interpreter of a raw tool, the hashed file of a script tool).
Unknown keys fail closed, like runtimes (see :mod:`tooldeck.shell.declare`).
"""

from __future__ import annotations

import hashlib
import os
import re
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any, Literal

from tooldeck.shell.chain import ChainSyntaxError, parse_chain
from tooldeck.shell.declare import Fail, as_bool
from tooldeck.workspace.person_files import read_named

Mode = Literal["fixed", "structured", "chain", "raw", "script"]
MODES: tuple[str, ...] = ("fixed", "structured", "chain", "raw", "script")
RESULTS: tuple[str, ...] = ("combined", "stdout", "structured")
TOOL_KEYS = frozenset(
    {"type", "mode", "runtime", "description", "rationale", "stdin", "result", "command", "arguments",
     "interpreter", "script", "sha256", "cwd"}
)  # fmt: skip
NAME_RE = re.compile(r"^[a-zA-Z0-9_-]{1,64}$")


@dataclass(frozen=True, slots=True)
class ShellToolSpec:
    name: str
    mode: Mode
    runtime: str
    description: str = ""
    rationale: Literal["none", "optional", "required"] = "none"
    stdin: bool = False
    result: Literal["combined", "stdout", "structured"] = "combined"
    command: tuple[str, ...] = ()  # fixed: program + args; raw: interpreter + args (code appended)
    arguments: Literal["none", "append"] = "none"  # fixed/script: may the model append literal args?
    script: str | None = None  # script mode: absolute path of the script file
    sha256: str | None = None  # script mode: expected hash, checked before each run
    cwd_field: bool = True  # structured/chain: may the model choose a working directory?

    @property
    def program(self) -> str:
        return self.command[0] if self.command else ""


def file_sha256(path: str) -> str:
    """The digest of a declared script (its config or ChatMD author named it, never a model)."""
    return hashlib.sha256(read_named(path)).hexdigest()  # at most MAX_NAMED_BYTES (16 MiB)


def _argv(value: Any, key: str, fail: Fail) -> tuple[str, ...]:
    """A command as a list of words, or one string in the chain grammar (one program, no operators)."""
    if isinstance(value, list | tuple) and value and all(isinstance(v, str) for v in value):
        return tuple(value)
    if isinstance(value, str):
        try:
            chain = parse_chain(value)
        except ChainSyntaxError as exc:
            fail(f"{key}: {exc}", key)
        if len(chain.steps) == 1 and len(chain.steps[0].pipeline) == 1:
            return chain.steps[0].pipeline[0]
        fail(f"{key}: give one program and its arguments (no |, ;, && or ||)", key)
    fail(f"{key}: expected a non-empty list of strings (program first) or one command string", key)


def _choice(value: Any, choices: tuple[str, ...], key: str, fail: Fail) -> Any:
    if value not in choices:
        fail(f"{key}: expected one of {', '.join(choices)}, got {value!r}", key)
    return value


def _rationale(value: Any, fail: Fail) -> Literal["none", "optional", "required"]:
    if value is None or value is True:
        return "optional" if value is True else "none"
    return _choice(str(value), ("none", "optional", "required"), "rationale", fail)  # type: ignore[no-any-return]


def _script(data: Mapping[str, Any], base_dir: str, fail: Fail) -> tuple[str, str]:
    path = data.get("script")
    if not isinstance(path, str) or not path:
        fail("mode=script needs script = path of the script file", "script")
    full = os.path.realpath(os.path.join(base_dir, path))
    if not os.path.isfile(full):
        fail(f"script {path!r}: no such file (resolved to {full})", "script")
    digest = data.get("sha256")
    actual = file_sha256(full)
    if digest is None:
        fail(f"script {path!r}: declare its sha256 (currently {actual}) so a changed file is refused", "sha256")
    if str(digest).lower() != actual:
        fail(f"script {path!r}: sha256 mismatch (declared {digest}, file has {actual})", "sha256")
    return full, actual


def build_tool_spec(name: str, data: Mapping[str, Any], *, base_dir: str, fail: Fail) -> ShellToolSpec:
    """One tool spec from its mapping (TOML table or a converted ``<tool>``)."""
    if not NAME_RE.match(name):
        fail(f"tool name {name!r}: use 1-64 letters, digits, _ or -", "name")
    for key in data:
        if key not in TOOL_KEYS:
            fail(f"unknown shell tool setting {key!r} (known: {', '.join(sorted(TOOL_KEYS))})", key)
    if data.get("type", "shell") != "shell":
        fail(f"type={data.get('type')!r}: only type=shell is a shell tool", "type")
    mode = _choice(data.get("mode", "structured"), MODES, "mode", fail)
    runtime = str(data.get("runtime") or "builtin:workspace-readonly@1")
    command = _argv(data["command"], "command", fail) if "command" in data else ()
    interpreter = _argv(data["interpreter"], "interpreter", fail) if "interpreter" in data else ()
    arguments = _choice(data.get("arguments", "none"), ("none", "append"), "arguments", fail)
    script = digest = None
    if mode == "fixed" and not command:
        fail("mode=fixed needs a command (program and its arguments)", "command")
    if mode in ("structured", "chain") and (command or interpreter):
        fail(f"mode={mode}: the model supplies the command; remove command/interpreter", "command")
    if mode == "raw":
        if not interpreter:
            fail('mode=raw needs interpreter = [program, flags...], e.g. ["bash", "-c"]', "interpreter")
        command = interpreter
    if mode == "script":
        script, digest = _script(data, base_dir, fail)
        command = interpreter  # optional interpreter before the script path
    return ShellToolSpec(
        name=name,
        mode=mode,
        runtime=runtime,
        description=str(data.get("description") or ""),
        rationale=_rationale(data.get("rationale"), fail),
        stdin=as_bool(data["stdin"], "stdin", fail) if "stdin" in data else False,
        result=_choice(data.get("result", "combined"), RESULTS, "result", fail),
        command=command,
        arguments=arguments,
        script=script,
        sha256=digest,
        cwd_field=as_bool(data["cwd"], "cwd", fail) if "cwd" in data else True,
    )
