"""Placeholders on the host for what a sandboxed run must not create in a write root.

Why they exist: a read-only bind needs something to mount on. A write root
without a repository has no ``.git`` to bind read-only, and a model that runs
``git init && git config core.fsmonitor "..."`` there plants a command the
person's next ``git status`` runs. So tooldeck creates an empty ``.git``
folder (and an empty ``HEAD``, see :mod:`tooldeck.shell.gitguard`) in the
root on the host, the sandbox mounts read-only things on them, and when the
last run using them ends they are removed again.

Why holds: two runs on the same root may overlap (two tools of one server, a
server and a ``tooldeck call``). The first creates a placeholder, the last
removes it; removing it while another run's sandbox still has it as a mount
point would lift that run's protection (rmdir of a mount point in another
namespace detaches the mount). Each placeholder path has a file in
``<state dir>/sandbox/holds/`` (named by a hash of the path; it says whether
tooldeck made the placeholder) on which every run using it holds a shared
``flock`` for as long as it runs. The kernel drops the locks of a process that
dies, so "nobody holds it" is always true, crash or not: a release, or the
sweep at the next server start, that gets the exclusive lock removes the
placeholder. Every decision happens under one exclusive lock
(``holds.lock``), so a hold is never taken while another run removes.

A placeholder is removed only while it is still what tooldeck made (an
empty folder or file): if the person ran ``git init`` on the host meanwhile,
their repository stays and only the mark goes.
"""

from __future__ import annotations

import contextlib
import fcntl
import hashlib
import json
import os
import stat
from dataclasses import dataclass, field

from tooldeck.workspace.dirfd import open_root
from tooldeck.workspace.statefiles import exclusive_lock, open_state_file

Kind = str  # "dir" | "file"


def _pristine(path: str, kind: Kind) -> bool:
    """Whether ``path`` is still an empty folder / empty regular file (what was made)."""
    try:
        st = os.lstat(path)
    except OSError:
        return False
    if kind == "dir":
        if not stat.S_ISDIR(st.st_mode):
            return False
        try:
            return not os.listdir(path)
        except OSError:
            return False
    return stat.S_ISREG(st.st_mode) and st.st_size == 0


def _make(path: str, kind: Kind) -> bool:
    """Create the placeholder (never through a link: the root's own descriptor)."""
    root, name = os.path.split(path)
    try:
        fd = open_root(root)
    except OSError:
        return False
    try:
        if kind == "dir":
            os.mkdir(name, 0o755, dir_fd=fd)
        else:
            flags = os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW | os.O_CLOEXEC
            os.close(os.open(name, flags, 0o444, dir_fd=fd))
        return True
    except OSError:
        return False
    finally:
        os.close(fd)


def _remove(path: str, kind: Kind) -> None:
    if not _pristine(path, kind):
        return  # the person made it real meanwhile (git init on the host): theirs now
    root, name = os.path.split(path)
    with contextlib.suppress(OSError):
        fd = open_root(root)
        try:
            if kind == "dir":
                os.rmdir(name, dir_fd=fd)
            else:
                os.unlink(name, dir_fd=fd)
        finally:
            os.close(fd)


MARK_BYTES = 8192  # a mark is rewritten in place, padded with spaces: no truncate (a journaled metadata change)


def _read_mark(fd: int) -> dict:
    try:
        mark = json.loads(os.pread(fd, MARK_BYTES, 0).strip() or b"{}")
    except (OSError, ValueError):
        return {}
    return mark if isinstance(mark, dict) else {}


def _write_mark(fd: int, mark: dict) -> None:
    data = json.dumps(mark).encode()
    os.pwrite(fd, data.ljust(MARK_BYTES), 0)


def _nobody_holds(fd: int) -> bool:
    """Whether no run holds this placeholder (the caller's own hold already dropped)."""
    try:
        fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except BlockingIOError:
        return False
    fcntl.flock(fd, fcntl.LOCK_UN)
    return True


@dataclass(slots=True)
class Held:
    """What one run holds (a shared lock per placeholder): release it exactly once."""

    paths: list[str] = field(default_factory=list)
    fds: list[int] = field(default_factory=list)


class Placeholders:
    """The placeholders of one state directory."""

    def __init__(self, state_dir: str | os.PathLike[str]) -> None:
        self.dir = os.path.join(os.fspath(state_dir), "sandbox")
        self.holds = os.path.join(self.dir, "holds")
        self.lock = os.path.join(self.dir, "holds.lock")

    def _mark_path(self, path: str) -> str:
        return os.path.join(self.holds, hashlib.sha256(path.encode()).hexdigest()[:32])

    def registered(self, path: str) -> bool:
        """Whether tooldeck made the placeholder at ``path`` (read without the lock: a hint)."""
        try:
            fd = open_state_file(self._mark_path(path), create=False)
        except OSError:
            return False
        try:
            return bool(_read_mark(fd).get("made"))
        finally:
            os.close(fd)

    def _hold(self, path: str, kind: Kind) -> int | None:
        """Under the lock: the placeholder at ``path`` made (or found made) and held."""
        fd = open_state_file(self._mark_path(path), create=True)
        try:
            mark = _read_mark(fd)
            if mark.get("made") and not _pristine(path, mark.get("kind", kind)):
                mark = {}  # the person made it real meanwhile: theirs now
                _write_mark(fd, mark)
            if not mark.get("made"):
                if os.path.lexists(path) or not _make(path, kind):
                    os.close(fd)
                    return None  # a real .git (or HEAD...): nothing to hold
                _write_mark(fd, {"path": path, "kind": kind, "made": True})
            fcntl.flock(fd, fcntl.LOCK_SH)
            return fd
        except BaseException:
            os.close(fd)
            raise

    def acquire(self, wanted: list[tuple[str, Kind]]) -> Held:
        """Hold a placeholder at each wanted path that is missing or already one of
        ours; a path that exists and is not ours is left alone (not held)."""
        held = Held()
        if not wanted:
            return held
        os.makedirs(self.holds, mode=0o700, exist_ok=True)
        with exclusive_lock(self.lock):
            for path, kind in wanted:
                fd = self._hold(path, kind)
                if fd is not None:
                    held.paths.append(path)
                    held.fds.append(fd)
        return held

    def _drop(self, fd: int) -> None:
        """Under the lock, after the caller's hold on ``fd`` was dropped: remove the
        placeholder if nobody holds it any more."""
        if not _nobody_holds(fd):
            return
        mark = _read_mark(fd)
        if mark.get("made"):
            _remove(mark.get("path", ""), mark.get("kind", "dir"))
            _write_mark(fd, {})

    def release(self, held: Held) -> None:
        if not held.fds:
            return
        with exclusive_lock(self.lock):
            for fd in held.fds:
                fcntl.flock(fd, fcntl.LOCK_UN)
                try:
                    self._drop(fd)
                finally:
                    os.close(fd)
        held.fds, held.paths = [], []

    def sweep(self) -> None:
        """Remove what runs of processes that are gone left behind (a crash, a kill -9)."""
        try:
            names = os.listdir(self.holds)
        except OSError:
            return
        with exclusive_lock(self.lock):
            for name in names:
                try:
                    fd = open_state_file(os.path.join(self.holds, name), create=False)
                except OSError:
                    continue
                try:
                    self._drop(fd)
                finally:
                    os.close(fd)
