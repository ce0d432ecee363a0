"""The files a build ranks, walked once per build, and what changed since the last.

A warm build used to walk the workspace twice (once for its own file list,
once more inside the symbol index refresh, which also stat'ed every file and
looked each one up in the SQLite stat cache). Here one walk, which stats each
file anyway for its size, also takes its modification time; comparing those
stamps with the previous walk's names the few files that were added, removed
or changed, and only those are refreshed in the symbol index.

A stamp is trusted only when the file's modification time is older than the
previous walk by more than the file system's timestamp granularity: a file
written in the same tick as that walk may have changed without its stamp
moving, so it is re-checked (by content hash, in the index) until it is old
enough. The first build, and any build after the roots changed, refresh the
index by its own full walk.

Where the kernel reports changes (:mod:`tooldeck.workspace.watch`: Linux, a
local file system), the walk also watches each admitted folder, and the next
build reads that queue instead of walking: only the files it names are
``stat``'ed again. A warm build over 12,800 unchanged files then spends
microseconds here instead of a third of a second. Whatever the queue cannot
describe exactly (a folder or rule file changed, a new file, an overflow)
falls back to the full walk above.
"""

from __future__ import annotations

import os
import threading
import time
from collections.abc import Callable, Collection
from dataclasses import dataclass, field

from tooldeck.context.retrieve import FileInfo
from tooldeck.workspace.roots import Root, Workspace
from tooldeck.workspace.walk import walk
from tooldeck.workspace.watch import TreeWatch

RACY_NS = 2_000_000_000  # mtime granularity margin (coarse file systems: 1-2 s)

Stamp = tuple[int, int]  # (size, mtime_ns)


@dataclass(slots=True)
class Walked:
    files: list[FileInfo]
    changed: list[tuple[Root, str]] | None  # (root, rel) added/removed/changed; None: no earlier walk to compare
    same_files: bool = False  # the same paths as the previous walk (none added or removed), in the same order
    stamps: dict[str, dict[str, Stamp]] = field(default_factory=dict)  # root id -> rel -> (size, mtime_ns)

    def stamp(self, info: FileInfo) -> Stamp | None:
        """The walk's stamp of ``info``'s file."""
        return self.stamps.get(info.root_id, {}).get(info.rel)


@dataclass(slots=True)
class _RootWalk:
    """One root's part of the last walk."""

    files: list[FileInfo]
    stamps: dict[str, Stamp]  # rel -> stamp, in walk order
    links: list[str]  # rels of symbolic links: their target may change without an event here
    watch: TreeWatch | None


def _resized(info: FileInfo, fresh: dict[str, Stamp]) -> FileInfo:
    """``info``, or a copy with the new size its file was re-stat'ed with."""
    stamp = fresh.get(info.rel)
    if stamp is None or stamp[0] == info.size:
        return info
    return FileInfo(info.abs, info.root_id, info.rel, info.shown, stamp[0])


