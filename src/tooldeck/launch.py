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

from tooldeck.cli_serve import ServeArgs, run_serve

_OPTIONS = {
    "--http": "http", "--prompts": "prompts", "--profile": "profile", "--state-dir": "state_dir",
    "--tools": "tools", "--exclude-tools": "exclude_tools",
    "--session-idle": "session_idle", "--max-sessions": "max_sessions",
}  # fmt: skip
_LISTS = {"--allow-root": "allow_roots"}  # repeatable options


def parse_serve(args: list[str]) -> ServeArgs | None:
    """``serve`` arguments, or None to let the full CLI handle them."""
    out = ServeArgs(prompts=os.environ.get("MCP_PROMPTS_DIR") or None)
    i = 0
    while i < len(args):
        arg = args[i]
        if arg == "--":
            out.roots.extend(args[i + 1 :])
            break
        if arg.startswith("-"):
            name, eq, value = arg.partition("=")
            if name not in _OPTIONS and name not in _LISTS:
                return None
            if not eq:
                if i + 1 >= len(args):
                    return None
                i += 1
                value = args[i]
            if name in _LISTS:
                getattr(out, _LISTS[name]).append(value)
            else:
                setattr(out, _OPTIONS[name], value)
        else:
            out.roots.append(arg)
        i += 1
    return out


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
