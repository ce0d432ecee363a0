"""A pids cgroup per run, where the machine offers one: bounds forks, kills the tree.

Why: a process group is not enough to find every descendant (a child may call
setsid), and RLIMIT_NPROC does not bind root. A cgroup holds every descendant
however it forks, caps how many there may be (``pids.max``), and lets the
runner kill them all. Supported: cgroup v1 ``pids`` hierarchy and cgroup v2
with the pids controller enabled for our cgroup's children. Where neither is
writable the runner falls back to process groups and the pid namespace.
"""

from __future__ import annotations

import itertools
import os
import signal
import time
from pathlib import Path

_seq = itertools.count(1)
_parent_cache: list[Path | None] = []


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
    """The cgroup directory runs are created under, or None (probed once)."""
    if not _parent_cache:
        _parent_cache.append(_find_parent())
    return _parent_cache[0]


class PidsCgroup:
    """One run's cgroup. ``procs_fd`` is written by the child before exec."""

    def __init__(self, path: Path, max_pids: int) -> None:
        self.path = path
        path.mkdir()
        (path / "pids.max").write_text(str(max_pids))
        self.procs_fd = os.open(path / "cgroup.procs", os.O_WRONLY)

    @classmethod
    def create(cls, max_pids: int) -> PidsCgroup | None:
        base = parent()
        if base is None:
            return None
        try:
            return cls(base / f"tooldeck-{os.getpid()}-{next(_seq)}", max_pids)
        except OSError:
            return None

    def join_in_child(self) -> None:
        """Runs in the forked child before exec (keep it to one system call)."""
        os.write(self.procs_fd, b"0")

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
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            pids = self.pids()
            if not pids:
                return
            for pid in pids:
                try:
                    os.kill(pid, signal.SIGKILL)
                except ProcessLookupError:
                    pass
            time.sleep(0.01)

    def close(self) -> None:
        self.kill_all()
        try:
            os.close(self.procs_fd)
        except OSError:
            pass
        for _ in range(50):
            try:
                self.path.rmdir()
                return
            except OSError:
                time.sleep(0.01)
