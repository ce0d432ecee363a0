"""Worker threads for sync tools: reused, but never a fixed number.

A thread cannot be killed. When a call times out while its thread is stuck (a
tool that ignores its cancel flag, a blocking read), the caller moves on and
the thread is abandoned. With a fixed pool (asyncio's default executor has a
handful of workers on a small machine) a few abandoned threads would starve
every later call, and ``asyncio.run`` would wait for them at exit. So: idle
workers are reused (their thread-local state, such as a SQLite connection,
stays warm), a busy or stuck worker is never waited for (a new one starts),
all are daemon threads, and an idle worker retires after a while (soon:
thread-bound resources are handed back after every job, see :data:`AFTER_JOB`,
so a warm thread saves only the ~0.1 ms of starting one, and a burst of
calls must not leave its threads up for long).
"""

from __future__ import annotations

import logging
import queue
import threading
from collections.abc import Callable

# a job runs the work and returns what hands its outcome over: called once the
# worker is idle again, so the next call of the same caller finds it free
Job = Callable[[], Callable[[], None]]
MAX_IDLE = 16
IDLE_SECONDS = 10.0
# Run in the worker thread after each job, before it is parked: a service that
# binds resources to a thread (the store's connection lease) gives them back
# here, so a finished, failed or cancelled call keeps nothing.
AFTER_JOB: list[Callable[[], None]] = []


class Workers:
    def __init__(self, max_idle: int = MAX_IDLE, idle_seconds: float = IDLE_SECONDS) -> None:
        self._idle: list[_Worker] = []
        self._lock = threading.Lock()
        self.max_idle = max_idle
        self.idle_seconds = idle_seconds
        self.started = 0  # threads started so far (tests and diagnostics)

    def submit(self, job: Job) -> None:
        with self._lock:
            worker = self._idle.pop() if self._idle else None
            if worker is None:
                self.started += 1
        if worker is None:
            worker = _Worker(self)
        worker.jobs.put(job)

    def _park(self, worker: _Worker) -> bool:
        """Back to the idle list after a job; False: retire (enough idle)."""
        with self._lock:
            if len(self._idle) >= self.max_idle:
                return False
            self._idle.append(worker)
            return True

    def _retire(self, worker: _Worker) -> bool:
        """After an idle timeout: True if the worker left the idle list; False
        if a caller took it meanwhile (a job is on its way)."""
        with self._lock:
            if worker in self._idle:
                self._idle.remove(worker)
                return True
            return False


class _Worker:
    def __init__(self, pool: Workers) -> None:
        self.pool = pool
        self.jobs: queue.SimpleQueue[Job] = queue.SimpleQueue()
        threading.Thread(target=self._run, name="tooldeck-worker", daemon=True).start()

    def _run(self) -> None:
        while True:
            try:
                job = self.jobs.get(timeout=self.pool.idle_seconds)
            except queue.Empty:
                if self.pool._retire(self):
                    return
                continue
            deliver = job()  # never raises: the outcome goes through ``deliver``
            _after_job()
            parked = self.pool._park(self)
            deliver()
            if not parked:
                return


WORKERS = Workers()


def _after_job() -> None:
    for fn in AFTER_JOB:
        try:
            fn()
        except Exception:  # a cleanup never takes a worker down
            logging.getLogger("tooldeck.workers").exception("after-job cleanup failed")
