"""One background event loop (its own thread) that owns every client mount.

Why a thread of its own: an MCP client session is bound to the loop it was
opened on (anyio task groups, the child's pipes), but a mounted tool may be
called from any loop — the ChatMD runner's, the MCP server's, or a fresh
``asyncio.run`` per call in ``Tool.run_sync`` / ``Toolbox.call_sync``. Mounts
live here for their whole life; callers hop over with
:func:`run_here` (from async code) or :func:`run_blocking` (from sync code),
and cancelling the caller cancels the remote call.
"""

from __future__ import annotations

import asyncio
import atexit
import concurrent.futures
import threading
from collections.abc import Awaitable, Callable, Coroutine
from typing import Any, TypeVar

T = TypeVar("T")

_lock = threading.Lock()
_loop: asyncio.AbstractEventLoop | None = None
_thread: threading.Thread | None = None
_closers: list[Callable[[], Awaitable[None]]] = []


def loop() -> asyncio.AbstractEventLoop:
    """The mount loop, started on first use."""
    global _loop, _thread
    with _lock:
        if _loop is None or _loop.is_closed():
            ready = threading.Event()
            new = asyncio.new_event_loop()

            def serve() -> None:
                asyncio.set_event_loop(new)
                new.call_soon(ready.set)
                new.run_forever()

            _thread = threading.Thread(target=serve, name="tooldeck-mcp-mounts", daemon=True)
            _thread.start()
            ready.wait()
            _loop = new
        return _loop


def on_loop() -> bool:
    """Whether the caller runs on the mount loop's thread."""
    return _thread is not None and threading.current_thread() is _thread


def submit(coro: Coroutine[Any, Any, T]) -> concurrent.futures.Future[T]:
    return asyncio.run_coroutine_threadsafe(coro, loop())


async def run_here(coro: Coroutine[Any, Any, T]) -> T:
    """Await ``coro`` on the mount loop from any other loop (or directly
    when already on it). Cancelling the caller cancels ``coro``."""
    if on_loop():
        return await coro
    return await asyncio.wrap_future(submit(coro))


def run_blocking(coro: Coroutine[Any, Any, T], timeout: float | None = None) -> T:
    """Run ``coro`` on the mount loop and wait for it (sync callers)."""
    if on_loop():
        coro.close()
        raise RuntimeError("run_blocking called on the mount loop itself; await run_here() instead")
    return submit(coro).result(timeout)


def register_closer(fn: Callable[[], Awaitable[None]]) -> None:
    """``fn`` runs on the mount loop at interpreter exit (closing a mount
    stops its child process instead of leaving it orphaned)."""
    _closers.append(fn)


def unregister_closer(fn: Callable[[], Awaitable[None]]) -> None:
    if fn in _closers:
        _closers.remove(fn)


@atexit.register
def _shutdown() -> None:
    if _loop is None or _loop.is_closed() or not _closers:
        return

    async def close_all() -> None:
        await asyncio.gather(*(fn() for fn in list(_closers)), return_exceptions=True)

    try:
        submit(close_all()).result(10)
    except Exception:  # exiting anyway: never turn a clean exit into a traceback
        pass
