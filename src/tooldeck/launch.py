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

import functools
import os
import sys
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from tooldeck.mcp.handshake_cache import HandshakeCache
    from tooldeck.runtime import Runtime

EXIT_USAGE = 2


@dataclass
class ServeArgs:
    roots: list[str] = field(default_factory=list)
    http: str | None = None
    prompts: str | None = None
    profile: str | None = None
    state_dir: str | None = None
    allow_roots: list[str] = field(default_factory=list)
    tools: str | None = None  # --tools a,b (comma-separated tool names)
    exclude_tools: str | None = None  # --exclude-tools c
    session_idle: str | None = None  # --session-idle SECONDS (HTTP)
    max_sessions: str | None = None  # --max-sessions N (HTTP)


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


def _usage(message: str) -> int:
    print(f"tooldeck: {message}", file=sys.stderr)
    return EXIT_USAGE


def run_serve(args: ServeArgs) -> int:
    """Serve the catalog over MCP (stdio, or HTTP with ``args.http``); returns
    the exit status (2 for a usage error found before serving).

    Over a piped stdin (what a client gives) the early front answers while
    the runtime, the catalog and then the SDK load (:mod:`tooldeck.mcp.early`).

    First, before any thread exists: one glibc malloc arena for the whole
    server (:func:`tooldeck.mcp.lifecycle.limit_malloc_arenas`). A thread
    that allocated before the limit keeps an arena of its own, so set later
    (the early front's start-up thread, the token worker's reader) it left
    two."""
    from tooldeck.mcp.lifecycle import limit_malloc_arenas

    limit_malloc_arenas()
    bind: tuple[str, int] | None = None
    limits = None
    if args.http is not None:
        from tooldeck.mcp.transports import parse_http, parse_limits

        try:
            bind = parse_http(args.http)
            limits = parse_limits(args.session_idle, args.max_sessions)
        except ValueError as exc:
            return _usage(str(exc))
    elif args.session_idle is not None or args.max_sessions is not None:
        return _usage("--session-idle and --max-sessions apply to HTTP sessions: add --http HOST:PORT")
    if bind is None and _stdin_is_terminal():
        _explain_stdio(args)
    if bind is None and _early(args):
        return _serve_early(args)
    handshake = _handshake(args) if bind is None else None
    prepared = _prepare(args)
    if isinstance(prepared, int):
        return prepared
    rt, extras, box = prepared
    from tooldeck.catalog import build_toolbox
    from tooldeck.mcp.lifecycle import exit_now, exit_on_signals
    from tooldeck.mcp.transports import serve

    exit_on_signals()  # SIGINT/SIGTERM: stop at once, worker processes first
    try:
        # a factory: over stdio the catalog is built while the handshake is answered
        source = box if box is not None else (lambda: build_toolbox(rt.start(), args.profile))
        serve(source, bind, extras, dashboard=functools.partial(_dashboard, rt), handshake=handshake, limits=limits)
    except KeyboardInterrupt:
        pass
    exit_now(0)  # the end of input (stdio): the answers are out; skip the interpreter's slow finalisation


def _stdin_is_terminal() -> bool:
    try:
        return os.isatty(0)
    except OSError:
        return False


def _explain_stdio(args: ServeArgs) -> None:
    """A person started the stdio server in a terminal (``scripts/serve.sh``):
    say on stderr what it waits for and the line a client needs, instead of
    sitting there silently. Clients start it with a pipe and never see this."""
    import json
    import shlex

    here = os.path.abspath(sys.argv[0]) if sys.argv and sys.argv[0] else ""
    command = [here] if here and not here.endswith(("__main__.py", ".pyz")) else [sys.executable, "-m", "tooldeck"]
    argv = [*command[1:], "serve", *(os.path.abspath(r) for r in (args.roots or [os.getcwd()]))]
    for flag, value in (("--profile", args.profile), ("--prompts", args.prompts), ("--tools", args.tools),
                        ("--exclude-tools", args.exclude_tools), ("--state-dir", args.state_dir)):  # fmt: skip
        if value:
            argv += [flag, value]
    for parent in args.allow_roots:
        argv += ["--allow-root", parent]
    entry = json.dumps({"mcpServers": {"tooldeck": {"command": command[0], "args": argv}}})
    print(
        "tooldeck: MCP server on stdio, waiting for a client to speak JSON-RPC on stdin (Ctrl-C to stop).\n"
        "tooldeck: an MCP client starts it by itself; add this to its configuration:\n"
        f"  {entry}\n"
        f"tooldeck: or, for Claude Code: claude mcp add tooldeck -- {shlex.join([command[0], *argv])}\n"
        "tooldeck: to serve over HTTP instead: --http 127.0.0.1:8765",
        file=sys.stderr,
        flush=True,
    )