class Universe:
    """The last walk of a workspace: its files and their stamps."""

    def __init__(self, *, watch: bool = True) -> None:
        self._watch = watch  # False: every build walks (the behaviour where inotify is missing)
        self._lock = threading.Lock()
        self._roots: tuple[tuple[str, str], ...] = ()
        self._walks: dict[str, _RootWalk] = {}
        self._walked_ns = 0
        self.full_walks = 0  # how many root walks listed the tree (the rest were answered by a watch)

    def walk(self, ws: Workspace, stop: Callable[[], None] | None = None) -> Walked:
        """Every admitted file of every root (ignore rules applied), and which
        of them changed since the previous call (``None`` on the first call
        or when the roots are not the same). ``stop``: a cancelled call's
        check, called per folder; when it raises, the walk is forgotten (the
        next one starts afresh)."""
        with self._lock:
            roots = tuple((r.id, r.path) for r in ws.roots)
            same = roots == self._roots and self._walked_ns > 0
            if not same:
                self.close()
            started = time.time_ns()
            files: list[FileInfo] = []
            changed: list[tuple[Root, str]] = []
            same_files = same
            walks: dict[str, _RootWalk] = {}
            for root in ws.roots:
                old = self._walks.get(root.id) if same else None
                seen: set[str] = set()  # files the queue named, reported even when a walk follows
                replayed = self._replay(root, old, changed, seen) if old is not None else None
                try:
                    done, kept_order = replayed or self._full(ws, root, old, changed, seen, stop)
                except BaseException:  # cancelled: nothing of this walk may be trusted next time
                    for w in walks.values():
                        if w.watch is not None and w not in self._walks.values():
                            w.watch.close()
                    self.close()
                    self._roots, self._walked_ns = (), 0
                    raise
                same_files = same_files and kept_order
                walks[root.id] = done
                files.extend(done.files)
            self._roots, self._walks, self._walked_ns = roots, walks, started
            stamps = {root_id: w.stamps for root_id, w in walks.items()}
            return Walked(files, changed if same else None, same_files, stamps)

    @staticmethod
    def _replay(
        root: Root, old: _RootWalk, changed: list[tuple[Root, str]], seen: set[str]
    ) -> tuple[_RootWalk, bool] | None:
        """``old`` brought up to date from its watch's queue (and whether no
        file was removed), or None when only a walk can tell: no watch, an
        event the queue cannot describe, or a new admitted file (its place in
        the walk order needs the walk)."""
        watch = old.watch
        if watch is None:
            return None
        drained = watch.drain()
        if drained.full:
            return None
        seen.update(drained.paths)
        fresh: dict[str, Stamp] = {}
        gone: set[str] = set()
        for rel in sorted(drained.paths):
            now = watch.stamp(rel)
            if rel not in old.stamps:
                if now is not None and not watch.rules.is_ignored(rel, False):
                    return None
            elif now is None:
                gone.add(rel)
            elif now[2] != (rel in old.links):
                return None  # a file became a link or a link a file
            else:
                fresh[rel] = now[:2]
        if not fresh and not gone:
            changed.extend((root, rel) for rel in old.links)
            return old, True
        stamps = {rel: fresh.get(rel, stamp) for rel, stamp in old.stamps.items() if rel not in gone}
        files = [_resized(f, fresh) for f in old.files if f.rel not in gone]
        links = [rel for rel in old.links if rel not in gone]
        changed.extend((root, rel) for rel in sorted(gone | fresh.keys() | set(links)))
        return _RootWalk(files, stamps, links, watch), not gone

    def _full(
        self,
        ws: Workspace,
        root: Root,
        old: _RootWalk | None,
        changed: list[tuple[Root, str]],
        seen: Collection[str] = (),
        stop: Callable[[], None] | None = None,
    ) -> tuple[_RootWalk, bool]:
        """Walk ``root``, watching each admitted folder before it is listed;
        the files that differ from ``old``, or that a watch saw written
        (``seen``: a same-size write can keep its stamp), go to ``changed``.
        Also says whether the walk found the same paths in the same order."""
        self.full_walks += 1
        if old is not None and old.watch is not None:
            old.watch.close()
        rules = ws.rules(root)
        watch = TreeWatch.open(rules) if self._watch else None
        if watch is not None:
            watch.add("")
        trusted_before = self._walked_ns - RACY_NS
        old_stamps = old.stamps if old is not None else {}
        old_infos = {f.rel: f for f in old.files} if old is not None else {}
        old_order = iter(old_stamps)  # dicts keep the previous walk's order
        same_order = True
        files: list[FileInfo] = []
        stamps: dict[str, Stamp] = {}
        links: list[str] = []
        prefix = root.path.rstrip(os.sep) + os.sep
        for e in walk(rules, include_dirs=watch is not None, stamps=True, stop=_closing(stop, watch)):
            rel = e.rel
            if e.is_dir:
                watch.add(rel)  # type: ignore[union-attr]  # dirs are yielded before they are listed
                continue
            stamp = (e.size, e.mtime_ns)
            info = old_infos.get(rel)
            if info is None or info.size != e.size:
                abs_path = prefix + rel if os.sep == "/" else os.path.join(root.path, rel)
                info = FileInfo(abs_path, root.id, rel, ws.display(abs_path), e.size)
            files.append(info)
            stamps[rel] = stamp
            if e.is_symlink:
                links.append(rel)
            if same_order and next(old_order, None) != rel:
                same_order = False
            # a link's own stamp says nothing of its target's content: always re-checked
            if old is not None and (
                old_stamps.get(rel) != stamp or e.mtime_ns >= trusted_before or e.is_symlink or rel in seen
            ):
                changed.append((root, rel))
        if same_order and next(old_order, None) is not None:  # the previous walk had more files
            same_order = False
        if old is not None:
            changed.extend((root, rel) for rel in old_stamps.keys() - stamps.keys())
        return _RootWalk(files, stamps, links, watch), same_order and old is not None

    def close(self) -> None:
        """Stop watching (the roots changed, or the owner is done)."""
        for w in self._walks.values():
            if w.watch is not None:
                w.watch.close()
        self._walks = {}


def _closing(stop: Callable[[], None] | None, watch: TreeWatch | None) -> Callable[[], None] | None:
    """``stop``, closing the walk's new watch before a cancellation leaves it."""
    if stop is None or watch is None:
        return stop

    def check() -> None:
        try:
            stop()
        except BaseException:
            watch.close()
            raise

    return check
