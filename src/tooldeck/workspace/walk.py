"""Walking a root: every file and directory that the ignore rules admit.

``os.scandir`` with an explicit stack (no recursion limit), pruning ignored and
denied directories before descending, never following a symlinked directory
(no loops, no escapes). Entries come out sorted per directory so trees and
listings are deterministic.

Each directory is listed through a descriptor opened relative to its parent's
descriptor (:mod:`tooldeck.workspace.dirfd`: ``O_NOFOLLOW``, from the root
down) whose inode must be the one seen when its parent was listed: a folder
swapped for a symlink (to the outside) while the walk runs is skipped, never
listed.

The state directory (:mod:`tooldeck.workspace.hidden`) is skipped whatever
the rules, ``respect_ignore=False`` included: it is outside every root.
"""

from __future__ import annotations

import os
from bisect import bisect_left
from collections.abc import Callable, Iterator
from typing import NamedTuple

from tooldeck.core.errors import ToolError
from tooldeck.workspace.dirfd import DIR_FLAGS, open_dir
from tooldeck.workspace.hidden import hidden_below, is_hidden
from tooldeck.workspace.ignore import (
    DENY_DIRS,
    DENY_FILE_SUFFIXES,
    DENY_FILES,
    IGNORE_FILES,
    DirSpec,
    IgnoreRules,
    ignored_file,
)
from tooldeck.workspace.tempnames import TEMP_PREFIX

_Listing = list[tuple[str, bool, bool, int, int]]
_Frame = tuple[str, int, list[DirSpec], _Listing, int, int | None]


class Entry(NamedTuple):
    """One admitted path (a NamedTuple: a walk makes one per file, and a
    frozen dataclass costs several times more to build)."""

    rel: str  # "/"-separated, relative to the root
    is_dir: bool
    is_symlink: bool
    depth: int  # 1 for a direct child of the start directory
    size: int = 0
    mtime_ns: int = 0  # with ``stamps``: the file's modification time (change detection without a second stat)


new_entry = tuple.__new__  # an Entry without the Python-level NamedTuple constructor (one per file)

MAX_HELD_FDS = 64  # deeper folders are reopened from the root instead of held open


def _list_fd(fd: int, sizes: bool, stamps: bool = False) -> _Listing | None:
    """Sorted ``(name, is_dir, is_symlink, n, mtime_ns)`` of the open folder
    ``fd`` (``n``: a directory's inode, a file's size when ``sizes``;
    ``mtime_ns`` a file's when ``stamps``, else 0). A write in progress (a
    tooldeck temp file) is never listed, whatever the rules."""
    want_stat = sizes or stamps
    try:
        out: _Listing = []
        append = out.append
        with os.scandir(fd) as it:
            for e in it:
                name = e.name
                if name.startswith(TEMP_PREFIX):  # is_temp_name, inlined: one call less per entry
                    continue
                try:
                    is_link = e.is_symlink()
                    is_dir = e.is_dir(follow_symlinks=False)
                    # stat needs the descriptor open (fd-based entries stat relative to it)
                    if is_dir:
                        append((name, True, is_link, e.stat(follow_symlinks=False).st_ino, 0))
                    elif want_stat:
                        st = e.stat(follow_symlinks=False)
                        append((name, False, is_link, st.st_size, st.st_mtime_ns if stamps else 0))
                    else:
                        append((name, False, is_link, 0, 0))
                except OSError:
                    continue
        out.sort()
        return out
    except OSError:
        return None


def _rule_files(entries: _Listing) -> list[str]:
    """Which of :data:`IGNORE_FILES` a sorted listing holds (one bisection per
    name: a folder of thousands of files is not scanned)."""
    found = []
    for name in IGNORE_FILES:
        i = bisect_left(entries, (name,))
        if i < len(entries) and entries[i][0] == name:
            found.append(name)
    return found


def _open_child(root: str, parent_fd: int | None, rel: str, name: str, expect_ino: int) -> int | None:
    """The folder ``rel`` (child ``name`` of ``parent_fd``, or reached from the
    root when the parent is not held), or None when it cannot be opened or is
    no longer the folder that was listed (``expect_ino``)."""
    try:
        fd = os.open(name, DIR_FLAGS, dir_fd=parent_fd) if parent_fd is not None else open_dir(root, rel.split("/"))
    except (OSError, ToolError):
        return None
    try:
        if os.fstat(fd).st_ino == expect_ino:
            return fd
    except OSError:
        pass
    os.close(fd)
    return None


def _open_start(root: str, start_rel: str) -> int | None:
    """The start folder, reached from the root without following any link."""
    try:
        return open_dir(root, start_rel.split("/") if start_rel else [])
    except (OSError, ToolError):
        return None


def _first_frame(rules: IgnoreRules, start_rel: str, respect_ignore: bool, sizes: bool, stamps: bool) -> _Frame | None:
    """The walk's frame of its start folder, or None when there is nothing to walk
    (hidden, not a folder reached without a link, unreadable)."""
    root = rules.root
    start_rel = start_rel.strip("/")
    if start_rel in (".",):
        start_rel = ""
    if is_hidden(os.path.join(root, start_rel) if start_rel else root):
        return None
    chain = _rules_above(rules, start_rel) if respect_ignore else []
    start_fd = _open_start(root, start_rel)
    if start_fd is None:
        return None
    first = _list_fd(start_fd, sizes, stamps)
    if first is None:
        os.close(start_fd)
        return None
    return (start_rel, 0, chain, first, 0, start_fd)


