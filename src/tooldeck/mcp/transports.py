"""Running the MCP server over stdio or streamable HTTP.

HTTP binds to 127.0.0.1 by default (the SDK then enables DNS-rebinding
protection). Bound to any other address, every request must carry
``Authorization: Bearer <token>``: the token comes from
``TOOLDECK_HTTP_TOKEN`` or is generated and printed to stderr at startup.
"""

from __future__ import annotations

import asyncio
import contextlib
import hmac
import ipaddress
import os
import secrets
import sys
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import anyio
from mcp.server.stdio import stdio_server
from mcp_types.version import HANDSHAKE_PROTOCOL_VERSIONS, LATEST_HANDSHAKE_VERSION

from tooldeck.core.toolbox import Toolbox
from tooldeck.mcp.handshake_cache import HandshakeCache
from tooldeck.mcp.handshake_front import Tap
from tooldeck.mcp.lifecycle import (
    MAX_SESSIONS,
    SESSION_IDLE,
    DropWatch,
    InFlight,
    exit_now,
    grace_for,
    limit_malloc_arenas,
)
from tooldeck.mcp.server import Activity, Catalog, create_server
from tooldeck.mcp.stdio import open_stdio, sdk_streams
from tooldeck.tokens import warm_up

LOOPBACK_NAMES = {"localhost", "127.0.0.1", "::1"}


def is_loopback(host: str) -> bool:
    if host in LOOPBACK_NAMES:
        return True
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:
        return False


ToolboxSource = Toolbox | Callable[[], Toolbox]


async def run_stdio(source: ToolboxSource, extras: Any = None, handshake: Any = None) -> None:
    """The SDK answers everything (``TOOLDECK_EARLY_FRONT=0``, or stdin is no
    pipe). ``handshake``: (HandshakeCache, None) when the handshake cache is
    on: the SDK's answers are recorded in it."""
    limit_malloc_arenas()  # as run_http: a long-lived server's index fills run on worker threads
    catalog = Catalog(source)
    activity = Activity(warm_up)
    server = create_server(catalog, activity=activity, extras=extras)

    async def answer_pending() -> None:
        """At end of input: the requests already read get their answers."""
        with contextlib.suppress(Exception):
            await catalog.get()
        await activity.settled(timeout=60)

    async with (
        open_stdio(answer_pending, tap=_tap(handshake)) as (stdin, stdout),
        stdio_server(stdin=stdin, stdout=stdout) as (read_stream, write_stream),  # type: ignore[arg-type]
    ):
        catalog.start()  # built while the handshake is answered
        await server.run(read_stream, write_stream, server.create_initialization_options())


async def run_sdk_stdio(catalog: Any, activity: Any, extras: Any, readline: Any, raw: Any, front: Any) -> None:
    """The SDK server taking the stream over from the early front
    (:mod:`tooldeck.mcp.early`): ``readline`` yields the lines the front
    replays to it, then the live stream; ``raw`` is the writer both share."""
    server = create_server(catalog, activity=activity, extras=extras)

    async def answer_pending() -> None:
        """At end of input: the requests already read get their answers."""
        with contextlib.suppress(Exception):
            await catalog.get()
        await front.calls_done()
        await activity.settled(timeout=60)

    cache = front.cache if front.cache is not None else HandshakeCache("", {})  # no cache: the Tap still swallows
    tap = _tap((cache, front), persist=front.cache is not None)
    if front.dirty:  # answers the front built: written off the loop, awaited before the exit
        tap.save_now()
    stdin, stdout = sdk_streams(readline, raw, answer_pending, tap)
    async with stdio_server(stdin=stdin, stdout=stdout) as (read_stream, write_stream):  # type: ignore[arg-type]
        await server.run(read_stream, write_stream, server.create_initialization_options())
    if tap.writes:  # the end of input: what the Tap recorded is on disk before the exit
        await asyncio.gather(*tap.writes, return_exceptions=True)


