"""One folder's listing for the walk (:mod:`tooldeck.workspace.walk`), column
by column.

A walk's cost on a big tree is per entry, so the listing does its per-entry
work in C: ``map``/``compress`` over the directory entries with bound methods
and ``operator`` getters rather than a Python loop body per file. The type of
each entry comes from the directory entry itself (``d_type``: no stat per
file unless sizes are asked for), and a folder's inode too (``d_ino``: no
stat), which the walk checks when it opens it.
"""

from __future__ import annotations

import os
from itertools import compress
from operator import attrgetter, not_
from typing import NamedTuple

from tooldeck.workspace.tempnames import TEMP_PREFIX

_name = attrgetter("name")
_size = attrgetter("st_size")
_mtime = attrgetter("st_mtime_ns")
_is_link = os.DirEntry.is_symlink
_is_dir = os.DirEntry.is_dir  # follows a link: only used where there is none


class Files(NamedTuple):
    """The files of one folder, sorted by name, as parallel columns (a
    symbolic link, to a folder too, is listed here: the walk never follows one)."""

    names: list[str]
    links: list[bool]
    sizes: list[int]  # 0 unless sizes or stamps were asked for
    mtimes: list[int]  # 0 unless stamps were asked for

    def select(self, keep: list[bool]) -> Files:
        """The files whose ``keep`` flag is true."""
        return Files(*(list(compress(col, keep)) for col in self))


Dirs = list[tuple[str, int]]  # (name, inode), sorted by name; never a link


def list_fd(fd: int, sizes: bool, stamps: bool = False) -> tuple[Files, Dirs] | None:
    """The files and folders of the open folder ``fd``, or None when it cannot
    be listed. Sizes when ``sizes`` or ``stamps``, mtimes when ``stamps``. A
    write in progress (a tooldeck temp file) is never listed, whatever the
    rules; an entry that fails (gone meanwhile) is left out."""
    try:
        with os.scandir(fd) as it:
            ents = list(it)
    except OSError:
        return None
    ents.sort(key=_name)
    names = list(map(_name, ents))
    if ("\n" + TEMP_PREFIX) in "\n" + "\n".join(names):  # rare: then one by one
        ents = [e for e in ents if not e.name.startswith(TEMP_PREFIX)]
        names = list(map(_name, ents))
    want_stat = sizes or stamps
    try:
        return _split(ents, names, want_stat, stamps)
    except OSError:  # an entry vanished or cannot be stat'ed: sort them out one by one
        return _split_careful(ents, want_stat, stamps)


def _split(ents: list[os.DirEntry[str]], names: list[str], want_stat: bool, stamps: bool) -> tuple[Files, Dirs]:
    """:func:`list_fd`'s split of sorted entries (and their ``names``; raises on the first failing entry)."""
    links = list(map(_is_link, ents))
    # is_dir() alone follows a link: with none among them it reads the entry's own type, in C
    kinds = [e.is_dir(follow_symlinks=False) for e in ents] if True in links else list(map(_is_dir, ents))
    if True in kinds:
        dirs = [(e.name, e.inode()) for e in compress(ents, kinds)]  # d_ino: see walk._named_now
        files_only = list(map(not_, kinds))
        ents = list(compress(ents, files_only))
        names = list(compress(names, files_only))
        links = list(compress(links, files_only))
    else:
        dirs = []
    if want_stat:
        sts = [e.stat(follow_symlinks=False) for e in ents]
        file_sizes = list(map(_size, sts))
        mtimes = list(map(_mtime, sts)) if stamps else [0] * len(names)
    else:
        file_sizes = mtimes = [0] * len(names)
    return Files(names, links, file_sizes, mtimes), dirs


def _split_careful(ents: list[os.DirEntry[str]], want_stat: bool, stamps: bool) -> tuple[Files, Dirs]:
    """:func:`_split` entry by entry, leaving out those that fail."""
    rows: list[tuple[str, bool, int, int]] = []
    dirs: Dirs = []
    for e in ents:
        try:
            if e.is_dir(follow_symlinks=False):
                dirs.append((e.name, e.stat(follow_symlinks=False).st_ino))
            elif want_stat:
                st = e.stat(follow_symlinks=False)
                rows.append((e.name, e.is_symlink(), st.st_size, st.st_mtime_ns if stamps else 0))
            else:
                rows.append((e.name, e.is_symlink(), 0, 0))
        except OSError:
            continue
    cols = [list(c) for c in zip(*rows, strict=True)] if rows else [[], [], [], []]
    return Files(*cols), dirs


__all__ = ["Dirs", "Files", "list_fd"]
