"""``tooldeck chat [FILE.chatmd]``: the interactive terminal chat (docs/chat.md).

The typer face of :mod:`tooldeck.tui.launch`: the common command lines never
get here (``tooldeck.launch`` starts the chat without the CLI framework, so the
screen appears at once); ``--help`` and unusual lines do, and run the same
:func:`~tooldeck.tui.launch.run_chat`.
"""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

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
    from tooldeck.tui.launch import ChatArgs, run_chat  # lazy: the other verbs start without the chat's launcher

    args = ChatArgs(
        file=str(file) if file is not None else None, model=model, roots=[str(r) for r in root or []],
        parallel=parallel_tool_calls, connect=connect, workspace=workspace, session=session,
        token_file=str(token_file) if token_file is not None else None, approval=approval,
        state_dir=str(state_dir) if state_dir is not None else None,
    )  # fmt: skip
    code = run_chat(args)
    if code:
        raise typer.Exit(code)