def _tap(handshake: Any, persist: bool = True) -> Any:
    """The handshake tap: it records the SDK's answers in the cache (written
    in a worker thread, off the event loop) and settles the front's."""
    if handshake is None:
        return None
    cache, front = handshake
    cache.set_versions(list(HANDSHAKE_PROTOCOL_VERSIONS), LATEST_HANDSHAKE_VERSION)
    loop = asyncio.get_running_loop()

    def save() -> None:
        if persist:
            tap.writes.append(loop.run_in_executor(None, cache.writer()))  # the newest wins, whatever the order

    tap = Tap(cache, front, save)
    return tap


class BearerAuth:
    """ASGI middleware: 401 unless the request carries the bearer token."""

    def __init__(self, app: Any, token: str) -> None:
        self.app = app
        self.expected = token.encode()

    def authorized(self, header: bytes) -> bool:
        """``Bearer <token>``; the scheme is case-insensitive (RFC 7235)."""
        scheme, _, token = header.strip().partition(b" ")
        return scheme.lower() == b"bearer" and hmac.compare_digest(token.strip(), self.expected)

    async def __call__(self, scope: dict[str, Any], receive: Any, send: Any) -> None:
        if scope["type"] == "http":
            headers = dict(scope.get("headers") or [])
            if not self.authorized(headers.get(b"authorization", b"")):
                body = b'{"error":"unauthorized: send Authorization: Bearer <token>"}'
                await send(
                    {
                        "type": "http.response.start",
                        "status": 401,
                        "headers": [(b"content-type", b"application/json"), (b"www-authenticate", b"Bearer")],
                    }
                )
                await send({"type": "http.response.body", "body": body})
                return
        await self.app(scope, receive, send)


@dataclass(frozen=True)
class SessionLimits:
    """``serve --session-idle SECONDS`` and ``--max-sessions N`` (HTTP only)."""

    idle: float = SESSION_IDLE
    max_sessions: int = MAX_SESSIONS


# ``dashboard(app, toolbox, loopback=, token=)``: the app with the web dashboard
# at / (same access rules). The entry that starts the server hands it in
# (``launch.py``), so mcp/ never imports the dashboard host.
Dashboard = Callable[..., Any]


def http_app(
    toolbox: ToolboxSource,
    host: str,
    token: str | None,
    extras: Any = None,
    dashboard: Dashboard | None = None,
    limits: SessionLimits | None = None,
) -> Any:
    """The MCP app at /mcp; with ``dashboard``, the web dashboard at / (same access rules).
    ``limits``: when an idle session is closed, and how many may live at once."""
    limits = limits or SessionLimits()
    inflight = InFlight()
    server = create_server(toolbox, activity=Activity(warm_up), extras=extras, inflight=inflight)
    app = server.streamable_http_app(
        host=host,
        transport_security=loopback_security(host),
        session_idle_timeout=limits.idle,
        max_sessions=limits.max_sessions,
    )
    sessions = getattr(server, "_session_manager", None)
    app = DropWatch(app, inflight, sessions, limits.max_sessions, grace_for(limits.idle))
    if not is_loopback(host) and not token:
        raise ValueError("a bearer token is required when binding to a non-loopback address")
    guarded = BearerAuth(app, token) if token else app
    if dashboard is None:
        return guarded
    return dashboard(guarded, toolbox, loopback=is_loopback(host), token=token)


def loopback_security(host: str) -> Any:
    """DNS-rebinding protection for a loopback bind, as the SDK's default but
    also admitting a ``Host`` header without a port (``Host: 127.0.0.1`` is
    what some clients send for port 80 and what curl sends with ``-H``).
    None (the SDK's default) for other binds, which the bearer token guards."""
    if not is_loopback(host):
        return None
    from mcp.server.transport_security import TransportSecuritySettings

    names = ["127.0.0.1", "localhost", "[::1]"]
    if host not in ("127.0.0.1", "localhost", "::1"):
        names.append(url_host(host))
    return TransportSecuritySettings(
        enable_dns_rebinding_protection=True,
        allowed_hosts=[*names, *(f"{n}:*" for n in names)],
        allowed_origins=[*(f"http://{n}" for n in names), *(f"http://{n}:*" for n in names)],
    )


def url_host(host: str) -> str:
    """``host`` as it appears in a URL: an IPv6 address in brackets."""
    return f"[{host}]" if ":" in host and not host.startswith("[") else host


