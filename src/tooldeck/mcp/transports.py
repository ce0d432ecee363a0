"""Running the MCP server over stdio or streamable HTTP.

HTTP binds to 127.0.0.1 by default (the SDK then enables DNS-rebinding
protection). Bound to any other address, every request must carry
``Authorization: Bearer <token>``: the token comes from
``TOOLDECK_HTTP_TOKEN`` or is generated and printed to stderr at startup.
"""

from __future__ import annotations

import contextlib
import hmac
import ipaddress
import os
import secrets
import sys
from collections.abc import Callable
from typing import Any

import anyio

from tooldeck.core.toolbox import Toolbox
from tooldeck.workspace.tokens import warm_up

LOOPBACK_NAMES = {"localhost", "127.0.0.1", "::1"}


def is_loopback(host: str) -> bool:
    if host in LOOPBACK_NAMES:
        return True
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:
        return False


ToolboxSource = Toolbox | Callable[[], Toolbox]


async def run_stdio(source: ToolboxSource) -> None:
    from mcp.server.stdio import stdio_server

    from tooldeck.mcp.server import Activity, Catalog, create_server
    from tooldeck.mcp.stdio import open_stdio

    catalog = Catalog(source)
    activity = Activity(warm_up)
    server = create_server(catalog, activity=activity)

    async def answer_pending() -> None:
        """At end of input: the requests already read get their answers."""
        with contextlib.suppress(Exception):
            await catalog.get()
        await activity.settled(timeout=60)

    async with open_stdio(answer_pending) as (stdin, stdout):
        streams: dict[str, Any] = {"stdin": stdin} if stdout is None else {"stdin": stdin, "stdout": stdout}
        async with stdio_server(**streams) as (read_stream, write_stream):
            catalog.start()  # built while the handshake is answered
            await server.run(read_stream, write_stream, server.create_initialization_options())


class BearerAuth:
    """ASGI middleware: 401 unless the request carries the bearer token."""

    def __init__(self, app: Any, token: str) -> None:
        self.app = app
        self.expected = f"Bearer {token}".encode()

    async def __call__(self, scope: dict[str, Any], receive: Any, send: Any) -> None:
        if scope["type"] == "http":
            headers = dict(scope.get("headers") or [])
            got = headers.get(b"authorization", b"")
            if not hmac.compare_digest(got, self.expected):
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


def http_app(toolbox: ToolboxSource, host: str, token: str | None, runtime: Any = None) -> Any:
    """The MCP app at /mcp; with ``runtime``, the web dashboard at / (same access rules)."""
    from tooldeck.mcp.server import Activity, create_server

    server = create_server(toolbox, activity=Activity(warm_up))
    app = server.streamable_http_app(host=host)
    if not is_loopback(host) and not token:
        raise ValueError("a bearer token is required when binding to a non-loopback address")
    guarded = BearerAuth(app, token) if token else app
    if runtime is None:
        return guarded
    from tooldeck.agents.audit import audit_log
    from tooldeck.web.app import with_dashboard

    if isinstance(toolbox, Toolbox):
        audit_log(runtime).watch(toolbox, "mcp")
    return with_dashboard(guarded, runtime, loopback=is_loopback(host), token=token)


def resolve_token(host: str) -> str | None:
    token = os.environ.get("TOOLDECK_HTTP_TOKEN") or None
    if token is None and not is_loopback(host):
        token = secrets.token_urlsafe(24)
        print(f"tooldeck: bearer token for http://{host}/mcp: {token}", file=sys.stderr, flush=True)
    return token


async def run_http(toolbox: ToolboxSource, host: str, port: int, runtime: Any = None) -> None:
    import uvicorn

    token = resolve_token(host)
    box = toolbox if isinstance(toolbox, Toolbox) else toolbox()  # HTTP: no race to win, build first
    app = http_app(box, host, token, runtime)
    config = uvicorn.Config(
        app, host=host, port=port, log_level="warning", lifespan="on", timeout_graceful_shutdown=3
    )  # a dashboard's open event stream must not hold a shutdown
    server = uvicorn.Server(config)
    print(f"tooldeck: serving MCP at http://{host}:{port}/mcp", file=sys.stderr, flush=True)
    if runtime is not None:
        print(f"tooldeck: dashboard at http://{host}:{port}/", file=sys.stderr, flush=True)
    await server.serve()


def parse_http(value: str) -> tuple[str, int]:
    """``HOST:PORT`` (``[::1]:PORT``; an empty host means 127.0.0.1) → (host, port)."""
    host, sep, port = value.rpartition(":")
    if not sep or not port.isdigit() or not 0 <= int(port) <= 65535:
        raise ValueError(f"--http takes HOST:PORT, e.g. 127.0.0.1:8765 (got {value!r})")
    return host.strip("[]") or "127.0.0.1", int(port)


def serve(toolbox: ToolboxSource, bind: tuple[str, int] | None = None, runtime: Any = None) -> None:
    """Serve over stdio, or over streamable HTTP at ``bind`` = (host, port)
    (with ``runtime``, the web dashboard too). ``toolbox`` may be a factory:
    the catalog is then built while serving."""
    if bind is None:
        anyio.run(run_stdio, toolbox)
        return
    anyio.run(run_http, toolbox, *bind, runtime)
