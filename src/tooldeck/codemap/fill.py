"""Filling the symbol index in the background, at low priority.

The first context build on a large tree used to parse every file before it
could rank anything (64 s of CPU on 13k files). It now parses only its top
candidates and asks for the rest here: a daemon thread walks every root into
the same :class:`~tooldeck.codemap.index.SymbolIndex`, with its parse work in
worker processes of their own that run niced (``nice`` 10), and the thread
itself niced too (Linux priorities are per thread), so builds and tool calls
that arrive meanwhile get the CPU first. Builds made during the fill use what
is there; once it completes, the index is ``complete`` and builds rank with
the whole reference graph.

Correctness when files change during the fill: the keys the index held when
the fill started are its snapshot, and a record is only replaced if its key
is still the snapshot's (compare-and-set): a foreground refresh made after
the fill's read (a build that saw the file change) always wins. A file that
changes after the fill read it is seen by the next build's walk, as any edit.
"""

from __future__ import annotations

import atexit
import functools
import logging
import os
import threading
import time
import weakref
from collections.abc import Callable
from concurrent.futures import Future, ProcessPoolExecutor
from typing import TYPE_CHECKING, Any, Protocol, TypeVar

from tooldeck.codemap import pool
from tooldeck.codemap.languages import language_for
from tooldeck.core.foreground import lower_thread_priority, watch, yield_to_requests
from tooldeck.workspace.walk import walk_files

if TYPE_CHECKING:
    from tooldeck.codemap.index import SymbolIndex
    from tooldeck.workspace.roots import Root, Workspace

log = logging.getLogger("tooldeck.codemap")

MAX_INDEX_FILES = 100_000  # files a symbol index takes at most (the service and the fill)


class FillTarget(Protocol):
    """What a fill needs of the codemap service (``codemap/service.py``, which
    imports this module: a protocol here, so the two do not import each other)."""

    rt: Any

    def is_current(self, idx: SymbolIndex, /) -> bool: ...

    def _refresh(self, idx: SymbolIndex, root: Root, rels: list[str], seen: set[str], /, **kwargs: Any) -> Any: ...

    def mark_complete(self, idx: SymbolIndex, /) -> bool: ...


NICE = 10
SLICE = 1024  # files per refresh call: the stop flag is checked between slices


class Submitter(Protocol):
    """Where parse work goes: the shared pool (the :mod:`pool` module) or a
    :class:`LowPriorityPool`."""

    POOL_MIN_FILES: int
    GROUP: int

    def submit(self, items: list[tuple[str, bytes]]) -> Future[list[str]] | None: ...

    def mark_broken(self) -> None: ...


class Parseable(Protocol):
    language: str
    data: bytes | None


T = TypeVar("T", bound=Parseable)


def dispatch(misses: list[T], submitter: Submitter, follow: bool = False) -> list[tuple[list[T], Future[list[str]]]]:
    """Send parse work to ``submitter``'s workers in groups (when there is
    enough of it, or ``follow``: the batch's previous chunk went to them, so
    its small last chunk does too, instead of loading every grammar in the
    calling process). A group the pool refuses, and every later one, is left
    to the caller."""
    if not misses or (len(misses) < submitter.POOL_MIN_FILES and not follow):
        return []
    jobs: list[tuple[list[T], Future[list[str]]]] = []
    for i in range(0, len(misses), submitter.GROUP):
        group = misses[i : i + submitter.GROUP]
        fut = submitter.submit([(it.language, it.data or b"") for it in group])
        if fut is None:
            break
        jobs.append((group, fut))
    return jobs


def indexable_files(ws: Workspace, index: SymbolIndex, limit: int) -> list[tuple[Root, list[str]]]:
    """(root, rels) of the files with a codemap language in every root, in
    walk order, at most ``limit`` in all (``index.truncated`` says when the
    walk stopped there): what a whole-tree index holds."""
    out: list[tuple[Root, list[str]]] = []
    total = 0
    for root in ws.roots:
        rels: list[str] = []
        for rel in walk_files(ws.rules(root)):
            if language_for(rel) is None:
                continue
            if total >= limit:
                index.truncated = True
                break
            rels.append(rel)
            total += 1
        out.append((root, rels))
    return out


