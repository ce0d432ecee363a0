"""The ``serve`` verb: its arguments and its run, shared by both command lines.

:mod:`tooldeck.launch` parses the common ``serve`` line itself (no CLI
framework: an MCP client spawns ``serve`` often and waits for it) and
:mod:`tooldeck.cli` parses every other form (``--help``, a line the fast
parser leaves to typer); both hand a :class:`ServeArgs` to :func:`run_serve`
here, so neither imports the other for it. The module imports nothing but the
standard library at its top: each path below imports only what it runs.
"""

from __future__ import annotations

import functools
import os
import sys
from dataclasses import asdict, dataclass, field
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from collections.abc import Callable

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
    # lazy: `serve` only; the other verbs never limit arenas nor defer the collector
    from tooldeck.mcp.lifecycle import defer_collection, limit_malloc_arenas

    limit_malloc_arenas()
    collect = defer_collection()  # put back at the hand-over to the SDK (the early front), else at once
    bind: tuple[str, int] | None = None
    limits = None
    if args.http is not None:
        # lazy: only `--http` loads the HTTP server and the SDK (~500 modules)
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
        return _serve_early(args, collect)
    collect()
    handshake = _handshake(args) if bind is None else None
    prepared = _prepare(args)
    if isinstance(prepared, int):
        return prepared
    rt, extras, box = prepared
    from tooldeck.catalog import build_toolbox  # lazy: the tool model (pydantic) only once `serve` runs
    from tooldeck.mcp.lifecycle import exit_now, exit_on_signals  # lazy: asyncio only once `serve` runs
    from tooldeck.mcp.transports import serve  # lazy: the SDK (~500 modules) only for HTTP and SDK-only stdio

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
    from tooldeck.mcp import early_steps  # lazy: the early front only for a stdio `serve`
    from tooldeck.mcp.handshake_front import stdin_is_pipe  # lazy: json, hashlib only for a stdio `serve`

    return early_steps.enabled() and stdin_is_pipe()


def _serve_early(args: ServeArgs, collect: Callable[[], None]) -> int:
    """Serve stdio through the early front (:mod:`tooldeck.mcp.early`);
    ``collect`` puts the garbage collector back once the SDK has loaded."""
    import asyncio

    from tooldeck.mcp import early_serve, early_steps  # lazy: the early front (asyncio) only for a stdio `serve`
    from tooldeck.mcp.lifecycle import exit_now, exit_on_signals  # lazy: asyncio only once `serve` runs

    exit_on_signals()  # SIGINT/SIGTERM: stop at once, worker processes first
    handshake = _handshake(args)

    import threading

    start_lock = threading.Lock()  # Runtime.start returns at once to a second caller: it must wait

    def started(rt: Runtime) -> Runtime:
        with start_lock:
            return rt.start(confinement=False)  # said by prepare, once the early answers are out

    def build(rt: Runtime) -> object:
        # lazy: the catalog loads on the start-up thread, after the front's first answers
        from tooldeck.catalog import build_toolbox

        return build_toolbox(started(rt), args.profile, shared=True)

    def build_domain(rt: Runtime, domain: str, name: str) -> object:
        # lazy: a first call's domain loads on the start-up thread, after the first answers
        from tooldeck.catalog import build_domain_toolbox

        return build_domain_toolbox(started(rt), domain, args.profile, name)

    def declare(rt: Runtime) -> object:
        return _declared(rt, args, lambda domain: _live_domain(started(rt), domain))

    plan = early_serve.Plan(
        cache=handshake[0] if handshake is not None else None,
        prompts=early_steps.prompts_served(args.prompts),
        runtime=lambda: _runtime(args),
        prepare=lambda rt: _prepare(args, worker=False, rt=rt, confinement=True),
        start=started,
        restore=lambda rt: rt.start_workspace(),
        build=build,
        build_domain=build_domain,
        load_sdk=_load_sdk,
        worker=_start_worker,
        declare=declare,
        loaded=collect,
    )

    async def main() -> None:
        exit_now(await early_serve.serve(plan))  # the answers are out: skip the interpreter's slow finalisation

    asyncio.run(main())
    return 0


def _declared(rt: Runtime, args: ServeArgs, live: object) -> object:
    """The tools ``serve`` will list, from the shipped declarations
    (:mod:`tooldeck.mcp.declared`), or None when the catalog must say."""
    from tooldeck.config import ConfigError, load_config  # lazy: the config files, after the front's first answers
    from tooldeck.mcp.declared import declared_tools  # lazy: the shipped declarations only for a stdio `serve`
    from tooldeck.profiles import ToolSwitches  # lazy: the switches only once the declarations are asked for

    try:
        config = load_config(rt.workspace.primary.path, state_dir=rt.state_dir)
    except ConfigError:
        return None  # the catalog's path reports it
    switches = ToolSwitches.parse(args.tools, args.exclude_tools)
    return declared_tools(rt.workspace, config.data, args.profile, switches, live)  # type: ignore[arg-type]


def _live_domain(rt: Runtime, domain: str) -> list[dict[str, object]]:
    """A domain's tools built now, in wire form (shared with the catalog's build)."""
    from tooldeck.catalog import build_tools  # lazy: the tool model (pydantic) only when a domain is built live
    from tooldeck.mcp.wire import tool_wire  # lazy: the wire form only when a domain is built live

    return [tool_wire(t) for t in build_tools(rt, (domain,), urgent=True, shared=True)]


