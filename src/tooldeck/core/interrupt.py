"""Ctrl-C that always ends an asyncio run, even through a library that
swallows one cancellation.

``asyncio.run`` turns the first SIGINT into one ``task.cancel()`` and raises
``KeyboardInterrupt`` only if the task then ends cancelled. A library that
catches that one ``CancelledError`` during its own clean-up (an HTTP stream's
shielded close, a ``wait_for`` whose inner call finished at the same moment:
CPython gh-86296 before 3.12) leaves the run going as if nothing was pressed:
``tooldeck run`` then waited out a 30 s model reply and exited 0 (seen twice
in loaded test runs). Here the cancellation is sent again every
``RESEND`` seconds until the task ends, and an interrupted run always raises
``KeyboardInterrupt``, whatever the task returned.
"""

from __future__ import annotations

import asyncio
import signal
from collections.abc import Coroutine
from typing import Any, TypeVar

T = TypeVar("T")
RESEND = 0.5  # seconds between two cancellations of an interrupted run


def run_interruptible(main: Coroutine[Any, Any, T]) -> T:
    """``asyncio.run(main)``, where SIGINT cancels ``main`` until it ends and
    then raises ``KeyboardInterrupt`` (off the main thread: plain ``asyncio.run``)."""
    return asyncio.run(_guarded(main))


async def _guarded(main: Coroutine[Any, Any, T]) -> T:
    loop = asyncio.get_running_loop()
    task = asyncio.ensure_future(main)
    interrupted = False

    def cancel() -> None:
        if not task.done():
            task.cancel()
            loop.call_later(RESEND, cancel)  # a cancellation swallowed is sent again

    def on_sigint() -> None:
        nonlocal interrupted
        interrupted = True
        cancel()

    try:
        loop.add_signal_handler(signal.SIGINT, on_sigint)
    except (ValueError, RuntimeError, NotImplementedError):  # not the main thread, or no signals here
        return await task
    try:
        result = await asyncio.shield(task)  # this wrapper is never the one cancelled
    except asyncio.CancelledError:
        if interrupted:
            raise KeyboardInterrupt from None
        raise
    finally:
        loop.remove_signal_handler(signal.SIGINT)
    if interrupted:
        raise KeyboardInterrupt
    return result
