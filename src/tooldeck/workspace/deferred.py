"""Cleanup off the critical path: removing a committed batch's backups and
journal after the call that wrote it has replied.

Why deferred: unlinking a few hundred backups and a journal folder costs
milliseconds that the model would otherwise wait for, and nothing depends on
it — a batch past its commit point is finished by crash recovery if the
process dies before its cleanup ran (:func:`tooldeck.workspace.journal.recover`).
Re-exported by :mod:`tooldeck.workspace.journal`, where callers reach it.
"""

from __future__ import annotations

import atexit
import logging
import queue
import threading
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager

log = logging.getLogger("tooldeck.journal")

# A released job waits this long before it runs, unless flush() hurries it: the
# call that queued it has rendered its reply, and the host is writing it out.
CLEANUP_DELAY = 0.02
_jobs: queue.SimpleQueue[tuple[float, Callable[[], None]] | None] = queue.SimpleQueue()
_hurry = threading.Event()
_worker: threading.Thread | None = None
_worker_lock = threading.Lock()
_pending = 0
_idle = threading.Condition()
_held = threading.local()  # .jobs: this thread's jobs held until its reply is made (see after_reply)


def later(job: Callable[[], None]) -> None:
    """Run ``job`` (removing backups and a journal) after the caller replies.
    Inside :func:`after_reply` the job waits for the end of that block; jobs
    left at exit run then; a job a crash loses is done by :func:`recover`."""
    global _pending
    with _idle:
        _pending += 1
    held: list[Callable[[], None]] | None = getattr(_held, "jobs", None)
    if held is not None:
        held.append(job)
    else:
        _submit(job)


def _submit(job: Callable[[], None]) -> None:
    global _worker
    if _worker is None or not _worker.is_alive():
        with _worker_lock:
            if _worker is None or not _worker.is_alive():
                _worker = threading.Thread(target=_work, name="tooldeck-journal-cleanup", daemon=True)
                _worker.start()
    _jobs.put((time.monotonic() + CLEANUP_DELAY, job))


@contextmanager
def after_reply() -> Iterator[None]:
    """Hold the cleanup of the writes this thread commits in the block until
    the block ends. A tool wraps its whole call in it — the writes and the
    reply it renders — so unlinking backups and journals never competes with
    making the reply. A crash meanwhile loses nothing: every batch is
    committed, and recovery finishes a committed batch whose cleanup never ran."""
    if getattr(_held, "jobs", None) is not None:  # nested: the outer block releases
        yield
        return
    _held.jobs = []
    try:
        yield
    finally:
        _release()


def _release() -> None:
    jobs: list[Callable[[], None]] = getattr(_held, "jobs", None) or []
    _held.jobs = None
    for job in jobs:
        _submit(job)


def _work() -> None:
    global _pending
    while True:
        item = _jobs.get()
        if item is None:
            return
        due, job = item
        left = due - time.monotonic()
        if left > 0:  # let the reply go out first (flush() cuts the wait short)
            _hurry.wait(left)
        try:
            job()
        except Exception:  # a cleanup failure must not kill the worker
            log.exception("journal cleanup failed")
        finally:
            with _idle:
                _pending -= 1
                if not _pending:
                    _hurry.clear()
                _idle.notify_all()


def flush(timeout: float = 30.0) -> bool:
    """Run every deferred cleanup now and wait until it has run (tests,
    process exit); the jobs this thread holds in :func:`after_reply` are
    released first."""
    if getattr(_held, "jobs", None):
        held = _held.jobs
        _held.jobs = []
        for job in held:
            _submit(job)
    deadline = time.monotonic() + timeout
    with _idle:
        while _pending:
            _hurry.set()
            left = deadline - time.monotonic()
            if left <= 0:
                return False
            _idle.wait(left)
    return True


atexit.register(flush)