def _early(args: ServeArgs) -> bool:
    from tooldeck.mcp import early
    from tooldeck.mcp.handshake_front import stdin_is_pipe

    return early.enabled() and stdin_is_pipe()


def _serve_early(args: ServeArgs) -> int:
    """Serve stdio through the early front (:mod:`tooldeck.mcp.early`)."""
    import asyncio

    from tooldeck.mcp import early
    from tooldeck.mcp.lifecycle import exit_now, exit_on_signals

    exit_on_signals()  # SIGINT/SIGTERM: stop at once, worker processes first
    handshake = _handshake(args)

    import threading

    start_lock = threading.Lock()  # Runtime.start returns at once to a second caller: it must wait

    def started(rt: Runtime) -> Runtime:
        with start_lock:
            return rt.start()

    def build(rt: Runtime) -> object:
        from tooldeck.catalog import build_toolbox

        return build_toolbox(started(rt), args.profile)

    def build_domain(rt: Runtime, domain: str) -> object:
        from tooldeck.catalog import build_domain_toolbox

        return build_domain_toolbox(started(rt), domain, args.profile)

    plan = early.Plan(
        cache=handshake[0] if handshake is not None else None,
        prompts=early.prompts_served(args.prompts),
        runtime=lambda: _runtime(args),
        prepare=lambda rt: _prepare(args, worker=False, rt=rt),
        start=started,
        build=build,
        build_domain=build_domain,
        load_sdk=_load_sdk,
        worker=_start_worker,
    )

    async def main() -> None:
        exit_now(await early.serve(plan))  # the answers are out: skip the interpreter's slow finalisation

    asyncio.run(main())
    return 0


def _load_sdk() -> None:
    """The stdio server's modules (the SDK)."""
    import mcp.server.stdio  # noqa: F401

    import tooldeck.mcp.server
    import tooldeck.mcp.transports  # noqa: F401


def _start_worker() -> None:
    from tooldeck.tokens import start_worker

    start_worker()  # the encoder loads in a child process on another core from here on


def _prepare(
    args: ServeArgs, sdk: bool = False, worker: bool = True, rt: Runtime | None = None
) -> tuple[Runtime, object, object] | int:
    """The runtime, the server extras and the catalog when single tools are
    switched (built here: an unknown tool name is a usage error before
    serving; else None, built while serving), or an exit status for a usage
    error. ``sdk``: also import the stdio server's modules (the SDK) now;
    ``worker``: start the token worker now; ``rt``: the runtime
    :func:`_runtime` made already."""
    from tooldeck.catalog import PROFILES

    if args.profile is not None and args.profile not in PROFILES:
        return _usage(f"unknown profile {args.profile!r}; choose one of {', '.join(PROFILES)}")
    if rt is None:
        made = _runtime(args)
        if isinstance(made, int):
            return made
        rt = made
    extras = _server_extras(rt, args.prompts)
    box = _switched_catalog(rt, args)
    if isinstance(box, int):
        return box
    if sdk:
        _load_sdk()
    if worker:
        _start_worker()  # after the heavy imports: a busy machine gives them the CPU first
    return rt, extras, box


def _runtime(args: ServeArgs) -> Runtime | int:
    """The runtime of ``serve`` (roots, state, trust boundary), or the exit
    status of a usage error; light: the tool model and catalog are not loaded."""
    from tooldeck.runtime import Runtime
    from tooldeck.startup import allowed_parents, announce_authority

    try:
        allowed = allowed_parents(args.allow_roots)
        rt = Runtime.for_dirs(args.roots or None, state_dir=args.state_dir, allow_roots=allowed)
    except (FileNotFoundError, ValueError) as exc:  # a missing root, a bad config file
        return _usage(str(exc))
    announce_authority(rt.workspace.primary.path, rt.state_dir)
    if args.prompts is not None:
        rt.settings["prompts_dir"] = args.prompts
    return rt


