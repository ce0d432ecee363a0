"""The ``tooldeck`` entry point.

``tooldeck serve`` is what an MCP client spawns, often, and waits for: its
start-up time matters. So the common ``serve`` command line is parsed here
with a few lines of code and the server starts without importing the CLI
framework (typer + click, ~60 ms). Anything else, and any ``serve`` line this
parser does not fully understand (``--help``, an unknown option, a missing
value), goes to the full CLI in :mod:`tooldeck.cli`, which owns the usage
messages. Both paths run the same :func:`run_serve`.
"""

from __future__ import annotations

import os
import sys
from dataclasses import dataclass, field

EXIT_USAGE = 2


@dataclass
class ServeArgs:
    roots: list[str] = field(default_factory=list)
    http: str | None = None
    prompts: str | None = None
    profile: str | None = None
    state_dir: str | None = None


_OPTIONS = {"--http": "http", "--prompts": "prompts", "--profile": "profile", "--state-dir": "state_dir"}


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
            if name not in _OPTIONS:
                return None
            if not eq:
                if i + 1 >= len(args):
                    return None
                i += 1
                value = args[i]
            setattr(out, _OPTIONS[name], value)
        else:
            out.roots.append(arg)
        i += 1
    return out


def _usage(message: str) -> int:
    print(f"tooldeck: {message}", file=sys.stderr)
    return EXIT_USAGE


def run_serve(args: ServeArgs) -> int:
    """Serve the catalog over MCP (stdio, or HTTP with ``args.http``); returns
    the exit status (2 for a usage error found before serving)."""
    from tooldeck.mcp.transports import parse_http

    bind: tuple[str, int] | None = None
    if args.http is not None:
        try:
            bind = parse_http(args.http)
        except ValueError as exc:
            return _usage(str(exc))
    from tooldeck.catalog import PROFILES, build_toolbox
    from tooldeck.runtime import Runtime

    if args.profile is not None and args.profile not in PROFILES:
        return _usage(f"unknown profile {args.profile!r}; choose one of {', '.join(PROFILES)}")
    try:
        rt = Runtime.for_dirs(args.roots or None, state_dir=args.state_dir)
    except FileNotFoundError as exc:
        return _usage(str(exc))
    if args.prompts is not None:
        rt.settings["prompts_dir"] = args.prompts
    from tooldeck.mcp.transports import serve

    try:
        # a factory: over stdio the catalog is built while the handshake is answered
        serve(lambda: build_toolbox(rt, args.profile), bind, runtime=rt)
    except KeyboardInterrupt:
        pass
    return 0


def main() -> None:
    os.environ.setdefault("PYTHONUNBUFFERED", "1")
    argv = sys.argv[1:]
    if argv[:1] == ["serve"]:
        parsed = parse_serve(argv[1:])
        if parsed is not None:
            sys.exit(run_serve(parsed))
    from tooldeck.cli import main as cli_main

    cli_main()
