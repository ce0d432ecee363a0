"""How much of a project's ``.tooldeck.toml`` applies (SPEC §3, "authority").

Why: a file inside a root can be written by the model (``apply_patch``, a
development shell). If such a file could declare a shell runtime, the model
would widen its own sandbox at the next start; if it could name a model
endpoint, the person's API key would be sent there. So a project file is
split in two:

* the **safe subset** (:data:`SAFE`) applies as it is: model presets
  without endpoint or key, roles, workflows (prompts), ``[shell]
  default_tool = false``. An allowlist, not a denylist: a key added to
  tooldeck later needs approval until someone puts it here on purpose;
* everything else — shell runtimes and tools (sandbox, policy, environment,
  secrets, hooks, commands), model endpoints and keys (``base_url``,
  ``api_key``, ``api_key_env``), any unknown section — applies only when the
  person approved the file's exact bytes (``tooldeck trust allow PATH``,
  :mod:`tooldeck.state.approvals`). Otherwise it is dropped and reported with
  a :class:`~tooldeck.authority.Notice` naming the file, the line of the
  ``[table]`` header (a cheap scan: tomllib gives no positions) and the command
  that allows it.

:data:`~tooldeck.config_files.USER_ONLY` keys (``allow_roots``, ``[web]``, ``[index]``) come from the
person's own config file only, approved or not: they set the trust boundary,
where the private network may be reached, and where code is sent to be
embedded. A project file that cannot be read or parsed is ignored whole
(tooldeck runs on the person's configuration) and reported once: a model
writing a broken file must not disable the ``shell`` or ``agent_run`` tools.
"""

from __future__ import annotations

import os
import re
import tomllib
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from tooldeck.authority import Notice, has_authority, report
from tooldeck.config_files import USER_ONLY, read_bytes
from tooldeck.statedir import resolve_state_dir

LEAF = True
# What a project file may set without approval ("*": any name). Leaves are
# values the consumers validate; none names a command, a variable, an
# endpoint or a path. Every other key needs approval.
_PRESET_SAFE = dict.fromkeys(
    ("model", "name", "description", "modes", "roles", "api", "stream", "max_tokens", "temperature",
     "reasoning_effort", "max_retries", "timeout"), LEAF,
)  # fmt: skip
SAFE: dict[str, Any] = {
    "models": {
        **dict.fromkeys(("default_model", "api", "stream", "max_retries", "backoff_seconds", "timeout"), LEAF),
        "roles": {"*": LEAF},
        "presets": {"*": _PRESET_SAFE},
    },
    "agents": {"workflows": {"*": dict.fromkeys(("name", "description", "prompt"), LEAF)}},
    "shell": {"default_tool": LEAF},  # only `false` is kept (see _shell_default_tool)
    "tools": {"disabled": LEAF},  # switching a tool off narrows; added to the person's own list (_tools_table)
}
_PER_ENTRY = {("shell", "runtimes"), ("shell", "tools")}  # one notice per runtime / tool


@dataclass(frozen=True, slots=True)
class ConfigNotice(Notice):
    """A notice whose remedy is not ``tooldeck trust allow`` (a broken or linked
    file, a setting only the person's own config may make)."""

    remedy: str = ""

    @property
    def fix(self) -> str:
        return self.remedy

    def text(self) -> str:
        return f"{self.where}: {self.what}; {self.remedy}"


@dataclass(frozen=True)
class ProjectLayer:
    """What a project file contributes, and what of it was ignored."""

    path: Path | None  # None: no file, or one ignored whole
    data: dict[str, Any] = field(default_factory=dict)
    approved: bool = False
    notices: tuple[Notice, ...] = ()
    ignored: tuple[str, ...] = ()  # user-only keys it tried to set


class _Malformed(ValueError):
    def __init__(self, message: str, line: int | None) -> None:
        super().__init__(message)
        self.line = line


def parse(raw: bytes) -> dict[str, Any]:
    """TOML from bytes; ValueError carrying the line (``.line``) when malformed."""
    try:
        return tomllib.loads(raw.decode("utf-8"))
    except UnicodeDecodeError as exc:
        raise _Malformed(f"not UTF-8 text (byte {exc.start})", None) from exc
    except tomllib.TOMLDecodeError as exc:
        m = re.search(r"line (\d+)", str(exc))
        raise _Malformed(str(exc), int(m.group(1)) if m else None) from exc
    except RecursionError as exc:  # tomllib recurses per nested table or array
        raise _Malformed("nested too deeply", None) from exc