def _switched_catalog(rt: Runtime, args: ServeArgs) -> object | int | None:
    """The catalog with the person's single-tool switches (``--tools``,
    ``--exclude-tools``, ``[tools]`` in the config files), None when there
    are none, or the exit status of a usage error (an unknown tool name)."""
    from tooldeck.catalog import ToolSwitches, build_toolbox, config_switches

    try:
        switches = ToolSwitches.parse(args.tools, args.exclude_tools).over(config_switches(rt))
        if switches == ToolSwitches():
            return None
        return build_toolbox(rt.start(), args.profile, switches)
    except ValueError as exc:
        return _usage(str(exc))


def _handshake(args: ServeArgs) -> tuple[HandshakeCache, None] | None:
    """(HandshakeCache, None) for a stdio server, None when the cache is off
    (``TOOLDECK_HANDSHAKE_CACHE=0``). The early front answers from it; the
    SDK path records it."""
    from dataclasses import asdict

    from tooldeck.mcp import handshake_cache as hc

    if not hc.enabled():
        return None
    key = hc.cache_key(asdict(args), args.roots, args.prompts)
    return hc.HandshakeCache.load(hc.cache_path(hc.state_dir(args.state_dir), key), key), None


def _server_extras(rt: object, prompts: str | None) -> object:
    """Prompts (``--prompts``, ``$MCP_PROMPTS_DIR`` or ``./prompts``) and resources."""
    from tooldeck.mcp.prompts import resolve_prompts_dir
    from tooldeck.mcp.server_extras import ServerExtras

    directory = resolve_prompts_dir(prompts)
    if directory is not None and not directory.is_dir():
        print(
            f"tooldeck: prompts directory {directory} does not exist yet; prompts appear once it does", file=sys.stderr
        )
    return ServerExtras(rt, directory, agent_factory=_chatmd_agent, notices=_chatmd_notices)


def _dashboard(rt: Runtime, app: object, toolbox: object, *, loopback: bool, token: str | None) -> object:
    """The web dashboard beside the MCP app of ``serve --http`` (its activity
    feed watches the served catalog), handed to the MCP host from here."""
    from tooldeck.agents.audit import audit_log
    from tooldeck.core.toolbox import Toolbox
    from tooldeck.dashboard.app import with_dashboard

    if isinstance(toolbox, Toolbox):
        audit_log(rt).watch(toolbox, "mcp")
    return with_dashboard(app, rt, loopback=loopback, token=token)


# The ChatMD parts of the MCP server, handed in here so that mcp/ never imports
# chatmd/ (hosts stand side by side); each loads ChatMD on first use only.
def _chatmd_agent(path: object, rt: object, **kwargs: object) -> object:
    """A prompt of the prompts directory as a ChatMD agent tool."""
    from tooldeck.chatmd.agents import agent_tool

    return agent_tool(path, rt, **kwargs)  # type: ignore[arg-type]


def _chatmd_notices(path: object, data: bytes, workspace: object, state_dir: object) -> list[str]:
    """What a prompt file declares and will be refused for want of authority."""
    from tooldeck.chatmd.asks import notices_for

    return list(notices_for(path, data, workspace, state_dir))  # type: ignore[arg-type]


def main() -> None:
    os.environ.setdefault("PYTHONUNBUFFERED", "1")
    argv = sys.argv[1:]
    if argv[:1] == ["serve"]:
        parsed = parse_serve(argv[1:])
        if parsed is not None:
            sys.exit(run_serve(parsed))
    if argv[:1] == ["chat"]:  # the chat's screen appears before typer could even load
        from tooldeck.tui.launch import parse_chat, run_chat

        chat = parse_chat(argv[1:])
        if chat is not None:
            sys.exit(run_chat(chat))
    from tooldeck.cli import main as cli_main

    cli_main()
