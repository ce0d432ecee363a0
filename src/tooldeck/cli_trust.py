"""``tooldeck trust allow|list|revoke``: the person approves files by content.

A file inside a root (a project ``.tooldeck.toml``, a prompt, a ``.chatmd``
agent) may have been written by the model, so what it asks that is
authority — a shell runtime, a command, an endpoint, a secret, a path
outside the roots — is ignored until the person approves its exact bytes
here (SPEC §3; :mod:`tooldeck.state.approvals`, :mod:`tooldeck.authority`).
Any change to the file revokes the approval until it is allowed again.

These verbs are the person's: no tool, MCP request or ChatMD element can
reach them, and the approvals live in the state directory, which no tool
or sandbox can write.
"""

from __future__ import annotations

import os
import time
from pathlib import Path
from typing import Annotated

import typer

from tooldeck import authority
from tooldeck.config import PROJECT_FILE, ConfigError, load_config, read_bytes
from tooldeck.state.approvals import ApprovalError, Approvals

trust_app = typer.Typer(
    help="Approve files by content: shell runtimes, endpoints and commands in a project's .tooldeck.toml "
    "(or another file you can be asked to trust) apply only once you allow them.",
    no_args_is_help=True,
)

PathsArg = Annotated[list[Path], typer.Argument(help="Files (a project's .tooldeck.toml, a prompt file, ...).")]
RootOpt = Annotated[list[Path] | None, typer.Option("--root", help="Root directory (repeatable; default: cwd).")]
StateOpt = Annotated[
    Path | None, typer.Option("--state-dir", envvar="TOOLDECK_STATE_DIR", help="State directory (approvals live here).")
]


def _store(state_dir: Path | None):  # type: ignore[no-untyped-def]
    return Approvals(state_dir)


@trust_app.command("allow")
def allow(paths: PathsArg, state_dir: StateOpt = None) -> None:
    """Approve the current content of each file (read it first: it may grant what it asks below)."""
    from tooldeck.config_authority import asks  # lazy: the CLI's start reads no project file's authority

    try:
        approved = _store(state_dir).allow(paths)
    except ApprovalError as exc:
        typer.echo(f"tooldeck: {exc}; nothing was approved", err=True)
        raise typer.Exit(1) from exc
    for a in approved:
        typer.echo(f"approved {a.path} (sha256 {a.sha256[:16]}): any change to it revokes this")
        if os.path.basename(a.path) == PROJECT_FILE:
            try:
                grants = asks(read_bytes(Path(a.path)) or b"")
            except OSError:
                grants = []
            for line in grants:
                typer.echo(f"  it may now grant: {line}")


@trust_app.command("revoke")
def revoke(paths: PathsArg, state_dir: StateOpt = None) -> None:
    """Remove the approval of each file."""
    done = set(_store(state_dir).revoke(paths))
    missing = False
    for p in paths:
        real = os.path.realpath(os.path.expanduser(str(p)))
        if real in done:
            typer.echo(f"revoked {real}")
        else:
            typer.echo(f"tooldeck: {real} was not approved", err=True)
            missing = True
    if missing:
        raise typer.Exit(1)


_STATUS = {
    "approved": "approved",
    "changed": "changed since approved (ignored until you allow it again)",
    "missing": "missing",
}


@trust_app.command("list")
def list_(root: RootOpt = None, state_dir: StateOpt = None) -> None:
    """Show each approval with its status, and what this configuration ignores (with what each file asked)."""
    entries = _store(state_dir).entries()
    typer.echo("Approved files:" if entries else "Approved files: none")
    for a in entries:
        when = time.strftime("%Y-%m-%d %H:%M", time.localtime(a.approved_at))
        typer.echo(f"  {_STATUS[a.status]:<9} {a.path}  (sha256 {a.sha256[:16]}, {when})")
    for r in root or [Path.cwd()]:
        try:
            load_config(r, state_dir=state_dir)  # records what it ignores
        except ConfigError as exc:
            typer.echo(f"tooldeck: {exc}", err=True)
            raise typer.Exit(2) from exc
    ignored = authority.notices()
    typer.echo("Ignored:" if ignored else "Ignored: nothing (no file here asks for authority it does not have)")
    for n in ignored:
        typer.echo(f"  {n.where}: {n.what}")
        if n.fix:
            typer.echo(f"      {'allow it: ' if n.fix.startswith('tooldeck trust') else ''}{n.fix}")
