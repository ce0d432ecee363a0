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
"""

from __future__ import annotations

import os
import threading
import time
from dataclasses import dataclass

from tooldeck.context.retrieve import FileInfo
from tooldeck.workspace.roots import Root, Workspace
from tooldeck.workspace.walk import walk

RACY_NS = 2_000_000_000  # mtime granularity margin (coarse file systems: 1-2 s)

Stamp = tuple[int, int]  # (size, mtime_ns)


@dataclass(slots=True)
class Walked:
    files: list[FileInfo]
    changed: list[tuple[Root, str]] | None  # (root, rel) added/removed/changed; None: no earlier walk to compare
    same_files: bool = False  # the same paths as the previous walk (none added or removed), in the same order


class Universe:
    """The last walk of a workspace: its files and their stamps."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._roots: tuple[tuple[str, str], ...] = ()
        self._stamps: dict[str, Stamp] = {}  # abs path -> stamp
        self._infos: dict[str, FileInfo] = {}  # abs path -> FileInfo (reused: display forms cost a lookup each)
        self._walked_ns = 0

    def walk(self, ws: Workspace) -> Walked:
        """Every admitted file of every root (ignore rules applied), and which
        of them changed since the previous call (``None`` on the first call
        or when the roots are not the same)."""
        with self._lock:
            roots = tuple((r.id, r.path) for r in ws.roots)
            same = roots == self._roots and self._walked_ns > 0
            started = time.time_ns()
            trusted_before = self._walked_ns - RACY_NS
            files: list[FileInfo] = []
            stamps: dict[str, Stamp] = {}
            infos: dict[str, FileInfo] = {}
            changed: list[tuple[Root, str]] = []
            old_stamps, old_infos = (self._stamps, self._infos) if same else ({}, {})
            old_order = iter(old_stamps)  # dicts keep the previous walk's order
            same_files = same
            for root in ws.roots:
                prefix = root.path.rstrip(os.sep) + os.sep
                for e in walk(ws.rules(root), include_dirs=False, stamps=True):
                    abs_path = prefix + e.rel if os.sep == "/" else os.path.join(root.path, e.rel)
                    stamp = (e.size, e.mtime_ns)
                    info = old_infos.get(abs_path)
                    if info is None or info.size != e.size:
                        info = FileInfo(abs_path, root.id, e.rel, ws.display(abs_path), e.size)
                    files.append(info)
                    infos[abs_path] = info
                    stamps[abs_path] = stamp
                    if same_files and next(old_order, None) != abs_path:
                        same_files = False
                    # a link's own stamp says nothing of its target's content: always re-checked
                    if same and (old_stamps.get(abs_path) != stamp or e.mtime_ns >= trusted_before or e.is_symlink):
                        changed.append((root, e.rel))
            if same_files and next(old_order, None) is not None:  # the previous walk had more files
                same_files = False
            if same:
                by_id = {r.id: r for r in ws.roots}
                for abs_path in old_stamps.keys() - stamps.keys():
                    info = old_infos[abs_path]
                    root = by_id.get(info.root_id)
                    if root is not None:
                        changed.append((root, info.rel))
            self._roots, self._stamps, self._infos, self._walked_ns = roots, stamps, infos, started
            return Walked(files, changed if same else None, same_files)
