"""Requests first: background work pauses while a request is being served.

A large tree's background fills (the symbol index's parse, the term index's
reads) run in threads of the server's own process. Niced or not, a thread
that holds the GIL makes a request's thread wait for it, and on two shared
cores every worker process of theirs takes a core a build could use. So a
request that must answer quickly (a context build) marks itself with
:func:`serving`, and the fills call :func:`yield_to_requests` between their
batches: they sleep while any request is in flight.

A pause is bounded (:data:`MAX_PAUSE` per call): a request that never ends
cannot starve a fill forever, and one that waits for a fill (a caller of the
full symbol index) makes that fill stop yielding (``urgent``) instead of
waiting on it in turn.
"""

from __future__ import annotations

import os
import threading
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager

MAX_PAUSE = 10.0  # seconds a fill waits at one yield point at most

_cond = threading.Condition()
_active = 0  # requests in flight
_waiting = 0  # background workers paused
_watchers: list[Callable[[bool], None]] = []  # told when requests start (True) and all end (False)


@contextmanager
def serving() -> Iterator[None]:
    """Mark a request in flight for the duration of the ``with`` block."""
    global _active
    with _cond:
        _active += 1
        if _active == 1:
            _tell(True)
    try:
        yield
    finally:
        with _cond:
            _active -= 1
            if _active == 0:
                _tell(False)
                _cond.notify_all()


def watch(fn: Callable[[bool], None]) -> Callable[[], None]:
    """Call ``fn(True)`` when a request starts with none in flight and
    ``fn(False)`` when the last one ends (and once now, with the current
    state); the function returned stops it. ``fn`` runs under this module's
    lock: it must only set a flag (a fill's worker processes, which cannot
    be told between batches, read it between files)."""
    with _cond:
        _watchers.append(fn)
        fn(_active > 0)

    def stop() -> None:
        with _cond:
            if fn in _watchers:
                _watchers.remove(fn)

    return stop


def _tell(busy: bool) -> None:
    for fn in list(_watchers):
        try:
            fn(busy)
        except Exception:  # a watcher never fails a request
            pass


def in_flight() -> int:
    """Requests being served now."""
    return _active


def waiting() -> int:
    """Background workers paused in :func:`yield_to_requests` now."""
    return _waiting


def yield_to_requests(urgent: Callable[[], bool] = lambda: False, max_pause: float | None = None) -> float:
    """Block while a request is in flight (at most ``max_pause`` seconds,
    :data:`MAX_PAUSE` by default, and not at all once ``urgent()`` says
    someone waits for the caller); the seconds paused."""
    global _waiting
    if _active == 0 or urgent():
        return 0.0
    start = time.monotonic()
    end = start + (MAX_PAUSE if max_pause is None else max_pause)
    with _cond:
        _waiting += 1
        try:
            while _active > 0 and not urgent():
                left = end - time.monotonic()
                if left <= 0:
                    break
                _cond.wait(min(left, 0.05))  # re-checks ``urgent`` (it is not notified)
        finally:
            _waiting -= 1
    return time.monotonic() - start


def lower_thread_priority(nice: int = 10) -> None:
    """Run the calling thread at ``nice`` (Linux priorities are per thread);
    elsewhere, or when not permitted, nothing changes."""
    try:
        os.setpriority(os.PRIO_PROCESS, threading.get_native_id(), nice)
    except (AttributeError, OSError):
        pass
