"""Parsing in worker processes.

tree-sitter holds the GIL while it parses, so threads do not help; processes
do. Workers are spawned (not forked: the host process has threads and SQLite
connections that must not be copied) once per process, on the first batch
large enough to repay their start-up, and live until exit. Small batches are
parsed in the calling thread.

A worker also exits when its parent does, however the parent ends: a server
killed by SIGTERM or SIGKILL runs no ``atexit`` shutdown, and a worker blocked
on its task queue would otherwise live on as an orphan (the queue's pipe never
reports end-of-file: the worker holds its write end too). Each worker watches
the parent's sentinel (a pipe the parent's death closes) from a daemon thread.

A worker is handed bytes, never a path, so it is confined to nothing of the
person's files: its first act is :func:`~tooldeck.confine.process.confine_self`
(Landlock where the kernel has it: it may import from the interpreter's
folders and tooldeck's, read nothing else, execute nothing, hold no
capability), before its parent-watch thread starts, so every thread of the
worker is held. A worker that cannot be confined where Landlock exists
fails to start; the pool is then broken and batches are parsed in-process.

A task is a group of ``(language, bytes)`` items; a worker returns, per item,
the encoded blob (JSON text) or an error string. Returning encoded text keeps
the result pickle small and lets the parent store it as is.
"""

from __future__ import annotations

import atexit
import logging
import os
import threading
import time
from collections.abc import Callable
from concurrent.futures import Future, ProcessPoolExecutor
from typing import Any

from tooldeck.codemap.blob import encode_rows, encode_skip
from tooldeck.codemap.extract import extract_rows
from tooldeck.confine.policy import python_worker
from tooldeck.confine.process import confine_self

log = logging.getLogger("tooldeck.codemap")

POOL_MIN_FILES = 48  # below this many files to parse, parse in-process
GROUP = 8  # files per task

_lock = threading.Lock()
_pool: ProcessPoolExecutor | None = None
_broken = False
_pending = 0  # submitted tasks not finished yet


def worker_count() -> int:
    env = os.environ.get("TOOLDECK_CODEMAP_WORKERS")
    if env is not None:
        try:
            return max(0, int(env))
        except ValueError:
            return 0
    try:
        cpus = len(os.sched_getaffinity(0))
    except (AttributeError, OSError):
        cpus = os.cpu_count() or 1
    return min(cpus, 8) if cpus > 1 else 0


def extract_one(language: str, data: bytes) -> str:
    """The encoded blob of one file (an error becomes a skip entry: one bad
    file must not fail a batch)."""
    try:
        return encode_rows(*extract_rows(language, data))
    except Exception as exc:  # a grammar or query failure on odd input: logged, the file is skipped
        log.warning("codemap extraction failed (%s): %s", language, exc, exc_info=True)
        return encode_skip(f"parse failed ({type(exc).__name__})")


def extract_group(items: list[tuple[str, bytes]]) -> list[str]:
    out: list[str] = []
    budget = HOLD_MAX
    for language, data in items:
        if _hold is not None and _hold.value:
            budget -= _wait_hold(budget)
        out.append(extract_one(language, data))
    return out


HOLD_MAX = 10.0  # seconds a held worker waits per task at most (as a fill's pause: core/foreground.py)
_hold: Any = None  # in a background fill's worker: the flag its pool raises while a request is served


def hold_with(flag: Any) -> None:
    """In a worker: wait between files while ``flag`` (a shared byte its
    parent sets) is raised (:class:`~tooldeck.codemap.fill.LowPriorityPool`)."""
    global _hold
    _hold = flag


def _wait_hold(budget: float) -> float:
    """Sleep while the hold flag is raised, at most ``budget`` seconds; the seconds slept."""
    start = time.monotonic()
    while _hold.value and time.monotonic() - start < budget:
        time.sleep(0.005)
    return time.monotonic() - start


def _exit_with_parent() -> None:
    """Block until the parent process is gone, then end this worker at once."""
    import multiprocessing

    parent = multiprocessing.parent_process()
    if parent is not None:
        parent.join()  # waits on the parent's sentinel: returns when the parent died
        os._exit(0)


def _worker_start(initializer: Callable[[], None] | None) -> None:
    """Every worker's initializer: confine the process (no thread runs yet),
    start the parent watch, then the caller's initializer."""
    confine_self(python_worker("codemap"))
    threading.Thread(target=_exit_with_parent, name="parent-watch", daemon=True).start()
    if initializer is not None:
        initializer()


def spawn_executor(n: int, initializer: Callable[[], None] | None = None) -> ProcessPoolExecutor | None:
    """``n`` spawned worker processes (never forked: see the module
    docstring) that exit with their parent, or None when the platform
    refuses them."""
    try:
        import multiprocessing

        spawn = multiprocessing.get_context("spawn")
        return ProcessPoolExecutor(max_workers=n, mp_context=spawn, initializer=_worker_start, initargs=(initializer,))
    except (OSError, ValueError, ImportError):
        return None


def get_pool() -> ProcessPoolExecutor | None:
    """The shared pool, or None when workers are disabled or unavailable."""
    global _pool, _broken
    if _broken:
        return None
    with _lock:
        if _pool is None:
            n = worker_count()
            if n < 2:
                return None
            _pool = spawn_executor(n)
            if _pool is None:
                _broken = True
                return None
        return _pool


def submit(items: list[tuple[str, bytes]]) -> Future[list[str]] | None:
    global _pending
    for _attempt in range(2):
        pool = get_pool()
        if pool is None:
            return None
        with _lock:
            if pool is not _pool:  # released (idle) since get_pool: take a new one
                continue
            try:
                fut = pool.submit(extract_group, items)
            except RuntimeError:  # pool broken
                fut = None
            else:
                _pending += 1
        if fut is None:
            mark_broken()
            return None
        fut.add_done_callback(_task_done)
        return fut
    return None


def _task_done(_fut: Future[list[str]]) -> None:
    global _pending
    with _lock:
        _pending -= 1


def release_if_idle() -> bool:
    """Stop the workers when no task is in flight (True if they were stopped).

    Each worker holds every grammar (~40 MB); after a large batch (the first
    index of a big tree) a server rarely needs them again soon, and the next
    large batch starts new ones (workers are not marked broken)."""
    global _pool
    with _lock:
        if _pool is None or _pending > 0:
            return False
        _pool.shutdown(wait=False)
        _pool = None
        return True


def mark_broken() -> None:
    """Stop using workers (a worker died): later batches parse in-process."""
    global _pool, _broken
    with _lock:
        _broken = True
        if _pool is not None:
            _pool.shutdown(wait=False, cancel_futures=True)
            _pool = None


def shutdown() -> None:
    global _pool
    with _lock:
        if _pool is not None:
            _pool.shutdown(wait=False, cancel_futures=True)
            _pool = None


atexit.register(shutdown)
