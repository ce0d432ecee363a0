"""One live MCP client session, owned by one background task.

The SDK's transports and ``ClientSession`` are anyio context managers: they
must be entered and exited by the same task. So a :class:`Connection` runs a
task on the mount loop that opens the transport (a child process over stdio,
or streamable HTTP), initializes the session, publishes it, and waits until
asked to close — then unwinds everything in order, which stops the child.

Two things are observed without any queue a tool call could compete for
(the seed's defect: wrappers draining the queue the invalidation listener
needed): ``notifications/tools/list_changed`` is handled by the session's
``message_handler`` callback, which only calls ``on_list_changed``
synchronously; and the end of the server's output (a child that died) is seen
by a small pump between the transport and the session, which marks the
connection dead at once.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import os
import tempfile
from collections.abc import Callable, Mapping
from typing import IO, Any

import anyio
import mcp_types as types
from mcp import ClientSession, StdioServerParameters, stdio_client

from tooldeck.mounts.spec import Target

log = logging.getLogger("tooldeck.mounts.client")

STDERR_TAIL = 2000


def first_leaf(exc: BaseException) -> BaseException:
    """The first real error inside (nested) exception groups: anyio task
    groups wrap a failed spawn or a refused connection in one."""
    while isinstance(exc, BaseExceptionGroup) and exc.exceptions:
        exc = exc.exceptions[0]
    return exc


class Connection:
    def __init__(
        self,
        target: Target,
        *,
        env: Mapping[str, str] | None = None,
        cwd: str | None = None,
        on_list_changed: Callable[[], None] = lambda: None,
        http_timeout: float = 60.0,
    ) -> None:
        self.target = target
        self._env = dict(env) if env is not None else dict(os.environ)
        self._cwd = cwd
        self._on_list_changed = on_list_changed
        self._http_timeout = http_timeout
        self.session: ClientSession | None = None
        self.alive = False
        self._stop = asyncio.Event()
        self._task: asyncio.Task[None] | None = None
        self._errlog: IO[str] | None = None

    async def open(self, timeout: float) -> None:
        """Start the owner task and wait for an initialized session (or raise
        what went wrong: a command that cannot start, a refused connection)."""
        ready: asyncio.Future[None] = asyncio.get_running_loop().create_future()
        self._task = asyncio.get_running_loop().create_task(self._own(ready))
        try:
            await asyncio.wait_for(asyncio.shield(ready), timeout)
        except BaseException:
            await self.close()
            raise

    async def close(self) -> None:
        self.alive = False  # a deliberate close is not a death
        self._stop.set()
        task, self._task = self._task, None
        if task is not None and not task.done():
            try:
                await asyncio.wait_for(task, 10)
            except (TimeoutError, asyncio.CancelledError, Exception):
                task.cancel()
        self.alive = False

    def stderr_tail(self) -> str:
        """The last lines the child wrote to stderr (for error messages)."""
        if self._errlog is None:
            return ""
        with contextlib.suppress(OSError, ValueError):
            self._errlog.flush()
            size = self._errlog.seek(0, os.SEEK_END)
            self._errlog.seek(max(0, size - STDERR_TAIL))
            return self._errlog.read().strip()
        return ""

    async def _message(self, message: Any) -> None:
        # synchronous bookkeeping only: nothing here can block the receive loop
        if isinstance(message, types.ToolListChangedNotification):
            self._on_list_changed()
        elif isinstance(message, Exception):
            log.debug("%s: transport error: %s", self.target.label, message)

    async def _own(self, ready: asyncio.Future[None]) -> None:
        try:
            async with contextlib.AsyncExitStack() as stack:
                read, write = await self._transport(stack)
                tg = await stack.enter_async_context(anyio.create_task_group())
                stack.callback(tg.cancel_scope.cancel)  # runs before the group is exited
                send, watched = anyio.create_memory_object_stream[Any](0)
                tg.start_soon(self._pump, read, send)
                session = await stack.enter_async_context(ClientSession(watched, write, message_handler=self._message))
                await session.initialize()
                self.session, self.alive = session, True
                ready.set_result(None)
                await self._stop.wait()
        except BaseException as exc:
            if not ready.done():
                leaf = first_leaf(exc)
                ready.set_exception(leaf if isinstance(leaf, Exception) else ConnectionError(str(leaf)))
            else:
                log.debug("%s: session ended: %r", self.target.label, exc)
        finally:
            self.alive = False
            self.session = None

    async def _pump(self, read: Any, send: Any) -> None:
        """Forward the transport's messages to the session; at their end the
        server is gone (stdio: the child exited)."""
        try:
            async with send:
                async for item in read:
                    await send.send(item)
        except (anyio.ClosedResourceError, anyio.BrokenResourceError, anyio.EndOfStream):
            pass
        finally:
            if self.alive:
                log.warning("%s: the server closed the connection", self.target.label)
            self.alive = False

    async def _transport(self, stack: contextlib.AsyncExitStack) -> tuple[Any, Any]:
        if self.target.kind == "stdio":
            cmd = self.target.command
            errlog = tempfile.TemporaryFile("w+", encoding="utf-8", errors="replace")  # noqa: SIM115
            self._errlog = stack.enter_context(errlog)  # closed with the session
            params = StdioServerParameters(command=cmd[0], args=list(cmd[1:]), env=self._env, cwd=self._cwd)
            streams = await stack.enter_async_context(stdio_client(params, errlog=self._errlog))
            return streams[0], streams[1]
        import httpx2
        from mcp.client.streamable_http import streamable_http_client

        client = await stack.enter_async_context(httpx2.AsyncClient(timeout=self._http_timeout))
        streams = await stack.enter_async_context(streamable_http_client(self.target.url, http_client=client))
        return streams[0], streams[1]
