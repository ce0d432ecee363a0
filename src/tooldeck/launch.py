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
    allow_roots: list[str] = field(default_factory=list)


_OPTIONS = {"--http": "http", "--prompts": "prompts", "--profile": "profile", "--state-dir": "state_dir"}
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


def _usage(message: str) -> int:
    print(f"tooldeck: {message}", file=sys.stderr)
    return EXIT_USAGE


def allowed_parents(extra: list[str]) -> list[str]:
    """The parents the person allows beyond the launch roots: ``allow_roots``
    of the user's config file (never a project file) plus ``--allow-root``.
    Raises ValueError (ConfigError) for a malformed config file."""
    from tooldeck.config import load_config

    return [*(str(p) for p in load_config(None).allow_roots), *extra]


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
        allowed = allowed_parents(args.allow_roots)
        rt = Runtime.for_dirs(args.roots or None, state_dir=args.state_dir, allow_roots=allowed)
    except (FileNotFoundError, ValueError) as exc:  # a missing root, a bad config file
        return _usage(str(exc))
    if args.prompts is not None:
        rt.settings["prompts_dir"] = args.prompts
    from tooldeck.mcp.transports import serve

    extras = _server_extras(rt, args.prompts)
    try:
        # a factory: over stdio the catalog is built while the handshake is answered
        serve(lambda: build_toolbox(rt.start(), args.profile), bind, extras, runtime=rt)
    except KeyboardInterrupt:
        pass
    return 0


def _server_extras(rt: object, prompts: str | None) -> object:
    """Prompts (``--prompts``, ``$MCP_PROMPTS_DIR`` or ``./prompts``) and resources."""
    from tooldeck.mcp.prompts import resolve_prompts_dir
    from tooldeck.mcp.server_extras import ServerExtras

    directory = resolve_prompts_dir(prompts)
    if directory is not None and not directory.is_dir():
        print(
            f"tooldeck: prompts directory {directory} does not exist yet; prompts appear once it does", file=sys.stderr
        )
    return ServerExtras(rt, directory)


def main() -> None:
    os.environ.setdefault("PYTHONUNBUFFERED", "1")
    argv = sys.argv[1:]
    if argv[:1] == ["serve"]:
        parsed = parse_serve(argv[1:])
        if parsed is not None:
            sys.exit(run_serve(parsed))
    from tooldeck.cli import main as cli_main

    cli_main()
