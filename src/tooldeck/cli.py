"""The ``tooldeck`` command (SPEC §9): a thin face over the catalog.

* ``tooldeck serve [ROOT ...] [--http HOST:PORT] [--prompts DIR] [--profile NAME] [--tools A,B]
  [--exclude-tools C] [--session-idle SECONDS] [--max-sessions N]``
* ``tooldeck call TOOL ['{json}' | @FILE | @-] [--root ROOT ...]``: exit 0 success, 1 tool
  error (error text on stderr), 2 usage error; JSON may come on stdin or from a file
* ``tooldeck tools [--cost] [--profile NAME] [--tools A,B] [--exclude-tools C]``
* ``tooldeck run FILE.chatmd [--parallel-tool-calls | --no-parallel-tool-calls]``
* ``tooldeck connect CLIENT [ROOT ...] [--write]`` (codex, claude, gemini, cursor, vscode; ``cli_connect.py``)
* ``tooldeck index docs|code|list ...``, ``tooldeck search QUERY --index NAME`` (``cli_index.py``)
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Annotated

import typer

from tooldeck.cli_call import EXIT_TOOL_ERROR, EXIT_USAGE, CallArgs, CallExit, run_call, runtime
from tooldeck.cli_serve import ServeArgs, run_serve
from tooldeck.core.errors import ToolError
from tooldeck.startup import announce_authority
from tooldeck.store.db import Store, default_state_dir

app = typer.Typer(
    name="tooldeck",
    help="A tool host for LLM agents that work on codebases.",
    no_args_is_help=True,
    add_completion=False,
    pretty_exceptions_enable=False,
)


def _runtime(roots: list[Path] | None, state_dir: Path | None, allow: list[Path] | None = None):  # type: ignore[no-untyped-def]
    try:
        return runtime([str(r) for r in roots or []], state_dir, [str(p) for p in allow or []])
    except CallExit as stop:  # its line is on stderr
        raise typer.Exit(stop.code) from stop


RootsArg = Annotated[list[Path] | None, typer.Argument(help="Root directories (default: the current directory).")]
StateOpt = Annotated[
    Path | None, typer.Option("--state-dir", envvar="TOOLDECK_STATE_DIR", help="State directory (SQLite store).")
]
ProfileOpt = Annotated[str | None, typer.Option("--profile", help="Tool profile: full, core, read-only.")]
ToolsOpt = Annotated[
    str | None,
    typer.Option("--tools", help="Serve these tools (comma-separated; beside --profile's when one is given)."),
]
ExcludeOpt = Annotated[str | None, typer.Option("--exclude-tools", help="Leave these tools out (comma-separated).")]
AllowOpt = Annotated[
    list[Path] | None,
    typer.Option("--allow-root", help="A parent folder manage_workspaces may open (repeatable; see allow_roots)."),
]


@app.command()
def serve(
    roots: RootsArg = None,
    http: Annotated[str | None, typer.Option("--http", help="Serve streamable HTTP at HOST:PORT (/mcp).")] = None,
    prompts: Annotated[
        Path | None, typer.Option("--prompts", envvar="MCP_PROMPTS_DIR", help="Directory of *.chatmd prompts.")
    ] = None,
    profile: ProfileOpt = None,
    state_dir: StateOpt = None,
    allow_root: AllowOpt = None,
    tools: ToolsOpt = None,
    exclude_tools: ExcludeOpt = None,
    session_idle: Annotated[
        float | None,
        typer.Option("--session-idle", help="HTTP: close a session after this many idle seconds (default 300)."),
    ] = None,
    max_sessions: Annotated[
        int | None, typer.Option("--max-sessions", help="HTTP: the most sessions open at once (default 256).")
    ] = None,
) -> None:
    """Serve the catalog over MCP (stdio by default)."""
    # the common case never gets here: tooldeck.launch starts serve without typer
    args = ServeArgs(
        roots=[str(r) for r in roots or []],
        http=http,
        prompts=str(prompts) if prompts is not None else None,
        profile=profile,
        state_dir=str(state_dir) if state_dir is not None else None,
        allow_roots=[str(p) for p in allow_root or []],
        tools=tools,
        exclude_tools=exclude_tools,
        session_idle=None if session_idle is None else str(session_idle),
        max_sessions=None if max_sessions is None else str(max_sessions),
    )
    code = run_serve(args)
    if code:
        raise typer.Exit(code)


@app.command()
def call(
    tool: Annotated[str, typer.Argument(help="Tool name (ChatMD aliases such as read_dir accepted).")],
    arguments: Annotated[
        str | None,
        typer.Argument(help="JSON arguments; @FILE reads them from a file, @- (or nothing) from stdin."),
    ] = None,
    root: Annotated[list[Path] | None, typer.Option("--root", help="Root directory (repeatable).")] = None,
    state_dir: StateOpt = None,
    allow_root: AllowOpt = None,
) -> None:
    """Run one tool and print its text output."""
    state = None if state_dir is None else str(state_dir)
    code = run_call(CallArgs(tool, arguments, [str(r) for r in root or []], state, [str(p) for p in allow_root or []]))
    if code:
        raise typer.Exit(code)


@app.command()
def tools(
    cost: Annotated[bool, typer.Option("--cost", help="Show the token cost of each advertised schema.")] = False,
    profile: ProfileOpt = None,
    state_dir: StateOpt = None,
    tools: ToolsOpt = None,
    exclude_tools: ExcludeOpt = None,
) -> None:
    """List the catalog `serve` advertises (and, with --cost, the token cost of its schemas)."""
    # lazy: only `call` and `tools` load the catalog (pydantic, the tool model: ~150 modules)
    from tooldeck.catalog import ToolSwitches, build_toolbox, config_switches
    from tooldeck.mcp.cost import schema_costs  # lazy: only `tools` counts schema tokens

    rt = _runtime(None, state_dir)
    try:
        switches = ToolSwitches.parse(tools, exclude_tools).over(config_switches(rt))
        box = build_toolbox(rt, profile, switches)
    except ValueError as exc:
        typer.echo(f"tooldeck: {exc}", err=True)
        raise typer.Exit(EXIT_USAGE) from exc
    rows = schema_costs(box) if cost else [(t.name, 0) for t in box]
    total = 0
    for (name, tokens), t in zip(rows, box, strict=True):
        summary = t.description.strip().splitlines()[0] if t.description.strip() else ""
        if cost:
            total += tokens
            typer.echo(f"{name:<22} {tokens:>6}  {summary[:70]}")
        else:
            typer.echo(f"{name:<22} {summary[:90]}")
    if cost:
        typer.echo(f"{'total':<22} {total:>6}  tokens (o200k) for {len(rows)} tool schemas")
        if profile != "core":  # the lean alternative, side by side
            core_box = build_toolbox(rt, "core", switches)
            core = sum(n for _, n in schema_costs(core_box))
            typer.echo(f"{'core':<22} {core:>6}  tokens with --profile core (its {len(list(core_box))} tools)")


@app.command()
def run(
    file: Annotated[Path, typer.Argument(help="The .chatmd file: its conversation, model config and tools.")],
    parallel_tool_calls: Annotated[
        bool,
        typer.Option("--parallel-tool-calls/--no-parallel-tool-calls", help="Run a turn's tool calls in parallel."),
    ] = True,
    state_dir: StateOpt = None,
) -> None:
    """Run a ChatMD file: call the model, run its tools, append the transcript to the file."""
    # lazy: only `run` loads the ChatMD host and the model client (~235 modules)
    from tooldeck.chatmd.runner import run_file

    announce_authority(os.getcwd(), state_dir)
    code = run_file(file, parallel=parallel_tool_calls, state_dir=state_dir)
    if code:
        raise typer.Exit(code)


workspace_app = typer.Typer(
    help="Your stored workspaces (roots are set by you: folders added here are trusted by every server).",
    no_args_is_help=True,
)
app.add_typer(workspace_app, name="workspace")


def _person_db(state_dir: Path | None):  # type: ignore[no-untyped-def]
    from tooldeck.state.tables import ContextDB  # lazy: only the workspace verbs load the tables (uuid, platform)

    return ContextDB(Store(state_dir if state_dir is not None else default_state_dir()))


def _person(action, *args: object) -> None:  # type: ignore[no-untyped-def]
    try:
        typer.echo(action(*args))
    except ToolError as exc:
        typer.echo(f"tooldeck: {exc.message}", err=True)
        raise typer.Exit(EXIT_TOOL_ERROR) from exc


@workspace_app.command("list")
def workspace_list(state_dir: StateOpt = None) -> None:
    """List stored workspaces and their folders."""
    from tooldeck import cli_workspace as person  # lazy: only the workspace verbs load it and its tables (~5 modules)

    _person(person.list_workspaces, _person_db(state_dir))


@workspace_app.command("add")
def workspace_add(
    name: Annotated[str, typer.Argument(help="Workspace name (created when missing).")],
    folder: Annotated[Path, typer.Argument(help="Folder to add.")],
    state_dir: StateOpt = None,
) -> None:
    """Add a folder to a workspace; model-facing tools may then switch to it."""
    from tooldeck import cli_workspace as person  # lazy: only the workspace verbs load it and its tables (~5 modules)

    _person(person.add_folder, _person_db(state_dir), name, str(folder))


@workspace_app.command("remove")
def workspace_remove(
    name: Annotated[str, typer.Argument(help="Workspace name or id.")],
    folder: Annotated[Path | None, typer.Argument(help="Folder to remove (omit to delete the workspace).")] = None,
    state_dir: StateOpt = None,
) -> None:
    """Remove a folder from a workspace, or delete the workspace."""
    from tooldeck import cli_workspace as person  # lazy: only the workspace verbs load it and its tables (~5 modules)

    _person(person.remove, _person_db(state_dir), name, str(folder) if folder is not None else None)


from tooldeck.cli_index import index_app, search  # noqa: E402  (index and search verbs, docs/index.md)

app.add_typer(index_app, name="index")
app.command("search")(search)
from tooldeck.cli_trust import trust_app  # noqa: E402  (tooldeck trust allow|list|revoke, docs/workspaces.md)

app.add_typer(trust_app, name="trust")
from tooldeck.cli_chat import chat  # noqa: E402  (tooldeck chat: the terminal UI, docs/chat.md)

app.command("chat")(chat)

from tooldeck.cli_settings import settings_app  # noqa: E402  (the person's settings verb, docs/workspaces.md)

app.add_typer(settings_app, name="settings")
from tooldeck.cli_connect import connect  # noqa: E402  (tooldeck connect CLIENT, docs/clients.md)

app.command("connect")(connect)


def main() -> None:
    os.environ.setdefault("PYTHONUNBUFFERED", "1")
    app()


if __name__ == "__main__":
    main()