def project_layer(
    path: Path, *, user: dict[str, Any], state_dir: str | os.PathLike[str] | None = None
) -> ProjectLayer:
    """The part of the project file at ``path`` that applies; every notice is
    also recorded with :func:`tooldeck.authority.report` (said once per process)."""
    ignore_whole = "it is ignored whole and tooldeck uses your own configuration"
    try:
        raw = read_bytes(path)
        if raw is None:
            return ProjectLayer(None)
        data = parse(raw)
    except OSError as exc:
        return _ignored(ConfigNotice(str(path), f"cannot be read ({exc})", None, ignore_whole))
    except _Malformed as exc:
        return _ignored(ConfigNotice(str(path), f"is not valid TOML ({exc})", exc.line, f"{ignore_whole}; fix it"))
    lines = raw.decode("utf-8").splitlines()
    notices: list[Notice] = []
    ignored = tuple(sorted(k for k in data if k in USER_ONLY))
    for key in ignored:
        remedy = "only your own config file may set it (`$TOOLDECK_CONFIG` or ~/.config/tooldeck/config.toml)"
        notices.append(ConfigNotice(str(path), f"sets {USER_ONLY[key]}", _line_of(lines, _headers(lines), (key,)),
                                    remedy))  # fmt: skip
    data = {k: v for k, v in data.items() if k not in USER_ONLY}
    notices += _tools_table(data, user, str(path), lines)
    real = os.path.realpath(path)
    own = real == os.path.join(os.path.realpath(path.parent), path.name)
    exposed = _state_inside(path.parent, state_dir)
    approved = own and not exposed and has_authority(path, raw, state_dir=state_dir)
    if not approved:
        data, refused = _split(data, SAFE, ())
        refused += _shell_default_tool(data, user)
        if refused and exposed:
            remedy = "start tooldeck with --state-dir (or TOOLDECK_STATE_DIR) outside the folders it serves"
            what = (f"asks for authority, but the state directory {_shown(exposed, 200)} (where approvals are kept) "
                    "is inside this folder, where the model can write, so no approval there counts")  # fmt: skip
            notices.append(ConfigNotice(str(path), what, None, remedy))
        elif refused and not own:
            shown = _shown(real, 200)
            remedy = f"a linked project file has no authority: replace the link with a copy of {shown} and approve that"
            notices.append(ConfigNotice(str(path), f"is a link to {shown} and asks for authority", None, remedy))
        elif refused:
            notices += _refusals(str(path), lines, refused)
    for n in notices:
        report(n)
    return ProjectLayer(path, data, approved, tuple(notices), ignored)


def _state_inside(folder: Path, state_dir: str | os.PathLike[str] | None) -> str | None:
    """The state directory when it lies inside ``folder`` (a root): the file
    tools could write its ``approvals.json`` there, so it approves nothing."""
    state = os.path.realpath(resolve_state_dir(os.fspath(state_dir) if state_dir is not None else None))
    top = os.path.realpath(folder)
    return state if state == top or state.startswith(top.rstrip(os.sep) + os.sep) else None


def asks(raw: bytes) -> list[str]:
    """What a project file's bytes ask for beyond the safe subset, in the
    person's words (``tooldeck trust allow`` shows it: what approving grants)."""
    try:
        data = parse(raw)
    except _Malformed:
        return []
    lines = raw.decode("utf-8").splitlines()
    _, refused = _split({k: v for k, v in data.items() if k not in USER_ONLY}, SAFE, ())
    headers = _headers(lines)
    return [f"line {line}: {_what(p, v)}" if (line := _line_of(lines, headers, p)) else _what(p, v)
            for p, v in refused]  # fmt: skip


MAX_NOTICES = 20  # per file: a model writing ten thousand tables must not flood the person's terminal


def _refusals(path: str, lines: list[str], refused: Refused) -> list[Notice]:
    headers = _headers(lines)
    out = [Notice(path, _what(p, v), _line_of(lines, headers, p)) for p, v in refused[:MAX_NOTICES]]
    if len(refused) > MAX_NOTICES:
        out.append(Notice(path, f"{len(refused) - MAX_NOTICES} more settings beyond the safe subset"))
    return out


def _ignored(notice: Notice) -> ProjectLayer:
    report(notice)
    return ProjectLayer(None, notices=(notice,))


Refused = list[tuple[tuple[str, ...], Any]]


def _split(node: dict[str, Any], schema: dict[str, Any], prefix: tuple[str, ...]) -> tuple[dict[str, Any], Refused]:
    """(the keys ``schema`` allows, the (path, value) of everything else)."""
    kept: dict[str, Any] = {}
    refused: Refused = []
    for key, value in node.items():
        sub = schema.get(key, schema.get("*"))
        path = (*prefix, key)
        if sub is LEAF:
            kept[key] = value
        elif isinstance(sub, dict) and isinstance(value, dict):
            inner, more = _split(value, sub, path)
            if inner or not value:
                kept[key] = inner
            refused += more
        elif path in _PER_ENTRY and isinstance(value, dict):
            refused += [((*path, str(k)), v) for k, v in value.items()]
        else:
            refused.append((path, value))
    return kept, refused