def _lower_priority(hold: Any = None) -> None:
    """Worker initializer: run below the server's own priority, and wait
    between files while ``hold`` (its pool's shared flag) is raised."""
    try:
        os.nice(NICE)
    except OSError:  # not permitted: still correct, only less polite
        pass
    if hold is not None:
        pool.hold_with(hold)


class _InProcess:
    """A submitter that takes nothing: every parse stays in the calling thread
    (a build's few files during a fill: starting the shared workers would cost
    more than parsing them)."""

    POOL_MIN_FILES = 1 << 30
    GROUP = pool.GROUP

    def submit(self, items: list[tuple[str, bytes]]) -> Future[list[str]] | None:
        return None

    def mark_broken(self) -> None:
        return None


IN_PROCESS: Submitter = _InProcess()


class LowPriorityPool:
    """Niced parse workers, started on first use and stopped by :meth:`shutdown`.

    While a request is served (:func:`~tooldeck.core.foreground.serving`) the
    workers stop between files, not only between the fill's chunks: the
    chunks already sent (up to two of 256 files) used to be parsed beside the
    build, ~0.2-0.5 s of CPU per build taken from its share of two cores. A
    shared byte (``hold``) is raised then; a worker waits at most
    :data:`~tooldeck.codemap.pool.HOLD_MAX` seconds per task, it is never
    stopped by a signal (a worker left stopped by a parent killed meanwhile
    would never exit), and it still exits with its parent while it waits.
    ``urgent``: someone waits for the fill (the hold is then never raised)."""

    POOL_MIN_FILES = 1  # never parse in the filling thread: it would hold the GIL builds need
    GROUP = pool.GROUP

    def __init__(self, urgent: Callable[[], bool] = lambda: False) -> None:
        self._lock = threading.Lock()
        self._executor: ProcessPoolExecutor | None = None
        self._broken = False
        self._urgent = urgent
        self._hold: Any = None
        self._unwatch: Callable[[], None] | None = None
        _live.add(self)

    def _start_hold(self) -> Any:
        """The shared flag (made before the workers: they inherit it) and its watch."""
        try:
            import multiprocessing  # lazy: only a fill that parses needs the shared memory

            self._hold = multiprocessing.get_context("spawn").RawValue("b", 0)
        except (OSError, ValueError, ImportError):  # no shared memory: workers only yield between chunks
            return None
        self._unwatch = watch(self._requests)
        return self._hold

    def _requests(self, busy: bool) -> None:
        if self._hold is not None:
            self._hold.value = 1 if busy and not self._urgent() else 0

    def release_hold(self) -> None:
        """Let held workers go on at once (someone waits for the fill)."""
        if self._hold is not None:
            self._hold.value = 0

    def submit(self, items: list[tuple[str, bytes]]) -> Future[list[str]] | None:
        with self._lock:
            if self._broken:
                return None
            if self._executor is None:
                n = pool.worker_count()
                if n < 1:
                    self._broken = True
                    return None
                hold = self._hold if self._hold is not None else self._start_hold()
                self._executor = pool.spawn_executor(n, initializer=functools.partial(_lower_priority, hold))
                if self._executor is None:
                    self._broken = True
                    return None
            try:
                return self._executor.submit(pool.extract_group, items)
            except RuntimeError:
                self._broken = True
                return None

    def mark_broken(self) -> None:
        with self._lock:
            self._broken = True
        self.shutdown()

    def shutdown(self, wait: bool = True) -> None:
        with self._lock:
            ex, self._executor = self._executor, None
            unwatch, self._unwatch = self._unwatch, None
        if unwatch is not None:
            unwatch()
        self.release_hold()
        if ex is not None:
            ex.shutdown(wait=wait, cancel_futures=True)


_live: weakref.WeakSet[LowPriorityPool] = weakref.WeakSet()


@atexit.register
def _stop_all() -> None:
    """A process exiting mid-fill stops its niced workers (the fill thread is a daemon)."""
    for p in list(_live):
        p.shutdown(wait=False)


