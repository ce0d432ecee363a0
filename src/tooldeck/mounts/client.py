"""MCP client mounts: a remote catalog as ordinary tooldeck tools.

``mount("stdio:npx -y @modelcontextprotocol/server-filesystem .")`` or
``mount("https://tools.example/mcp", include="weather")`` connects once and
returns a :class:`Mount` whose ``tools`` are normal :class:`Tool` objects:
same name, description, JSON Schema and annotations as the remote's; calling
one forwards the arguments, maps the result (text, images, structured
content, ``isError``) to an Output or a ToolError, and forwards the remote's
progress to the call's Invocation.

Behaviour (SPEC §6, seed 000):

* one long-lived session per mount, on the mount loop (:mod:`client_loop`);
* the catalog is cached for five minutes per mount (per declaration, never
  shared because two declarations name the same server), and
  ``notifications/tools/list_changed`` marks it stale at once (the flag is
  cleared before each refetch, so a notice arriving during one is kept);
* a selected tool the catalog lacks triggers one refresh, then a clear error;
* a server that dies is restarted once (an HTTP endpoint that fails is
  reconnected to once); after a second failure its tools fail
  with ``unavailable`` naming the server and its last stderr lines.
"""

from __future__ import annotations

import asyncio
import logging
import time
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

import mcp_types as types
from mcp.shared.exceptions import MCPError

from tooldeck.core.decode import parse_arguments
from tooldeck.core.errors import ErrorCode, ToolError
from tooldeck.core.invocation import Invocation
from tooldeck.core.output import Output
from tooldeck.core.tool import RawArguments, Tool
from tooldeck.mounts import loop as client_loop
from tooldeck.mounts.convert import annotations_of, local_name, progress_forwarder, schema_of, to_output
from tooldeck.mounts.session import Connection, first_leaf
from tooldeck.mounts.spec import MountError, Selection, Target, parse_target

log = logging.getLogger("tooldeck.mounts.client")

CATALOG_TTL = 300.0
CONNECT_TIMEOUT = 30.0


# what the SDK writes when a reply was not MCP: it quotes the reply (a body inside a
# validation error, a content-type header), which a message must never carry (SPEC §3)
_QUOTES_THE_REPLY = ("Failed to parse", "Unexpected content type")


def shown_error(exc: BaseException) -> str:
    """An error of a mount as a message may show it: a remote's own JSON-RPC
    error text, but nothing the SDK quotes from a reply that was not MCP, and
    only the status of an HTTP error (not the reason phrase the server chose)."""
    status = getattr(getattr(exc, "response", None), "status_code", None)
    if isinstance(status, int) and not isinstance(exc, MCPError):
        return f"HTTP {status}"
    message = exc.message if isinstance(exc, MCPError) else str(exc)
    if isinstance(exc, MCPError) and (exc.code == types.PARSE_ERROR or message.startswith(_QUOTES_THE_REPLY)):
        return "the server's reply was not MCP (what it sent is not shown)"
    return message