def _child_frame(
    rules: IgnoreRules,
    parent_fd: int | None,
    rel: str,
    name: str,
    ino: int,
    depth: int,
    specs: list[DirSpec],
    held: int,
    respect_ignore: bool,
    sizes: bool,
    stamps: bool,
) -> _Frame | None:
    """The walk's frame of the folder ``rel`` (listed, its rule files read),
    or None when it cannot be opened or listed. Its descriptor is kept open
    unless ``held`` folders are open already (then its children reopen from
    the root)."""
    child_fd = _open_child(rules.root, parent_fd, rel, name, ino)
    if child_fd is None:
        return None
    children = _list_fd(child_fd, sizes, stamps)
    kept: int | None = child_fd
    if held >= MAX_HELD_FDS or children is None:
        os.close(child_fd)  # too deep to hold: its children reopen from the root
        kept = None
    if children is None:
        return None
    child_specs = specs
    if respect_ignore:
        spec = rules.dir_spec(rel, _rule_files(children))
        if spec is not None:
            child_specs = [*specs, spec]
    return (rel, depth, child_specs, children, 0, kept)


def _rules_above(rules: IgnoreRules, start_rel: str) -> list[DirSpec]:
    """The ignore rules in effect at ``start_rel``: those of every folder above it, and its own."""
    chain: list[DirSpec] = []
    parts = start_rel.split("/") if start_rel else []
    for i in range(len(parts) + 1):
        spec = rules.dir_spec("/".join(parts[:i]))
        if spec is not None:
            chain.append(spec)
    return chain


def walk(
    rules: IgnoreRules,
    start_rel: str = "",
    *,
    max_depth: int | None = None,
    include_dirs: bool = True,
    respect_ignore: bool = True,
    sizes: bool = False,
    stamps: bool = False,
    stop: Callable[[], None] | None = None,
) -> Iterator[Entry]:
    """Yield entries under ``root/start_rel`` depth-first in path order (a
    folder, then everything below it, then its next sibling). ``stamps``
    fills files' ``size`` and ``mtime_ns`` (from the listing's own stat).
    ``stop`` is called before each folder is opened (a cancelled call's
    check raises: the walk stops and closes the folders it holds)."""
    root = rules.root
    if max_depth is not None and max_depth < 1:
        return  # depth 0 is the start folder itself: it has no entries to show
    first = _first_frame(rules, start_rel, respect_ignore, sizes, stamps)
    if first is None:
        return
    skip = hidden_below(root)  # the state directory, when this root holds it
    check = respect_ignore and rules.has_root_rules
    # one frame per open level: (folder rel, depth, rules chain, its entries, next index, its fd)
    stack: list[_Frame] = [first]
    held: int | None = None  # the fd of the frame being listed (off the stack meanwhile)
    try:
        while stack:
            rel_dir, depth, specs, entries, i, fd = stack.pop()
            held = fd
            prefix = f"{rel_dir}/" if rel_dir else ""
            judge = respect_ignore and bool(specs or check)
            file_checks = rules.file_checks(specs) if judge else []
            while i < len(entries):
                name, is_dir, is_link, n, mtime = entries[i]
                i += 1
                rel = prefix + name
                if not is_dir:
                    # denied_name for a file, inlined (temp names never reach a listing)
                    if respect_ignore and (name in DENY_FILES or name.endswith(DENY_FILE_SUFFIXES)):
                        continue
                    if judge and ignored_file(rel, file_checks):
                        continue
                    yield new_entry(Entry, (rel, False, is_link, depth + 1, n, mtime))
                    continue
                if respect_ignore:
                    if name in DENY_DIRS:
                        continue
                    if judge and rules.decide(rel, True, specs):
                        continue
                if skip and rel in skip:
                    continue
                if include_dirs:
                    yield Entry(rel, True, is_link, depth + 1)
                if max_depth is not None and depth + 1 >= max_depth:
                    continue
                if stop is not None:
                    stop()
                child = _child_frame(
                    rules, fd, rel, name, n, depth + 1, specs, len(stack), respect_ignore, sizes, stamps
                )
                if child is None:
                    continue
                # pre-order: finish this folder after the child
                stack.append((rel_dir, depth, specs, entries, i, fd))
                held = None
                stack.append(child)
                break
            else:
                held = None
                if fd is not None:
                    os.close(fd)
    finally:  # the walk ended, failed, was cancelled or abandoned: close every folder it holds
        if held is not None:
            os.close(held)
        for frame in stack:
            if frame[5] is not None:
                os.close(frame[5])


def walk_files(rules: IgnoreRules, start_rel: str = "", **kw: object) -> Iterator[str]:
    """Relative paths of the admitted files under ``start_rel``."""
    for entry in walk(rules, start_rel, include_dirs=False, **kw):  # type: ignore[arg-type]
        yield entry.rel