# What a fill waits for before its first file, called with a function that says when to stop
# waiting (someone waits for the fill, or it was stopped). The context builder passes the term
# index's fill: see :meth:`tooldeck.context.term_index.TermIndex.after_fill`.
Gate = Callable[[Callable[[], bool]], None]


class IndexFill:
    """One background fill of one index. ``wait()`` blocks until it ends."""

    def __init__(self, svc: FillTarget, index: SymbolIndex, first: Gate | None = None) -> None:
        self.svc = svc
        self.index = index
        self._first = first  # waited for before the first file (see :data:`Gate`)
        self.total = 0  # files to index (known once the walk is done)
        self.done = 0
        self.failed = False
        self.started = 0.0
        self.seconds = 0.0  # wall time of the fill, once finished
        self.paused = 0.0  # seconds spent yielding to requests (:mod:`tooldeck.core.foreground`)
        self.yielding = False  # paused right now
        self._urgent = threading.Event()  # someone waits for the fill: it no longer yields
        self._stop = threading.Event()
        self._finished = threading.Event()
        self._thread = threading.Thread(target=self._run, name="tooldeck-index-fill", daemon=True)
        self.pool = LowPriorityPool(self._urgent.is_set)
        self._then: list[Callable[[SymbolIndex], None]] = []
        self._then_lock = threading.Lock()

    def then(self, fn: Callable[[SymbolIndex], None]) -> None:
        """Run ``fn(index)`` in the fill's thread once the index is complete
        (what is derived from the whole index, such as the reference graph,
        is then built off the request path too). Ignored if already done."""
        with self._then_lock:
            if not self._finished.is_set() and fn not in self._then:
                self._then.append(fn)

    def start(self) -> None:
        self.started = time.monotonic()
        self._thread.start()

    def stop(self) -> None:
        self._stop.set()

    def wait(self, timeout: float | None = None) -> bool:
        """True once the fill has ended (completed, stopped or failed). A
        caller waiting for it is served first: the fill stops yielding to
        requests (the caller may be one)."""
        self._urgent.set()
        self.pool.release_hold()
        return self._finished.wait(timeout)

    def pause(self, wanted: Callable[[], bool] = lambda: False) -> None:
        """What the work done at the fill's end calls between its steps (the
        whole tree's graph: :func:`tooldeck.context.rank.build_graph`): sleep
        while a request is served, unless someone waits for the fill or
        ``wanted()`` says a request waits for that work itself (it would
        otherwise wait for this pause to time out)."""
        self._yield(wanted)

    def _yield(self, wanted: Callable[[], bool] = lambda: False) -> None:
        """Between chunks: sleep while a context build is served (the fill's
        thread holds the GIL a build needs, its workers the cores)."""
        self.yielding = True
        try:
            self.paused += yield_to_requests(lambda: self._urgent.is_set() or wanted())
        finally:
            self.yielding = False

    @property
    def finished(self) -> bool:
        return self._finished.is_set()

    def _run(self) -> None:
        lower_thread_priority(NICE)
        try:
            if self._first is not None:
                self._first(lambda: self._urgent.is_set() or self._stop.is_set())
            if self._fill():
                with self._then_lock:
                    then = list(self._then)
                for fn in then:
                    fn(self.index)
        except Exception:  # never take the server down; a later build starts a new fill
            log.warning("background symbol index fill failed", exc_info=True)
            self.failed = True
        finally:
            self.pool.shutdown()
            self.seconds = time.monotonic() - self.started
            self._finished.set()

    def _fill(self) -> bool:
        svc, idx = self.svc, self.index
        ws = svc.rt.workspace
        files = indexable_files(ws, idx, MAX_INDEX_FILES)
        total = sum(len(rels) for _, rels in files)
        plan = [(root, rels, idx.keys_of(root.path)) for root, rels in files]  # the snapshot: taken before any read
        self.total = total
        for root, rels, known in plan:
            for start in range(0, len(rels), SLICE):
                if self._stop.is_set() or not svc.is_current(idx):
                    return False
                part = rels[start : start + SLICE]
                svc._refresh(idx, root, part, set(), known=known, cas=True, submitter=self.pool, between=self._yield)  # type: ignore[arg-type]
                self.done += len(part)
        return svc.mark_complete(idx)
