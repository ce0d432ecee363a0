"""A pids cgroup per run, where the machine offers one: bounds forks, kills the tree.

Why: a process group is not enough to find every descendant (a child may call
setsid), and RLIMIT_NPROC does not bind root. A cgroup holds every descendant
however it forks, caps how many there may be (``pids.max``), and lets the
runner kill them all. Supported: cgroup v1 ``pids`` hierarchy and cgroup v2
with the pids controller enabled for our cgroup's children. Where neither is
writable the runner falls back to process groups and the pid namespace.
"""

from __future__ import annotations

import atexit
import contextlib
import itertools
import os
import signal
import threading
import time
from pathlib import Path

_seq = itertools.count(1)
_parent_cache: list[Path | None] = []
_pending: list[threading.Thread] = []
CLOSE_TIMEOUT = 5.0  # seconds close() waits for the kernel to empty the cgroup


def _own_path(controller: str) -> str | None:
    try:
        lines = Path("/proc/self/cgroup").read_text().splitlines()
    except OSError:
        return None
    for line in lines:
        _id, ctrls, path = line.split(":", 2)
        if controller in ctrls.split(",") or (controller == "" and ctrls == ""):
            return path
    return None


def _find_parent() -> Path | None:
    v1 = Path("/sys/fs/cgroup/pids")
    own = _own_path("pids")
    if (v1 / "cgroup.procs").exists():
        base = v1 / (own or "/").lstrip("/")
        if os.access(base, os.W_OK):
            return base
    own2 = _own_path("")
    if own2 is not None:
        base = Path("/sys/fs/cgroup") / own2.lstrip("/")
        try:
            enabled = (base / "cgroup.subtree_control").read_text().split()
        except OSError:
            enabled = []
        if "pids" in enabled and os.access(base, os.W_OK):
            return base
    return None


def parent() -> Path | None:
    """The cgroup directory runs are created under, or None (probed once; the
    leftovers of dead tooldeck processes are swept then)."""
    if not _parent_cache:
        base = _find_parent()
        if base is not None:
            sweep(base)
        _parent_cache.append(base)
    return _parent_cache[0]


class PidsCgroup:
    """One run's cgroup; processes join it through :meth:`exec_prefix`."""

    def __init__(self, path: Path, max_pids: int) -> None:
        self.path = path
        path.mkdir()
        (path / "pids.max").write_text(str(max_pids))

    @classmethod
    def create(cls, max_pids: int) -> PidsCgroup | None:
        base = parent()
        if base is None:
            return None
        try:
            return cls(base / f"tooldeck-{os.getpid()}-{next(_seq)}", max_pids)
        except OSError:
            return None

    def exec_prefix(self) -> list[str]:
        """An argv prefix that joins the cgroup, then execs the rest of the argv.

        Why a constant /bin/sh line and not ``preexec_fn``: a Python
        ``preexec_fn`` forces a full fork of the host process (measured ~15 ms
        per spawn here, against ~3 ms for this helper). The script is fixed;
        the command follows as positional parameters, which ``exec "$@"``
        passes on verbatim: no word of it is ever parsed by the shell."""
        return ["/bin/sh", "-c", 'echo 0 > "$0" && exec "$@"', str(self.path / "cgroup.procs")]

    def pids(self) -> list[int]:
        try:
            return [int(p) for p in (self.path / "cgroup.procs").read_text().split()]
        except OSError:
            return []

    def hit_limit(self) -> bool:
        """Whether a fork was refused for reaching ``pids.max``."""
        try:
            text = (self.path / "pids.events").read_text()
        except OSError:
            return False
        return any(line.split()[-1] != "0" for line in text.splitlines() if line.startswith("max"))

    def kill_all(self, timeout: float = 2.0) -> None:
        """SIGKILL every member, again until the cgroup is empty or ``timeout`` passes
        (0: a single pass)."""
        deadline = time.monotonic() + timeout
        while True:
            pids = self.pids()
            if not pids:
                return
            for pid in pids:
                try:
                    os.kill(pid, signal.SIGKILL)
                except ProcessLookupError:
                    pass
            if time.monotonic() >= deadline:
                return
            time.sleep(0.005)

    def close(self, timeout: float = CLOSE_TIMEOUT) -> None:
        """Kill what is left, then remove the cgroup before returning: the kernel may
        still be tearing down killed processes (rmdir: EBUSY) for a few
        milliseconds, so kill and retry until ``timeout``. Only a cgroup that
        outlives that is handed to a daemon thread, which the process joins at
        exit; a process that died before is swept by the next one (:func:`parent`)."""
        deadline = time.monotonic() + timeout
        while not self._rmdir():
            if time.monotonic() >= deadline:
                thread = threading.Thread(target=self._rmdir_later, daemon=True)
                _pending.append(thread)
                thread.start()
                return
            self.kill_all(timeout=0)
            time.sleep(0.001)  # usually a millisecond or two: the exiting tasks are released

    def _rmdir(self) -> bool:
        try:
            self.path.rmdir()
            return True
        except FileNotFoundError:
            return True
        except OSError:
            return False

    def _rmdir_later(self) -> None:
        for _ in range(3000):
            if self._rmdir():
                return
            self.kill_all(0.05)
            time.sleep(0.01)


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True


def sweep(base: Path) -> None:
    """Remove the run cgroups of tooldeck processes that are gone (a crash, a kill -9)."""
    try:
        names = [p.name for p in base.iterdir() if p.name.startswith("tooldeck-")]
    except OSError:
        return
    for name in names:
        pid = name.split("-")[1]
        if pid.isdigit() and int(pid) != os.getpid() and not _alive(int(pid)):
            leftover = base / name
            with contextlib.suppress(OSError):
                for member in (leftover / "cgroup.procs").read_text().split():
                    os.kill(int(member), signal.SIGKILL)
            with contextlib.suppress(OSError):
                leftover.rmdir()


@atexit.register
def _join_pending() -> None:
    for thread in _pending:
        thread.join(timeout=CLOSE_TIMEOUT)
