"""Walking a root: every file and directory that the ignore rules admit.

``os.scandir`` with an explicit stack (no recursion limit), pruning ignored and
denied directories before descending, never following a symlinked directory
(no loops, no escapes). Entries come out sorted per directory so trees and
listings are deterministic.

Each directory is listed through a descriptor opened with ``O_NOFOLLOW`` whose
inode must be the one seen when its parent was listed: a folder swapped for a
symlink (to the outside) while the walk runs is skipped, never listed.
"""

from __future__ import annotations

import os
from collections.abc import Iterator
from typing import NamedTuple

from tooldeck.core.errors import ToolError
from tooldeck.workspace.content import open_nofollow
from tooldeck.workspace.ignore import DirSpec, IgnoreRules
from tooldeck.workspace.tempnames import is_temp_name

_DIR_FLAGS = os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW | getattr(os, "O_CLOEXEC", 0)


class Entry(NamedTuple):
    """One admitted path (a NamedTuple: a walk makes one per file, and a
    frozen dataclass costs several times more to build)."""

    rel: str  # "/"-separated, relative to the root
    is_dir: bool
    is_symlink: bool
    depth: int  # 1 for a direct child of the start directory
    size: int = 0


def _list_dir(abs_dir: str, expect_ino: int | None, sizes: bool) -> list[tuple[str, bool, bool, int]] | None:
    """Sorted ``(name, is_dir, is_symlink, n)`` of ``abs_dir`` (``n``: a
    directory's inode, a file's size when ``sizes``), or None if it cannot be
    listed or is no longer the directory that was seen (``expect_ino``)."""
    try:
        fd = os.open(abs_dir, _DIR_FLAGS)
    except OSError:
        return None
    try:
        if expect_ino is not None and os.fstat(fd).st_ino != expect_ino:
            return None
        out: list[tuple[str, bool, bool, int]] = []
        with os.scandir(fd) as it:
            for e in it:
                try:
                    is_link = e.is_symlink()
                    is_dir = e.is_dir(follow_symlinks=False)
                    # stat needs the descriptor open (fd-based entries stat relative to it)
                    n = e.stat(follow_symlinks=False).st_ino if is_dir else 0
                    if sizes and not is_dir:
                        n = e.stat(follow_symlinks=False).st_size
                except OSError:
                    continue
                out.append((e.name, is_dir, is_link, n))
        out.sort()
        return out
    except OSError:
        return None
    finally:
        os.close(fd)


def _start_inode(root: str, start_rel: str) -> int | None:
    """The start directory's inode, reached from the root without following
    any symlink (None if that fails)."""
    try:
        fd = open_nofollow(os.path.join(root, start_rel) if start_rel else root, start_rel, root, directory=True)
    except ToolError:
        return None
    try:
        return os.fstat(fd).st_ino
    finally:
        os.close(fd)


def walk(
    rules: IgnoreRules,
    start_rel: str = "",
    *,
    max_depth: int | None = None,
    include_dirs: bool = True,
    respect_ignore: bool = True,
    sizes: bool = False,
) -> Iterator[Entry]:
    """Yield entries under ``root/start_rel`` depth-first in path order (a
    folder, then everything below it, then its next sibling)."""
    root = rules.root
    if max_depth is not None and max_depth < 1:
        return  # depth 0 is the start folder itself: it has no entries to show
    start_rel = start_rel.strip("/")
    if start_rel in (".",):
        start_rel = ""
    # rules in effect above the start directory
    chain: list[DirSpec] = []
    if respect_ignore:
        parts = start_rel.split("/") if start_rel else []
        for i in range(len(parts) + 1):
            spec = rules.dir_spec("/".join(parts[:i]))
            if spec is not None:
                chain.append(spec)
    check = respect_ignore and rules.has_root_rules
    start_ino = _start_inode(root, start_rel)
    if start_ino is None:
        return
    first = _list_dir(os.path.join(root, start_rel) if start_rel else root, start_ino, sizes)
    if first is None:
        return
    # one frame per open level: (folder rel, depth, rules chain, its entries, next index)
    stack: list[tuple[str, int, list[DirSpec], list[tuple[str, bool, bool, int]], int]] = [
        (start_rel, 0, chain, first, 0)
    ]
    while stack:
        rel_dir, depth, specs, entries, i = stack.pop()
        while i < len(entries):
            name, is_dir, is_link, n = entries[i]
            i += 1
            rel = f"{rel_dir}/{name}" if rel_dir else name
            if respect_ignore:
                if rules.denied_name(name, is_dir):
                    continue
                if (specs or check) and rules.decide(rel, is_dir, specs):
                    continue
            elif is_temp_name(name):  # a write in progress: never listed, whatever the rules
                continue
            if not is_dir:
                yield Entry(rel, False, is_link, depth + 1, n)
                continue
            if include_dirs:
                yield Entry(rel, True, is_link, depth + 1)
            if max_depth is not None and depth + 1 >= max_depth:
                continue
            children = _list_dir(os.path.join(root, rel), n, sizes)
            if children is None:
                continue
            child_specs = specs
            if respect_ignore:
                spec = rules.dir_spec(rel)
                if spec is not None:
                    child_specs = [*specs, spec]
            # pre-order: finish this folder after the child
            stack.append((rel_dir, depth, specs, entries, i))
            stack.append((rel, depth + 1, child_specs, children, 0))
            break


def walk_files(rules: IgnoreRules, start_rel: str = "", **kw: object) -> Iterator[str]:
    """Relative paths of the admitted files under ``start_rel``."""
    for entry in walk(rules, start_rel, include_dirs=False, **kw):  # type: ignore[arg-type]
        yield entry.rel
