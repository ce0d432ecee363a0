"""``tooldeck connect CLIENT``: the server entry an agent client needs to start tooldeck.

For each client the entry carries what makes tooldeck usable there, learnt
running the real clients (tests/clients, docs/clients.md):

- **codex** (``$CODEX_HOME/config.toml``, TOML, edited with tomlkit so the
  person's comments and other tables stay): ``required = true`` (Codex sends
  the first model request without a server that is not ready, and says
  nothing), a start-up timeout, and ``default_tools_approval_mode =
  "approve"`` (else Codex refuses every destructive tool in ``codex exec``).
- **claude** (``~/.claude.json`` or ``$CLAUDE_CONFIG_DIR/.claude.json``;
  project scope ``.mcp.json``): ``alwaysLoad`` (else Claude Code connects in
  the background and the first turn goes out without tooldeck's tools); the
  approval is ``permissions.allow`` ``mcp__tooldeck`` in its ``settings.json``.
- **gemini** (``~/.gemini/settings.json``; project ``.gemini/settings.json``):
  ``trust`` (no confirmation per call) and a tool timeout.
- **cursor** (``~/.cursor/mcp.json``; project ``.cursor/mcp.json``).
- **vscode** (``.vscode/mcp.json`` of the project, ``servers``; user scope:
  the ``mcp.json`` of the user profile).

``--ask`` leaves each client's own approval in place (the person confirms
every destructive call). Writing never drops what the file already holds: the
entry named ``tooldeck`` (or ``--name``) is added or replaced, nothing else.
"""

from __future__ import annotations

import contextlib
import json
import os
import shlex
import shutil
import sys
import tempfile
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from tooldeck.workspace.person_files import read_named_text

CLIENTS = ("codex", "claude", "gemini", "cursor", "vscode")
STARTUP_TIMEOUT_S = 20  # a cold first start (no handshake cache, a new version) stays well under it
TOOL_TIMEOUT_S = 600  # agent_run, shell and index_code may work for minutes


@dataclass
class Entry:
    """What starts tooldeck: a command line and extra environment."""

    command: str
    args: list[str]
    env: dict[str, str] = field(default_factory=dict)
    name: str = "tooldeck"
    ask: bool = False  # True: leave the client's approval of destructive tools as it is


def tooldeck_command() -> list[str]:
    """The program that runs tooldeck here: the ``tooldeck`` script when this
    process is it (or one is on PATH next to this Python), else ``python -m tooldeck``."""
    here = os.path.abspath(sys.argv[0]) if sys.argv and sys.argv[0] else ""
    if here and os.path.basename(here) == "tooldeck" and os.access(here, os.X_OK):
        return [here]
    script = Path(sys.executable).with_name("tooldeck")
    if script.is_file() and os.access(script, os.X_OK):
        return [str(script)]
    found = shutil.which("tooldeck")
    if found:
        return [found]
    return [sys.executable, "-m", "tooldeck"]


def serve_entry(
    roots: list[str],
    serve_flags: list[str],
    env: dict[str, str],
    name: str = "tooldeck",
    ask: bool = False,
    program: list[str] | None = None,
) -> Entry:
    command = program or tooldeck_command()
    args = [*command[1:], "serve", *(os.path.abspath(r) for r in roots), *serve_flags]
    return Entry(command[0], args, dict(env), name, ask)


# where each client keeps its servers ------------------------------------------------
def config_path(client: str, scope: str, project: Path, environ: dict[str, str] | None = None) -> Path:
    env = os.environ if environ is None else environ
    home = Path(env.get("HOME") or Path.home())
    if client == "codex":
        if scope == "project":
            return project / ".codex" / "config.toml"
        return Path(env.get("CODEX_HOME") or home / ".codex") / "config.toml"
    if client == "claude":
        if scope == "project":
            return project / ".mcp.json"
        return Path(env.get("CLAUDE_CONFIG_DIR") or home) / ".claude.json"
    if client == "gemini":
        if scope == "project":
            return project / ".gemini" / "settings.json"
        return Path(env.get("GEMINI_CLI_HOME") or home) / ".gemini" / "settings.json"
    if client == "cursor":
        return (project if scope == "project" else home) / ".cursor" / "mcp.json"
    if client == "vscode":
        if scope == "project":
            return project / ".vscode" / "mcp.json"
        config = Path(env.get("XDG_CONFIG_HOME") or home / ".config")
        return config / "Code" / "User" / "mcp.json"
    raise ValueError(f"unknown client {client!r}; choose one of {', '.join(CLIENTS)}")


def claude_settings_path(environ: dict[str, str] | None = None) -> Path:
    env = os.environ if environ is None else environ
    base = env.get("CLAUDE_CONFIG_DIR") or str(Path(env.get("HOME") or Path.home()) / ".claude")
    return Path(base) / "settings.json"


# the entry of each client ---------------------------------------------------------
def json_entry(client: str, e: Entry) -> dict[str, Any]:
    out: dict[str, Any] = {"command": e.command, "args": e.args}
    if client in ("claude", "vscode"):
        out = {"type": "stdio", **out}
    if e.env:
        out["env"] = dict(e.env)
    if client == "claude":
        out["alwaysLoad"] = True  # connect before the first model request, not in the background
    if client == "gemini":
        out["timeout"] = TOOL_TIMEOUT_S * 1000
        if not e.ask:
            out["trust"] = True
    return out


def codex_table(e: Entry) -> dict[str, Any]:
    table: dict[str, Any] = {
        "command": e.command,
        "args": e.args,
        "required": True,  # Codex waits for the server instead of starting the turn without its tools
        "startup_timeout_sec": STARTUP_TIMEOUT_S,
        "tool_timeout_sec": TOOL_TIMEOUT_S,
    }
    if not e.ask:
        table["default_tools_approval_mode"] = "approve"
    if e.env:
        table["env"] = dict(e.env)
    return table


