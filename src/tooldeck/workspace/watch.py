"""Which files of a walked root changed since its last walk, told by the kernel.

A warm context build walked the whole tree to learn that nothing had changed:
on a 12,800-file tree that was 0.25-0.37 s of listing and ``stat`` calls per
build, the largest of its stages. Linux's inotify reports every change made
through a watched folder as it happens, so a :class:`TreeWatch` that watches
each admitted folder of a walk can answer "what changed since?" by reading its
queue: the paths named there are re-``stat``'ed, and the tree is not walked.

The kernel queues an event before the call that caused it returns, so a
non-blocking read of the queue at the start of a build sees every change that
completed before it. Anything the queue cannot describe exactly asks for a full
walk instead (:attr:`Drained.full`): a queue overflow, a folder created,
removed, renamed or re-permissioned, a rule file (``.gitignore``...) touched, a
watched folder gone, or more folders than :data:`MAX_WATCHED_DIRS`. A folder
the user may not read needs no watch: the walk cannot list it either, and a
change of its mode or owner is an event of its parent's watch.

Not seen, as by every inotify-based watcher: writes through a shared memory
map, writes through another hard link outside the watched folders, and changes
made by other machines on a network file system. Roots on network or FUSE file
systems (:func:`events_reliable`), roots with such a mount inside a folder the
walk enters (:func:`unreliable_mounts_below`) and systems without inotify are
never watched: their builds keep walking.
"""

from __future__ import annotations

import os
import stat
import sys
from dataclasses import dataclass, field
from typing import Any

from tooldeck.core.errors import ToolError
from tooldeck.workspace.dirfd import open_dir
from tooldeck.workspace.ignore import IGNORE_FILES, IgnoreRules
from tooldeck.workspace.tempnames import is_temp_name

try:  # Linux only; elsewhere every build walks
    from inotify_simple import INotify
    from inotify_simple import flags as _f
except ImportError:  # pragma: no cover - the dependency is installed on Linux
    INotify = None  # type: ignore[assignment,misc]

MAX_WATCHED_DIRS = 20_000  # beyond: a root this large keeps walking (the per-user watch limit is shared)

# network and user-space file systems: changes made elsewhere raise no local event
_UNWATCHABLE_FS = frozenset(
    {"nfs", "nfs4", "cifs", "smb3", "smbfs", "9p", "afs", "ceph", "glusterfs", "lustre", "virtiofs", "fuse", "fuseblk"}
)

if INotify is not None:
    _CHILD = _f.CREATE | _f.DELETE | _f.MODIFY | _f.ATTRIB | _f.MOVED_FROM | _f.MOVED_TO
    _MASK = _CHILD | _f.DELETE_SELF | _f.MOVE_SELF | _f.DONT_FOLLOW | _f.ONLYDIR | _f.EXCL_UNLINK
    _LOST = _f.Q_OVERFLOW | _f.IGNORED | _f.DELETE_SELF | _f.MOVE_SELF | _f.UNMOUNT
    _ISDIR = int(_f.ISDIR)


@dataclass(slots=True)
class Drained:
    """What the queue said: ``full`` when only a walk can tell, else the
    root-relative paths of the files named by an event (maybe unchanged)."""

    full: bool
    paths: set[str] = field(default_factory=set)


MOUNTINFO = "/proc/self/mountinfo"


@dataclass(frozen=True, slots=True)
class Mount:
    """One line of mountinfo: where, what file system, from which source."""

    point: str
    fstype: str
    source: str


def _mounts(mountinfo: str | None = None) -> list[Mount] | None:
    """Every mount, or None when mountinfo cannot be read."""
    out = []
    try:
        with open(mountinfo or MOUNTINFO, encoding="utf-8", errors="replace") as fh:
            for line in fh:
                left, _, right = line.partition(" - ")
                fields, tail = left.split(), right.split()
                if len(fields) >= 5 and len(tail) >= 2:
                    out.append(Mount(fields[4].replace("\\040", " "), tail[0], tail[1]))
    except OSError:
        return None
    return out


def _inside(path: str, point: str) -> bool:
    return path == point or path.startswith(point.rstrip("/") + "/")


def _unwatchable(fstype: str) -> bool:
    return fstype in _UNWATCHABLE_FS or fstype.startswith("fuse.")


def mount_of(path: str, mountinfo: str | None = None) -> Mount | None:
    """The mount holding ``path`` (the longest mount point that prefixes it),
    or None when mountinfo cannot be read."""
    best: Mount | None = None
    for m in _mounts(mountinfo) or []:
        if _inside(path, m.point) and (best is None or len(m.point) >= len(best.point)):
            best = m
    return best