class RemoteServer:
    """The remote side of one mount: its connection (restarted at most
    ``max_restarts`` times) and its catalog cache."""

    def __init__(
        self,
        target: Target,
        *,
        env: Mapping[str, str] | None = None,
        cwd: str | None = None,
        ttl: float = CATALOG_TTL,
        max_restarts: int = 1,
        connect_timeout: float = CONNECT_TIMEOUT,
    ) -> None:
        self.target = target
        self._env, self._cwd = env, cwd
        self.ttl = ttl
        self.max_restarts = max_restarts
        self.connect_timeout = connect_timeout
        self.restarts = 0
        self.fetches = 0  # tools/list round trips, for callers that want to see the cache work
        self._conn: Connection | None = None
        self._conn_lock = asyncio.Lock()
        self._fetch_lock = asyncio.Lock()
        self._catalog: dict[str, types.Tool] | None = None
        self._fetched_at = 0.0
        self.stale = False
        self.closed = False

    @property
    def label(self) -> str:
        return self.target.label

    @property
    def restart_word(self) -> str:
        """A child process is restarted; an HTTP endpoint is reconnected to."""
        return "restarted" if self.target.kind == "stdio" else "reconnected"

    @property
    def connected(self) -> bool:
        return self._conn is not None and self._conn.alive

    def invalidate(self) -> None:
        """Mark the catalog stale (``tools/list_changed``); the next access refetches."""
        self.stale = True

    async def start(self) -> None:
        await self._live()

    async def close(self) -> None:
        self.closed = True
        async with self._conn_lock:
            conn, self._conn = self._conn, None
        if conn is not None:
            await conn.close()

    # connection ---------------------------------------------------------------
    async def _open(self) -> Connection:
        conn = Connection(self.target, env=self._env, cwd=self._cwd, on_list_changed=self.invalidate)
        try:
            await conn.open(self.connect_timeout)
        except Exception as exc:
            detail = first_leaf(exc)
            tail = conn.stderr_tail()
            raise MountError(
                f"cannot connect to MCP server {self.label}: {type(detail).__name__}: {shown_error(detail)}"
                + (f"\nits stderr ends with:\n{tail}" if tail else "")
            ) from exc
        return conn

    async def _live(self) -> Connection:
        """The live connection: opened on first use, restarted once after a death."""
        async with self._conn_lock:
            if self.closed:
                raise ToolError(ErrorCode.UNAVAILABLE, f"the mount of {self.label} was closed")
            conn = self._conn
            if conn is not None and conn.alive:
                return conn
            if conn is None and self.restarts == 0 and self._catalog is None:
                self._conn = await self._open()
                return self._conn
            tail = conn.stderr_tail() if conn is not None else ""
            if conn is not None:
                await conn.close()
                self._conn = None
            if self.restarts >= self.max_restarts:
                raise ToolError(
                    ErrorCode.UNAVAILABLE,
                    f"MCP server {self.label} stopped and was already {self.restart_word} {self.restarts} time(s); "
                    "its tools are unavailable for the rest of this session. Use other tools."
                    + (f"\nits stderr ends with:\n{tail}" if tail else ""),
                )
            self.restarts += 1
            log.warning("%s stopped; restarting it (restart %d of %d)", self.label, self.restarts, self.max_restarts)
            self.stale = True  # a restarted server may offer another catalog
            try:
                self._conn = await self._open()
            except MountError as exc:
                raise ToolError(ErrorCode.UNAVAILABLE, str(exc)) from exc
            return self._conn

    def _lost(self, conn: Connection) -> None:
        conn.alive = False

    # catalog ------------------------------------------------------------------
    async def catalog(self, *, refresh: bool = False) -> dict[str, types.Tool]:
        """The remote tools by name, from the cache unless stale, older than
        the TTL, or ``refresh``."""
        async with self._fetch_lock:
            fresh = self._catalog is not None and not self.stale and time.monotonic() - self._fetched_at < self.ttl
            if fresh and not refresh:
                assert self._catalog is not None
                return self._catalog
            conn = await self._live()
            self.stale = False  # cleared before the request: a notice during it is kept
            tools: dict[str, types.Tool] = {}
            cursor: str | None = None
            assert conn.session is not None
            try:
                while True:
                    params = types.PaginatedRequestParams(cursor=cursor) if cursor else None
                    page = await conn.session.list_tools(params=params)
                    tools.update((t.name, t) for t in page.tools)
                    cursor = page.next_cursor
                    if not cursor:
                        break
            except MCPError as exc:
                self.stale = True
                self._lost(conn)
                failed = f"tools/list on {self.label} failed: {shown_error(exc)}"
                raise ToolError(ErrorCode.UNAVAILABLE, failed) from exc
            self.fetches += 1
            self._catalog, self._fetched_at = tools, time.monotonic()
            return tools

    # calls --------------------------------------------------------------------
    async def call(self, remote: str, arguments: dict[str, Any], inv: Invocation) -> Output:
        await self._live()  # a dead server is restarted first, so the catalog check sees its catalog
        catalog = await self.catalog()
        if remote not in catalog:
            raise ToolError(
                ErrorCode.UNAVAILABLE,
                f"MCP server {self.label} no longer offers the tool {remote!r} (its catalog changed); "
                f"it offers: {', '.join(sorted(catalog)) or '(nothing)'}",
            )
        conn = await self._live()
        session = conn.session
        try:
            if session is None:  # it ended a moment ago
                raise MCPError(types.CONNECTION_CLOSED, "Connection closed")
            result = await session.call_tool(remote, arguments, progress_callback=progress_forwarder(inv))
        except MCPError as exc:
            if exc.code != types.CONNECTION_CLOSED and conn.alive:
                raise ToolError(ErrorCode.REMOTE_ERROR, f"{remote} on {self.label}: {shown_error(exc)}") from exc
            self._lost(conn)
            again = self.restarts < self.max_restarts
            raise ToolError(
                ErrorCode.UNAVAILABLE,
                f"MCP server {self.label} stopped during the call to {remote}"
                + (
                    f"; it will be {self.restart_word} on the next call: retry if the call is safe to repeat"
                    if again
                    else ""
                )
                + (f"\nits stderr ends with:\n{conn.stderr_tail()}" if conn.stderr_tail() else ""),
            ) from exc
        return to_output(result, self.label, remote)