def render(client: str, e: Entry) -> str:
    """The entry as the client's config file writes it (a fragment to paste)."""
    if client == "codex":
        import tomlkit

        doc = tomlkit.document()
        servers = tomlkit.table(is_super_table=True)
        servers.add(e.name, _toml_table(codex_table(e)))
        doc.add("mcp_servers", servers)
        return tomlkit.dumps(doc)
    key = "servers" if client == "vscode" else "mcpServers"
    return json.dumps({key: {e.name: json_entry(client, e)}}, indent=2) + "\n"


def _toml_table(values: dict[str, Any]) -> Any:
    import tomlkit

    table = tomlkit.table()
    for k, v in values.items():
        if isinstance(v, dict):
            inline = tomlkit.inline_table()
            inline.update(v)
            table.add(k, inline)
        else:
            table.add(k, v)
    return table


def claude_add_line(e: Entry, scope: str = "user") -> str:
    env = " ".join(f"-e {shlex.quote(f'{k}={v}')}" for k, v in e.env.items())
    return f"claude mcp add --scope {scope} {env + ' ' if env else ''}{e.name} -- {shlex.join([e.command, *e.args])}"


# writing -----------------------------------------------------------------------------
def write(client: str, e: Entry, path: Path, settings: Path | None = None) -> list[Path]:
    """Add (or replace) the entry in ``path``, keeping everything else; for
    Claude Code, also allow the server's tools in ``settings`` (unless ``ask``).
    Returns the files written."""
    path.parent.mkdir(parents=True, exist_ok=True)
    written = [path]
    allowed = None
    if client == "claude" and not e.ask and settings is not None:
        allowed = _allowed(settings, e.name)  # checked before anything is written: no half set-up
    if client == "codex":
        _write_codex(e, path)
    else:
        data = _read_json(path)
        key = "servers" if client == "vscode" else "mcpServers"
        servers = data.setdefault(key, {})
        if not isinstance(servers, dict):
            raise ValueError(f"{path}: {key} is not an object")
        servers[e.name] = json_entry(client, e)
        _write_json(path, data)
    if allowed is not None and settings is not None:
        settings.parent.mkdir(parents=True, exist_ok=True)
        _write_json(settings, allowed)
        written.append(settings)
    return written


def claude_settings(scope: str, project: Path, environ: dict[str, str] | None = None) -> Path:
    """Where ``write`` allows the server's tools: the user's settings, or the project's local ones."""
    return project / ".claude" / "settings.local.json" if scope == "project" else claude_settings_path(environ)


def allow_server(settings: Path, name: str) -> None:
    """``permissions.allow`` gains ``mcp__NAME``: every tool of the server runs without a prompt."""
    data = _allowed(settings, name)
    settings.parent.mkdir(parents=True, exist_ok=True)
    _write_json(settings, data)


def _allowed(settings: Path, name: str) -> dict[str, Any]:
    """The settings of ``settings`` with ``mcp__NAME`` allowed (ValueError when not of Claude Code's shape)."""
    data = _read_json(settings)
    perms = data.setdefault("permissions", {})
    allow = perms.setdefault("allow", []) if isinstance(perms, dict) else None
    rule = f"mcp__{name}"
    if not isinstance(allow, list):
        raise ValueError(f"{settings}: permissions.allow is not a list; add {rule!r} to it by hand")
    if rule not in allow:
        allow.append(rule)
    return data


def _write_codex(e: Entry, path: Path) -> None:
    import tomlkit

    text = _read_text(path)
    doc = tomlkit.parse(text) if text is not None else tomlkit.document()
    servers = doc.get("mcp_servers")
    if servers is None:
        servers = tomlkit.table(is_super_table=True)
        doc.add("mcp_servers", servers)
    if e.name in servers:
        del servers[e.name]
    servers.add(e.name, _toml_table(codex_table(e)))
    _replace(path, tomlkit.dumps(doc))


def _read_text(path: Path) -> str | None:
    """A client's configuration file (the person's), None when there is none yet."""
    try:
        return read_named_text(path)
    except FileNotFoundError:
        return None


def _read_json(path: Path) -> dict[str, Any]:
    text = _read_text(path)
    if text is None or not text.strip():
        return {}
    try:
        data = json.loads(text)
    except json.JSONDecodeError as exc:
        raise ValueError(f"{path} is not valid JSON ({exc}); fix it or print the entry without --write") from exc
    if not isinstance(data, dict):
        raise ValueError(f"{path} does not hold a JSON object")
    return data


def _write_json(path: Path, data: dict[str, Any]) -> None:
    _replace(path, json.dumps(data, indent=2) + "\n")


def _replace(path: Path, text: str) -> None:
    """Write ``path`` whole through a fresh temp file beside it. The temp file
    is created exclusively (a link planted at a fixed name is never followed);
    a config that is itself a link is written at its target, so the link
    stays (a dotfiles folder keeps its file)."""
    target = path.resolve() if path.is_symlink() else path
    mode = target.stat().st_mode & 0o777 if target.exists() else 0o644
    fd, tmp = tempfile.mkstemp(dir=target.parent, prefix=f".{target.name}.", suffix=".tooldeck-tmp")
    try:
        with os.fdopen(fd, "w", encoding="utf-8") as f:
            os.fchmod(f.fileno(), mode)
            f.write(text)
        os.replace(tmp, target)
    except BaseException:
        with contextlib.suppress(OSError):
            os.unlink(tmp)
        raise
