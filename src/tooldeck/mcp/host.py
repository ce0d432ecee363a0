"""What a served catalog needs whichever part answers: the catalog being
built (:class:`Catalog`) and the requests in flight (:class:`Activity`).

Shared by the SDK server (:mod:`tooldeck.mcp.server`) and the early front
(:mod:`tooldeck.mcp.early`), which answers before the SDK is imported: so
this module imports nothing of the SDK.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Callable
from typing import TYPE_CHECKING

if TYPE_CHECKING:  # the tool model loads with the catalog: an Activity is made before it
    from tooldeck.core.toolbox import Toolbox

log = logging.getLogger("tooldeck.mcp")


class Catalog:
    """The Toolbox behind a server, possibly still being built.

    Building the catalog (importing every tool domain, generating schemas)
    takes a noticeable share of start-up. ``initialize`` does not need it, so
    the stdio host starts the build in a worker thread as soon as it serves
    and the SDK answers the handshake meanwhile; ``tools/list`` and
    ``tools/call`` wait for it. A build failure is reported by those requests
    (and logged), never a silent empty catalog."""

    def __init__(self, source: Toolbox | Callable[[], Toolbox]) -> None:
        from tooldeck.core.toolbox import Toolbox  # lazy: a catalog exists once the tool model is loaded

        self._box: Toolbox | None = source if isinstance(source, Toolbox) else None
        self._factory = None if isinstance(source, Toolbox) else source
        self._future: asyncio.Future[Toolbox] | None = None

    def start(self) -> None:
        """Begin building (call on the event loop); a no-op once started or built."""
        if self._box is None and self._future is None:
            assert self._factory is not None
            self._future = asyncio.get_running_loop().run_in_executor(None, self._build)

    def _build(self) -> Toolbox:
        assert self._factory is not None
        try:
            return self._factory()
        except Exception:
            log.exception("building the tool catalog failed")
            raise

    def built(self) -> Toolbox | None:
        """The Toolbox if it is built (and built without error), else None."""
        if self._box is None and self._future is not None and self._future.done() and not self._future.exception():
            self._box = self._future.result()
        return self._box

    async def get(self) -> Toolbox:
        if self._box is None:
            self.start()
            assert self._future is not None
            self._box = await asyncio.shield(self._future)
        return self._box


TRIM_IDLE = 2.0  # seconds without a request before freed heap is handed back


class Activity:
    """Requests in flight; a warm-up run once, when the server has been
    idle for a moment; and the freed heap handed back after each burst.

    The tokenizer takes ~0.6 s to load and holds the GIL meanwhile (measured:
    a ticking thread stalls for the whole load), so warming it up in a
    background thread still freezes the server. Started right after the
    handshake it delayed the first tools/list by that much. Between calls,
    while the model is thinking, nobody waits for it."""

    def __init__(self, warm_up: Callable[[], None] | None = None, idle: float = 1.0) -> None:
        self._fn = warm_up
        self._idle = idle
        self._busy = 0
        self._last = 0.0
        self._task: asyncio.Task[None] | None = None
        self._trim: asyncio.Task[None] | None = None

    @property
    def busy(self) -> int:
        return self._busy

    async def settled(self, timeout: float) -> None:
        """Wait until no request is in flight (requests just read included:
        the SDK dispatches them a few loop turns later), at most ``timeout``."""
        loop = asyncio.get_running_loop()
        deadline = loop.time() + timeout
        quiet = 0
        while quiet < 3 and loop.time() < deadline:
            await asyncio.sleep(0.005)  # a few loop turns: the end of input must not hold the exit
            quiet = quiet + 1 if self._busy == 0 else 0

    def request_started(self) -> None:
        self._busy += 1

    def request_finished(self) -> None:
        self._busy -= 1
        loop = asyncio.get_running_loop()
        self._last = loop.time()
        if self._fn is not None and self._task is None:
            self._task = loop.create_task(self._wait_then_run())
        if self._trim is None:
            self._trim = loop.create_task(self._trim_when_idle())

    async def _trim_when_idle(self) -> None:
        """Once a burst of requests is over (:data:`TRIM_IDLE` s without one),
        hand the heap they freed back to the system: glibc keeps freed pages
        mapped, so a server's RSS would stay at its busiest (measured: +60 MB
        after three minutes of churn, back within 15 % of idle after a trim)."""
        loop = asyncio.get_running_loop()
        try:
            while self._busy or loop.time() - self._last < TRIM_IDLE:
                await asyncio.sleep(TRIM_IDLE / 2)
            # lazy: ctypes (~30 ms) stays off the early front's first answers; a trim comes after a burst
            from tooldeck.context.memory import release_freed_memory

            await asyncio.to_thread(release_freed_memory)
        except Exception:
            log.debug("heap trim failed", exc_info=True)
        finally:
            self._trim = None

    async def _wait_then_run(self) -> None:
        loop = asyncio.get_running_loop()
        while True:
            await asyncio.sleep(self._idle)
            if self._busy == 0 and loop.time() - self._last >= self._idle:
                break
        fn, self._fn = self._fn, None
        if fn is not None:
            try:
                await asyncio.to_thread(fn)
            except Exception:
                log.debug("warm-up failed", exc_info=True)