def remote_tool(server: RemoteServer, remote: types.Tool, *, name: str, strict: bool) -> Tool:
    """A tooldeck Tool that forwards to ``remote`` on ``server``."""

    async def handler(arguments: dict[str, Any], inv: Invocation) -> Output:
        return await client_loop.run_here(server.call(remote.name, arguments, inv))

    def decode(raw: RawArguments) -> dict[str, Any]:
        return parse_arguments(raw)

    return Tool(
        name=name,
        description=remote.description or f"{remote.name} (from MCP server {server.label})",
        parameters=schema_of(remote),
        decode=decode,
        handler=handler,
        kind="function",
        strict=strict,
        annotations=annotations_of(remote),
    )


@dataclass
class Mount:
    """A connected remote catalog and the tools selected from it."""

    server: RemoteServer
    selection: Selection
    strict: bool = False
    prefix: str = ""
    tools: list[Tool] = field(default_factory=list)

    def __iter__(self) -> Iterator[Tool]:
        return iter(self.tools)

    def __len__(self) -> int:
        return len(self.tools)

    async def refresh(self, *, force: bool = False) -> list[Tool]:
        """Re-select the tools from the (cached unless stale) catalog: the way
        a host picks up a ``list_changed``. A selected name the catalog lacks
        triggers one refresh, then :class:`MountError`."""
        self.tools = await client_loop.run_here(self._select(force))
        return self.tools

    async def _select(self, force: bool) -> list[Tool]:
        catalog = await self.server.catalog(refresh=force)
        chosen, missing = self.selection.pick(list(catalog))
        if missing and not force:
            catalog = await self.server.catalog(refresh=True)
            chosen, missing = self.selection.pick(list(catalog))
        if missing:
            raise MountError(
                f"MCP server {self.server.label} has no tool named {', '.join(map(repr, missing))} "
                f"(checked again after a refresh); it offers: {', '.join(sorted(catalog)) or '(nothing)'}"
            )
        return [
            remote_tool(self.server, catalog[n], name=local_name(n, self.prefix), strict=self.strict) for n in chosen
        ]

    async def aclose(self) -> None:
        client_loop.unregister_closer(self.server.close)
        await client_loop.run_here(self.server.close())

    def close(self) -> None:
        client_loop.unregister_closer(self.server.close)
        client_loop.run_blocking(self.server.close())


async def amount(
    spec: str,
    *,
    name: str | None = None,
    include: str | Sequence[str] | None = None,
    strict: bool = False,
    client_id_env: str | None = None,
    client_secret_env: str | None = None,
    env: Mapping[str, str] | None = None,
    cwd: str | None = None,
    prefix: str = "",
    ttl: float = CATALOG_TTL,
    max_restarts: int = 1,
    connect_timeout: float = CONNECT_TIMEOUT,
) -> Mount:
    """Connect to ``spec`` and select its tools (see the module docstring).
    Raises :class:`MountError` for a bad spec, an unreachable server or a
    missing selected tool (after one refresh)."""
    import os

    environ = env if env is not None else os.environ
    target = parse_target(spec, client_id_env=client_id_env, client_secret_env=client_secret_env, env=environ)
    server = RemoteServer(
        target, env=environ, cwd=cwd, ttl=ttl, max_restarts=max_restarts, connect_timeout=connect_timeout
    )
    mount_ = Mount(server, Selection.of(name, include), strict=strict, prefix=prefix)

    async def connect() -> None:
        await server.start()
        try:
            mount_.tools = await mount_._select(force=False)
        except BaseException:
            await server.close()
            raise

    await client_loop.run_here(connect())
    client_loop.register_closer(server.close)
    return mount_


def mount(spec: str, **kwargs: Any) -> Mount:
    """Blocking :func:`amount` for scripts and sync loaders."""
    return client_loop.run_blocking(amount(spec, **kwargs))

