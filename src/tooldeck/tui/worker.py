"""The engine's thread: its own asyncio loop, so the screen never waits.

Why not run the model loop on Textual's loop: the transcript is rewritten
through a temp file and a rename after every element, tools decode and
budget their output, the ``openai`` client parses every SSE chunk; each is
small, together they would make keystrokes wait. Here they run on a daemon
thread; the screen gets :mod:`tooldeck.tui.events` through a queue, and the
only things it sends back are coroutines to run and cancellations.
"""

from __future__ import annotations

import asyncio
import concurrent.futures
import contextlib
import threading
from collections.abc import Coroutine
from typing import Any, TypeVar

T = TypeVar("T")


class EngineThread:
    def __init__(self, name: str = "tooldeck-chat-engine") -> None:
        self.loop = asyncio.new_event_loop()
        self._thread = threading.Thread(target=self._run, name=name, daemon=True)
        self._thread.start()

    def _run(self) -> None:
        asyncio.set_event_loop(self.loop)
        self.loop.run_forever()

    def submit(self, coro: Coroutine[Any, Any, T]) -> concurrent.futures.Future[T]:
        """Run ``coro`` on the engine loop; the future is usable from any thread."""
        return asyncio.run_coroutine_threadsafe(coro, self.loop)

    def call(self, fn: Any, *args: Any) -> None:
        self.loop.call_soon_threadsafe(fn, *args)

    def stop(self, timeout: float = 5.0) -> None:
        """Cancel what still runs, give it ``timeout`` to finish its last write, stop."""
        if self.loop.is_closed():
            return

        async def drain() -> None:
            me = asyncio.current_task()
            tasks = [t for t in asyncio.all_tasks() if t is not me]
            for t in tasks:
                t.cancel()
            if tasks:
                await asyncio.wait(tasks, timeout=timeout)

        with contextlib.suppress(Exception):
            self.submit(drain()).result(timeout + 1)
        self.loop.call_soon_threadsafe(self.loop.stop)
        self._thread.join(timeout)
        if not self.loop.is_running():
            self.loop.close()
