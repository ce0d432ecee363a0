"""``tooldeck chat [FILE.chatmd]``: the interactive terminal chat (docs/chat.md).

A thin face: it picks the file (or names a new one), the backend (local, or
connected to a ``tooldeck serve --http``) and runs the Textual app. Heavy
imports (the model client, the catalog, the MCP SDK) happen on the engine
thread after the first frame, so the screen appears at once.
"""

from __future__ import annotations

import os
import sys
import time
from pathlib import Path
from typing import Annotated

import typer

EXIT_USAGE = 2


def new_file_name(directory: Path) -> Path:
    """``chat-YYYYMMDD-HHMMSS.chatmd`` in ``directory``, never an existing file's name."""
    stem = time.strftime("chat-%Y%m%d-%H%M%S")
    path, n = directory / f"{stem}.chatmd", 2
    while path.exists():
        path, n = directory / f"{stem}-{n}.chatmd", n + 1
    return path


FileArg = Annotated[Path | None, typer.Argument(help="The .chatmd conversation (default: a new file).")]
ModelOpt = Annotated[str | None, typer.Option("--model", help="The model (preset id or model name).")]
RootOpt = Annotated[
    list[Path] | None, typer.Option("--root", help="Root directory (repeatable; default: the current directory).")
]
ParallelOpt = Annotated[
    bool, typer.Option("--parallel-tool-calls/--no-parallel-tool-calls", help="Run a turn's tool calls in parallel.")
]
ConnectOpt = Annotated[
    str | None, typer.Option("--connect", help="Attach to a running `tooldeck serve --http` at http://HOST:PORT.")
]
WorkspaceOpt = Annotated[str | None, typer.Option("--workspace", help="Connected: the server workspace.")]
SessionOpt = Annotated[str | None, typer.Option("--session", help="Connected: attach to this agent session id.")]
TokenOpt = Annotated[
    Path | None,
    typer.Option("--token-file", help="Connected: read the bearer token from this file (else TOOLDECK_HTTP_TOKEN)."),
]
ApprovalOpt = Annotated[
    str, typer.Option("--approval", help="Connected: 'ask' = approve each editing tool call; 'auto' = as declared.")
]
StateOpt = Annotated[Path | None, typer.Option("--state-dir", envvar="TOOLDECK_STATE_DIR", help="State directory.")]


def chat(
    file: FileArg = None,
    model: ModelOpt = None,
    root: RootOpt = None,
    parallel_tool_calls: ParallelOpt = True,
    connect: ConnectOpt = None,
    workspace: WorkspaceOpt = None,
    session: SessionOpt = None,
    token_file: TokenOpt = None,
    approval: ApprovalOpt = "auto",
    state_dir: StateOpt = None,
) -> None:
    """Chat in the terminal: a ChatMD conversation, live, in a full-screen UI."""
    path = (file if file is not None else new_file_name(Path.cwd())).absolute()
    if path.exists() and not path.is_file():
        typer.echo(f"tooldeck chat: {path} is not a file", err=True)
        raise typer.Exit(EXIT_USAGE)
    if connect is None and (workspace or session or token_file):
        typer.echo("tooldeck chat: --workspace, --session and --token-file need --connect URL", err=True)
        raise typer.Exit(EXIT_USAGE)
    if approval not in ("ask", "auto"):
        typer.echo("tooldeck chat: --approval is 'ask' or 'auto'", err=True)
        raise typer.Exit(EXIT_USAGE)
    if not (sys.stdin.isatty() and sys.stdout.isatty()) and not os.environ.get("TOOLDECK_CHAT_HEADLESS"):
        typer.echo("tooldeck chat needs a terminal; for a batch run use `tooldeck run FILE`", err=True)
        raise typer.Exit(EXIT_USAGE)
    from tooldeck.tui.app import run_app

    if connect is not None:
        from tooldeck.tui.remote import RemoteChat, read_token

        try:
            token = read_token(token_file)
        except OSError as exc:
            typer.echo(f"tooldeck chat: cannot read the token file: {exc.strerror or exc}", err=True)
            raise typer.Exit(EXIT_USAGE) from exc

        def backend(emit):  # type: ignore[no-untyped-def]
            return RemoteChat(path, emit, url=connect, token=token, workspace=workspace, session=session,
                              model=model, approval=approval, state_dir=state_dir)  # fmt: skip
    else:
        roots = [str(r) for r in root] if root else None

        def backend(emit):  # type: ignore[no-untyped-def]
            from tooldeck.tui.local import LocalChat

            return LocalChat(path, emit, roots=roots, model=model, parallel=parallel_tool_calls, state_dir=state_dir)

    code = run_app(backend, path)
    if code:
        raise typer.Exit(code)