def mcp_url(host: str, port: int) -> str:
    return f"http://{url_host(host)}:{port}/mcp"


def resolve_token(host: str, port: int | None = None) -> str | None:
    token = os.environ.get("TOOLDECK_HTTP_TOKEN") or None
    if token is None and not is_loopback(host):
        token = secrets.token_urlsafe(24)
        where = mcp_url(host, port) if port is not None else f"http://{url_host(host)}/mcp"
        print(f"tooldeck: bearer token for {where}: {token}", file=sys.stderr, flush=True)
    return token


async def run_http(
    toolbox: ToolboxSource,
    host: str,
    port: int,
    extras: Any = None,
    dashboard: Dashboard | None = None,
    limits: SessionLimits | None = None,
) -> None:
    import uvicorn

    limit_malloc_arenas()  # a server that runs for days: freed heap is not kept per thread
    token = resolve_token(host, port)
    box = toolbox if isinstance(toolbox, Toolbox) else toolbox()  # HTTP: no race to win, build first
    app = http_app(box, host, token, extras, dashboard, limits)
    config = uvicorn.Config(
        app, host=host, port=port, log_level="warning", lifespan="on", timeout_graceful_shutdown=3
    )  # a dashboard's open event stream must not hold a shutdown
    server = _server_class()(config)
    print(f"tooldeck: serving MCP at {mcp_url(host, port)}", file=sys.stderr, flush=True)
    if dashboard is not None:
        print(f"tooldeck: dashboard at {mcp_url(host, port).removesuffix('mcp')}", file=sys.stderr, flush=True)
    await server.serve()


def _server_class() -> Any:
    import uvicorn

    class FastStop(uvicorn.Server):
        """SIGINT and SIGTERM stop the process at once (:func:`exit_now`):
        uvicorn's own handling waits for its next 0.1 s tick, then for open
        streams to close, then the interpreter's finalisation (~1.5 s in all)."""

        def handle_exit(self, sig: int, frame: Any) -> None:
            exit_now(0)

    return FastStop


def parse_http(value: str) -> tuple[str, int]:
    """``HOST:PORT`` (``[::1]:PORT``; an empty host means 127.0.0.1) → (host, port)."""
    host, sep, port = value.rpartition(":")
    if not sep or not port.isdigit() or not 0 <= int(port) <= 65535:
        raise ValueError(f"--http takes HOST:PORT, e.g. 127.0.0.1:8765 (got {value!r})")
    return host.strip("[]") or "127.0.0.1", int(port)


def parse_limits(idle: str | None, max_sessions: str | None) -> SessionLimits:
    """``--session-idle SECONDS`` and ``--max-sessions N`` (None: the default)."""
    limits = SessionLimits()
    if idle is not None:
        try:
            seconds = float(idle)
        except ValueError:
            seconds = -1.0
        if not 0 < seconds < 10**7:
            raise ValueError(f"--session-idle takes a number of seconds > 0, e.g. 300 (got {idle!r})")
        limits = SessionLimits(seconds, limits.max_sessions)
    if max_sessions is not None:
        if not max_sessions.isdigit() or int(max_sessions) < 1:
            raise ValueError(f"--max-sessions takes a whole number >= 1, e.g. 256 (got {max_sessions!r})")
        limits = SessionLimits(limits.idle, int(max_sessions))
    return limits


def serve(
    toolbox: ToolboxSource,
    bind: tuple[str, int] | None = None,
    extras: Any = None,
    dashboard: Dashboard | None = None,
    handshake: Any = None,
    limits: SessionLimits | None = None,
) -> None:
    """Serve over stdio, or over streamable HTTP at ``bind`` = (host, port)
    (with ``dashboard``, the web dashboard too: :data:`Dashboard`). ``toolbox`` may be a factory:
    the catalog is then built while serving. ``extras``: prompts, resources
    and agent tools (``ServerExtras``). ``handshake``: see :func:`run_stdio`
    (stdio only)."""
    if bind is None:
        anyio.run(run_stdio, toolbox, extras, handshake)
        return
    anyio.run(run_http, toolbox, *bind, extras, dashboard, limits)
