"""Starting helpers from a confined thread of the server itself.

Landlock, ``no_new_privs`` and capabilities belong to a thread, and a
process inherits those of the thread that started it. A :class:`Spawner`
is one daemon thread that drops its capabilities, confines itself to a
:class:`~tooldeck.confine.policy.Policy` and then only ever calls
``subprocess.Popen``: every helper it starts is confined from its first
instruction, while the server's other threads keep their access.

Why a thread and not ``preexec_fn`` or a launcher process (measured with
``bench/spawn_cost.py`` on a 2-CPU VM, ``rg --version``, 400 MB RSS):
``preexec_fn`` makes Python ``fork()`` the whole server instead of
``vfork()``: 13.9 ms per helper on a quiet machine, 80 ms at load 8, against
0.7 ms. A launcher process passing descriptors over a Unix socket cost
+0.45 ms quiet (+0.5 ms at load 8, and that without its confinement, kill
and timeout protocol), and is one more process that can die on its own. The
queue hop to a thread cost +0.05 ms quiet (+0.2 to +0.6 ms at load 8), and
Python still uses ``vfork`` + ``close_range`` in it, which need no file
access.

The :class:`subprocess.Popen` is handed back to the caller's thread, which
talks to the child, times it out and kills it as usual (the server's
threads are outside the domain, so they may signal into it; the child may
not signal out under ABI 6's scoping).
"""

from __future__ import annotations

import logging
import queue
import subprocess
import threading
from collections import OrderedDict
from collections.abc import Sequence
from concurrent.futures import Future
from typing import Any

from tooldeck.confine import privileges
from tooldeck.confine.policy import Policy
from tooldeck.confine.process import apply

log = logging.getLogger("tooldeck.confine")

MAX_SPAWNERS = 8  # distinct policies kept (roots x helper kinds); older ones stop
_Request = tuple[Sequence[str], dict[str, Any], "Future[subprocess.Popen[bytes]]"] | None


class Spawner:
    """One confined thread starting processes for one policy."""

    def __init__(self, policy: Policy, abi: int) -> None:
        self.policy = policy
        self._queue: queue.SimpleQueue[_Request] = queue.SimpleQueue()
        self._ready: Future[None] = Future()
        self._lock = threading.Lock()
        self._stopped = False
        self._thread = threading.Thread(
            target=self._main, args=(abi, privileges.last_cap()), name=f"tooldeck-spawn-{policy.label}", daemon=True
        )
        self._thread.start()

    def _main(self, abi: int, top_cap: int) -> None:
        try:
            apply(self.policy, abi, top_cap)
        except BaseException as exc:  # every caller learns why
            self._ready.set_exception(OSError(f"cannot confine the {self.policy.label} helper: {exc}"))
            return
        self._ready.set_result(None)
        while True:
            item = self._queue.get()
            if item is None:
                return
            argv, kwargs, fut = item
            if not fut.set_running_or_notify_cancel():
                continue
            try:
                fut.set_result(subprocess.Popen(argv, **kwargs))
            except BaseException as exc:  # handed to the caller
                fut.set_exception(exc)

    @property
    def alive(self) -> bool:
        return self._thread.is_alive() and not self._stopped

    def popen(self, argv: Sequence[str], **kwargs: Any) -> subprocess.Popen[bytes] | None:
        """``subprocess.Popen(argv, **kwargs)``, started by the confined
        thread; None when this spawner was stopped meanwhile (ask a new one)."""
        self._ready.result()  # raises if the thread could not confine itself
        fut: Future[subprocess.Popen[bytes]] = Future()
        with self._lock:  # nothing is queued behind the stop marker
            if self._stopped:
                return None
            self._queue.put((argv, kwargs, fut))
        return fut.result()

    def stop(self) -> None:
        """Let the thread end after the requests already queued (the children
        live on, reaped by whoever holds their Popen)."""
        with self._lock:
            if not self._stopped:
                self._stopped = True
                self._queue.put(None)


class Spawners:
    """The spawner of each policy in use, at most :data:`MAX_SPAWNERS`."""

    def __init__(self, abi: int) -> None:
        self.abi = abi
        self._lock = threading.Lock()
        self._by_policy: OrderedDict[Policy, Spawner] = OrderedDict()

    def get(self, policy: Policy) -> Spawner:
        with self._lock:
            sp = self._by_policy.get(policy)
            if sp is not None and sp.alive:
                self._by_policy.move_to_end(policy)
                return sp
            sp = self._by_policy[policy] = Spawner(policy, self.abi)
            while len(self._by_policy) > MAX_SPAWNERS:
                _, old = self._by_policy.popitem(last=False)
                old.stop()
            return sp

    def popen(self, policy: Policy, argv: Sequence[str], **kwargs: Any) -> subprocess.Popen[bytes]:
        """Start ``argv`` confined to ``policy``."""
        while True:
            proc = self.get(policy).popen(argv, **kwargs)
            if proc is not None:
                return proc

    def stop_all(self) -> None:
        with self._lock:
            for sp in self._by_policy.values():
                sp.stop()
            self._by_policy.clear()
