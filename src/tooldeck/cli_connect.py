"""``tooldeck connect CLIENT [ROOT ...] [--write]``: set an agent client up to start tooldeck.

Prints the server entry for the client's config file, or with ``--write``
adds it there (keeping everything else the file holds). See
:mod:`tooldeck.connect` and docs/clients.md.
"""

from __future__ import annotations

import os
import shlex
from pathlib import Path
from typing import Annotated

import typer

from tooldeck.connect import CLIENTS, claude_add_line, claude_settings, config_path, render, serve_entry, write

ClientArg = Annotated[str, typer.Argument(help=f"The agent client: {', '.join(CLIENTS)}.")]


def _serve_flags(
    profile: str | None, tools: str | None, exclude: str | None, state_dir: Path | None, allow: list[Path] | None
) -> list[str]:
    flags: list[str] = []
    for flag, value in (("--profile", profile), ("--tools", tools), ("--exclude-tools", exclude)):
        if value:
            flags += [flag, value]
    if state_dir is not None:
        flags += ["--state-dir", str(state_dir.resolve())]
    for parent in allow or []:
        flags += ["--allow-root", str(parent.resolve())]
    return flags


def _served_holding(paths: list[Path], roots: list[Path]) -> list[tuple[Path, Path]]:
    """Each written file that lies inside a folder the entry serves, with that folder."""
    out = []
    for p in paths:
        real = Path(os.path.realpath(p))
        for r in roots:
            if real.is_relative_to(os.path.realpath(r)):
                out.append((p, r))
                break
    return out


def _env_pairs(pairs: list[str] | None) -> dict[str, str]:
    env: dict[str, str] = {}
    for pair in pairs or []:
        key, sep, value = pair.partition("=")
        if not sep or not key:
            typer.echo(f"tooldeck: --env takes KEY=VALUE, not {pair!r}", err=True)
            raise typer.Exit(2)
        env[key] = value
    return env


def connect(
    client: ClientArg,
    roots: Annotated[
        list[Path] | None,
        typer.Argument(help="Root folders to serve (default: none named: the folder the client starts in)."),
    ] = None,
    write_: Annotated[bool, typer.Option("--write", help="Add the entry to the client's config file.")] = False,
    scope: Annotated[str, typer.Option("--scope", help="user (your config) or project (this folder's).")] = "user",
    config: Annotated[Path | None, typer.Option("--config", help="Write this config file instead.")] = None,
    ask: Annotated[
        bool, typer.Option("--ask", help="Keep the client asking before each destructive tool (no auto-approval).")
    ] = False,
    name: Annotated[str, typer.Option("--name", help="The server's name in the client.")] = "tooldeck",
    command: Annotated[
        str | None, typer.Option("--command", help="The program line that runs tooldeck (default: this install's).")
    ] = None,
    env: Annotated[list[str] | None, typer.Option("--env", help="KEY=VALUE for the server (repeatable).")] = None,
    profile: Annotated[str | None, typer.Option("--profile", help="Tool profile: full, core, read-only.")] = None,
    tools: Annotated[str | None, typer.Option("--tools", help="Serve these tools (comma-separated).")] = None,
    exclude_tools: Annotated[str | None, typer.Option("--exclude-tools", help="Leave these tools out.")] = None,
    state_dir: Annotated[Path | None, typer.Option("--state-dir", help="The server's state directory.")] = None,
    allow_root: Annotated[
        list[Path] | None, typer.Option("--allow-root", help="A parent folder manage_workspaces may open.")
    ] = None,
) -> None:
    """Print (or --write) the entry that makes an agent client start tooldeck as its MCP server."""
    if client not in CLIENTS:
        typer.echo(f"tooldeck: unknown client {client!r}; choose one of {', '.join(CLIENTS)}", err=True)
        raise typer.Exit(2)
    if ask and client in ("cursor", "vscode"):
        typer.echo(f"tooldeck: --ask applies to codex, claude and gemini; {client} asks per its own settings", err=True)
        raise typer.Exit(2)
    if scope not in ("user", "project"):
        typer.echo("tooldeck: --scope is user or project", err=True)
        raise typer.Exit(2)
    for r in roots or []:
        if not r.is_dir():
            typer.echo(f"tooldeck: {r} is not a folder", err=True)
            raise typer.Exit(2)
    flags = _serve_flags(profile, tools, exclude_tools, state_dir, allow_root)
    program = shlex.split(command) if command else None
    entry = serve_entry([str(r) for r in roots or []], flags, _env_pairs(env), name, ask, program)
    project = Path.cwd()
    path = config if config is not None else config_path(client, scope, project)
    if not write_:
        typer.echo(f"# {client}: add to {path}")
        typer.echo(render(client, entry), nl=False)
        if client == "claude":
            typer.echo(f"# or: {claude_add_line(entry, scope)}")
        return
    # --config names the one file to write: the person's Claude settings are not touched then
    settings = claude_settings(scope, project) if client == "claude" and config is None else None
    try:
        written = write(client, entry, path, settings)
    except (ValueError, OSError) as exc:
        typer.echo(f"tooldeck: {exc}", err=True)
        raise typer.Exit(1) from exc
    for p in written:
        typer.echo(f"tooldeck: wrote {p}", err=True)
    # no root named: the server serves the folder the client starts in, the project for project scope
    served = list(roots or []) or ([project] if scope == "project" else [])
    for p, r in _served_holding(written, served):
        note = (f"tooldeck: note: {p} is inside {r}, a folder this entry serves: tooldeck's tools and sandboxed "
                "shell never change it (agent-client configuration is protected), but the client's own file tools "
                "can; check it (git diff) before the client's next start, or use --scope user")  # fmt: skip
        typer.echo(note, err=True)
    if client == "claude" and config is not None and not ask:
        typer.echo(f"tooldeck: to run its tools without a prompt, add 'mcp__{name}' to permissions.allow", err=True)