def _load_sdk() -> None:
    """The stdio server's modules (the SDK), imported here on purpose: the
    early front calls this after its first answers, the SDK-only path at once."""
    import anyio._backends._asyncio  # noqa: F401  # else anyio imports it at its first task group: ~8 ms on the loop
    import mcp.server.stdio  # noqa: F401

    import tooldeck.mcp.server  # lazy: importing the SDK's server is this function's job
    import tooldeck.mcp.transports  # noqa: F401  # lazy: its transports too (anyio, the SDK's stdio)


WORKER_DELAY = 3.0  # s: the token worker starts then, or at the first count (tokens.arm_worker says why)


def _start_worker() -> None:
    from tooldeck.tokens import arm_worker  # lazy: `chat` and the CLI verbs start without the token worker's module

    arm_worker(WORKER_DELAY)  # the encoder loads in a child process on another core, once it is wanted


def _prepare(
    args: ServeArgs, sdk: bool = False, worker: bool = True, rt: Runtime | None = None, confinement: bool = False
) -> tuple[Runtime, object, object] | int:
    """The runtime, the server extras and the catalog when single tools are
    switched (built here: an unknown tool name is a usage error before
    serving; else None, built while serving), or an exit status for a usage
    error. ``sdk``: also import the stdio server's modules (the SDK) now;
    ``worker``: start the token worker now; ``rt``: the runtime
    :func:`_runtime` made already; ``confinement``: say in the log how helper
    processes are confined (what ``Runtime.start`` does unless told not to)."""
    from tooldeck.profiles import PROFILES  # lazy: the profile names only once `serve` runs

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
    if confinement:
        from tooldeck.confine import helpers  # lazy: confinement is said after the early front's first answers

        helpers.mode()
    if sdk:
        _load_sdk()
    if worker:
        _start_worker()  # after the heavy imports: a busy machine gives them the CPU first
    return rt, extras, box


def _runtime(args: ServeArgs) -> Runtime | int:
    """The runtime of ``serve`` (roots, state, trust boundary), or the exit
    status of a usage error; light: the tool model and catalog are not loaded."""
    from tooldeck.runtime import Runtime  # lazy: the store and confine load after the front's first answers
    from tooldeck.startup import allowed_parents, announce_authority  # lazy: the config files, after them too

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
    # lazy: the person's tool switches need the catalog: after the front's first answers
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
    from tooldeck.mcp import handshake_cache as hc  # lazy: the handshake cache (json, hashlib) only for a stdio `serve`

    if not hc.enabled():
        return None
    key = hc.cache_key(asdict(args), args.roots, args.prompts)
    return hc.HandshakeCache.load(hc.cache_path(hc.state_dir(args.state_dir), key), key), None


def _server_extras(rt: object, prompts: str | None) -> object:
    """Prompts (``--prompts``, ``$MCP_PROMPTS_DIR`` or ``./prompts``) and resources."""
    from tooldeck.mcp.prompts import resolve_prompts_dir  # lazy: after the early front's first answers
    from tooldeck.mcp.server_extras import ServerExtras  # lazy: prompts, resources: after the first answers

    directory = resolve_prompts_dir(prompts)
    if directory is not None and not directory.is_dir():
        print(
            f"tooldeck: prompts directory {directory} does not exist yet; prompts appear once it does", file=sys.stderr
        )
    return ServerExtras(rt, directory, agent_factory=_chatmd_agent, notices=_chatmd_notices)


def _dashboard(rt: Runtime, app: object, toolbox: object, *, loopback: bool, token: str | None) -> object:
    """The web dashboard beside the MCP app of ``serve --http`` (its activity
    feed watches the served catalog), handed to the MCP host from here."""
    from tooldeck.agents.audit import audit_log  # lazy: the dashboard's activity feed only for `serve --http`
    from tooldeck.core.toolbox import Toolbox  # lazy: the tool model only for the dashboard of `serve --http`
    from tooldeck.dashboard.app import with_dashboard  # lazy: the dashboard (~360 modules) only for `serve --http`

    if isinstance(toolbox, Toolbox):
        audit_log(rt).watch(toolbox, "mcp")
    return with_dashboard(app, rt, loopback=loopback, token=token)


# The ChatMD parts of the MCP server, handed in here so that mcp/ never imports
# chatmd/ (hosts stand side by side); each loads ChatMD on first use only.
def _chatmd_agent(path: object, rt: object, **kwargs: object) -> object:
    """A prompt of the prompts directory as a ChatMD agent tool."""
    from tooldeck.chatmd.agents import agent_tool  # lazy: ChatMD only when a served prompt becomes an agent tool
    from tooldeck.chatmd.session import prepare  # lazy: the model client only for a served prompt's agent

    return agent_tool(path, rt, prepare=prepare, **kwargs)  # type: ignore[arg-type]


def _chatmd_notices(path: object, data: bytes, workspace: object, state_dir: object) -> list[str]:
    """What a prompt file declares and will be refused for want of authority."""
    from tooldeck.chatmd.asks import notices_for  # lazy: ChatMD's authority rules only when a prompt file is read

    return list(notices_for(path, data, workspace, state_dir))  # type: ignore[arg-type]