def _shell_default_tool(data: dict[str, Any], user: dict[str, Any]) -> Refused:
    """``default_tool = false`` narrows and applies; ``true`` can only matter
    against the person's own ``false``, which it must not overturn."""
    shell = data.get("shell")
    if not isinstance(shell, dict) or "default_tool" not in shell or shell["default_tool"] is False:
        return []
    value = shell.pop("default_tool")
    user_shell = user.get("shell") if isinstance(user.get("shell"), dict) else {}
    return [(("shell", "default_tool"), value)] if user_shell.get("default_tool") is False else []


def _tools_table(data: dict[str, Any], user: dict[str, Any], path: str, lines: list[str]) -> list[Notice]:
    """``[tools]`` of a project file, approved or not: ``disabled`` adds to the
    person's own list (a merge must not let the project's list replace it and
    so switch a tool back on); ``enabled`` would serve tools the person left
    out, so only the person's own config sets it."""
    tools = data.get("tools")
    if not isinstance(tools, dict):
        return []
    notices: list[Notice] = []
    if "enabled" in tools:
        tools.pop("enabled")
        remedy = "only your own config file may set it (`$TOOLDECK_CONFIG` or ~/.config/tooldeck/config.toml)"
        what = "sets `[tools] enabled` (which tools are served)"
        notices.append(ConfigNotice(path, what, _line_of(lines, _headers(lines), ("tools", "enabled")), remedy))
    if "disabled" in tools:
        mine = user.get("tools", {}).get("disabled") if isinstance(user.get("tools"), dict) else None
        theirs = tools["disabled"]
        as_list = lambda v: v.split(",") if isinstance(v, str) else (v if isinstance(v, list) else [])  # noqa: E731
        tools["disabled"] = [*as_list(mine), *as_list(theirs)]
    return notices


def _shown(text: str, limit: int = 64) -> str:
    """A name or value from the file as it may be printed on the person's
    terminal: control characters escaped (no escape sequence of the model's
    reaches it), long text cut."""
    text = text if text.isprintable() else text.encode("unicode_escape").decode("ascii")
    return text if len(text) <= limit else text[: limit - 1] + "…"


def _what(path: tuple[str, ...], value: Any) -> str:
    path = tuple(_shown(p) for p in path)
    dotted = ".".join(path)
    if path[:2] == ("shell", "runtimes") and len(path) == 3:
        return f"shell runtime `{path[2]}` (a sandbox, policy, environment, secrets or hooks of its own)"
    if path[:2] == ("shell", "tools") and len(path) == 3:
        return f"shell tool `{path[2]}` (a command or a runtime of its own)"
    if path == ("tools", "enabled"):
        return "`[tools] enabled` (which tools are served), which only your own config sets: approval does not grant it"
    if path == ("shell", "default_tool"):
        return "the default `shell` tool, which your own config turns off"
    if path[-1] == "base_url":
        return f"a model endpoint (`{dotted} = {_shown(str(value), 80)!r}`), which would receive your API key"
    if path[-1] == "api_key":
        return f"a model API key (`{dotted}`)"
    if path[-1] == "api_key_env":
        return f"the environment variable {_shown(str(value))!r} as a model key (`{dotted}`)"
    return f"the setting `{dotted}` (only approved files may set it)"


_HEADER = re.compile(r"^\s*\[\[?([^\]]*)\]\]?\s*(?:#.*)?$")


def _norm(key: str) -> str:
    return re.sub(r"\s+|\"|'", "", key)


def _headers(lines: list[str]) -> list[tuple[int, str]]:
    """(index, dotted name) of every ``[table]`` / ``[[array]]`` header line."""
    return [(i, _norm(m.group(1))) for i, text in enumerate(lines) if (m := _HEADER.match(text))]


def _line_of(lines: list[str], headers: list[tuple[int, str]], path: tuple[str, ...]) -> int | None:
    """The 1-based line that declares ``path``: its own ``[table]`` header,
    else a ``key =`` line under the nearest enclosing header; None if unsure."""
    for depth in range(len(path), -1, -1):
        table, rest = ".".join(path[:depth]), path[depth:]
        if not rest:  # its own header, else the first header of a table inside it
            hit = next((i for i, h in headers if h == table), None)
            hit = hit if hit is not None else next((i for i, h in headers if h.startswith(table + ".")), None)
            if hit is not None:
                return hit + 1
            continue
        starts = [-1] if not table else [i for i, h in headers if h == table]
        for start in starts:
            end = next((i for i, _ in headers if i > start), len(lines))
            for i in range(start + 1, end):
                key = _norm(lines[i].split("=", 1)[0]) if "=" in lines[i] else ""
                if key and (key == ".".join(rest) or key == rest[0]):
                    return i + 1
    return None
