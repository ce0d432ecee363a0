"""The ``tooldeck`` entry point.

``tooldeck serve`` is what an MCP client spawns, often, and waits for: its
start-up time matters. So the common ``serve`` command line is parsed here
with a few lines of code and the server starts without importing the CLI
framework (typer + click, ~60 ms). Anything else, and any ``serve`` line this
parser does not fully understand (``--help``, an unknown option, a missing
value), goes to the full CLI in :mod:`tooldeck.cli`, which owns the usage
messages. Both paths run the same :func:`tooldeck.cli_serve.run_serve`.
"""

from __future__ import annotations

import os
import sys

from tooldeck.cli_line import split_line
from tooldeck.cli_serve import ServeArgs, run_serve

_OPTIONS = {
    "--http": "http", "--prompts": "prompts", "--profile": "profile", "--state-dir": "state_dir",
    "--tools": "tools", "--exclude-tools": "exclude_tools",
    "--session-idle": "session_idle", "--max-sessions": "max_sessions",
}  # fmt: skip
_LISTS = {"--allow-root": "allow_roots"}  # repeatable options


def parse_serve(args: list[str]) -> ServeArgs | None:
    """``serve`` arguments, or None to let the full CLI handle them."""
    split = split_line(args, _OPTIONS, _LISTS)
    if split is None:
        return None
    roots, named = split
    fields = {"prompts": os.environ.get("MCP_PROMPTS_DIR") or None, **named}  # --prompts wins over the variable
    return ServeArgs(roots=roots, **fields)  # type: ignore[arg-type]


def main() -> None:
    os.environ.setdefault("PYTHONUNBUFFERED", "1")
    argv = sys.argv[1:]
    if argv[:1] == ["serve"]:
        parsed = parse_serve(argv[1:])
        if parsed is not None:
            sys.exit(run_serve(parsed))
    if argv[:1] == ["call"]:  # scripts and agents run one tool a process: no typer (cli_call says why)
        from tooldeck.cli_call import parse_call, run_call  # lazy: only `call` runs a tool from here

        call = parse_call(argv[1:], dict(os.environ))
        if call is not None:
            sys.exit(run_call(call))
    if argv[:1] == ["chat"]:  # the chat's screen appears before typer could even load
        from tooldeck.tui.launch import parse_chat, run_chat  # lazy: `serve` never loads the chat's front

        chat = parse_chat(argv[1:])
        if chat is not None:
            sys.exit(run_chat(chat))
    from tooldeck.cli import main as cli_main  # lazy: `serve`, `call` and `chat` start without typer (~60 ms)

    cli_main()