def events_reliable(path: str, mountinfo: str | None = None) -> bool:
    """Whether every change to files under ``path`` raises a local inotify
    event: Linux, and a local file system (not NFS, SMB, 9p, FUSE...) at
    ``path``."""
    if INotify is None or not sys.platform.startswith("linux"):
        return False
    mount = mount_of(path, mountinfo)
    return mount is not None and not _unwatchable(mount.fstype)


def unreliable_mounts_below(path: str, mountinfo: str | None = None) -> set[str]:
    """Mount points strictly inside ``path`` whose changes may raise no local
    event (an NFS share mounted in a project folder)."""
    return {
        m.point
        for m in _mounts(mountinfo) or []
        if m.point != path and _inside(m.point, path) and _unwatchable(m.fstype)
    }


class TreeWatch:
    """The watched folders of one root and the queue of their events. Not
    thread-safe: its owner (one walk at a time) serialises the calls."""

    def __init__(self, rules: IgnoreRules) -> None:
        self.rules = rules
        self.root = rules.root
        self._ino: Any = INotify()
        self._dirs: dict[int, str] = {}  # watch descriptor -> folder rel ("" = the root)
        self.broken = False  # a folder could not be watched: the next drain asks for a walk
        self._blind = unreliable_mounts_below(self.root)  # a walk that enters one of these keeps walking

    @classmethod
    def open(cls, rules: IgnoreRules) -> TreeWatch | None:
        """A watch for ``rules.root``, or None where events are not reliable
        or the kernel refuses another inotify instance."""
        if not events_reliable(rules.root):
            return None
        try:
            return cls(rules)
        except OSError:
            return None

    def add(self, rel_dir: str) -> None:
        """Watch the folder ``rel_dir``; call it before the folder is listed,
        so a change made while the walk runs is queued, not missed."""
        if self.broken:
            return
        if len(self._dirs) >= MAX_WATCHED_DIRS:
            self.broken = True
            return
        path = os.path.join(self.root, rel_dir) if rel_dir else self.root
        if path in self._blind:
            self.broken = True
            return
        try:
            wd = self._ino.add_watch(path, _MASK)
        except PermissionError:
            # a folder this user cannot read: the walk cannot list it either, and a change
            # of its mode or owner is an event of its parent's watch (a walk then follows);
            # the root has no watched parent
            self.broken = not rel_dir
            return
        except OSError:  # vanished, swapped for a link, or the watch limit was reached
            self.broken = True
            return
        if self._dirs.setdefault(wd, rel_dir) != rel_dir:
            # one folder under two paths (a bind mount): the kernel gives both one watch,
            # whose events would be told under one path only
            self.broken = True

    def drain(self) -> Drained:
        """Every event queued since the last drain, read without waiting."""
        try:
            events = self._ino.read(timeout=0)
        except OSError:
            return Drained(True)
        if self.broken:
            return Drained(True)
        paths: set[str] = set()
        for ev in events:
            if ev.mask & _LOST:
                return Drained(True)
            parent = self._dirs.get(ev.wd)
            if parent is None:
                continue  # a watch replaced by a later one of this instance
            name = ev.name
            if not name or is_temp_name(name):
                continue
            rel = f"{parent}/{name}" if parent else name
            is_dir = bool(ev.mask & _ISDIR)
            if is_dir or name in IGNORE_FILES:
                if is_dir and self.rules.is_ignored(rel, True):
                    continue  # a pruned folder (``__pycache__``, an ignored build output...)
                return Drained(True)
            paths.add(rel)
        return Drained(False, paths)

    def stamp(self, rel: str) -> tuple[int, int, bool] | None:
        """``(size, mtime_ns, is_symlink)`` of the file ``rel``, looked up from
        the root down without following a link; None when it is gone or is
        not a file (a folder now has the name: the caller walks)."""
        parts = rel.split("/")
        try:
            fd = open_dir(self.root, parts[:-1])
        except (OSError, ToolError):
            return None
        try:
            st = os.stat(parts[-1], dir_fd=fd, follow_symlinks=False)
        except OSError:
            return None
        finally:
            os.close(fd)
        if stat.S_ISDIR(st.st_mode):
            return None
        return st.st_size, st.st_mtime_ns, stat.S_ISLNK(st.st_mode)

    def close(self) -> None:
        self._ino.close()
