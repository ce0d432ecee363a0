"""Walking a root: every file and directory that the ignore rules admit.

``os.scandir`` with an explicit stack (no recursion limit), pruning ignored and
denied directories before descending, never following a symlinked directory
(no loops, no escapes). Entries come out sorted per directory so trees and
listings are deterministic.

Each directory is listed through a descriptor opened relative to its parent's
descriptor (:mod:`tooldeck.workspace.dirfd`: ``O_NOFOLLOW``, from the root
down): a folder swapped for a symlink (to the outside) while the walk runs
is skipped, never listed. The folder opened must also be the one listed:
its inode is the directory entry's (``d_ino``, read with the listing, no
stat per folder), or where the file system numbers entries otherwise (a
mount point, an overlay), the one its name has when it is opened.

The state directory (:mod:`tooldeck.workspace.hidden`) is skipped whatever
the rules, ``respect_ignore=False`` included: it is outside every root.

The cost of a big tree is per file, so a folder is handled as a whole: its
listing comes by columns (:mod:`tooldeck.workspace.listing`), its files are
judged together (:func:`tooldeck.workspace.ignore.ignored_files`) and become
runs of ready entries between its subfolders; :func:`walk_files` flattens
the runs of paths in C.
"""

from __future__ import annotations

import os
import re
from bisect import bisect_left
from collections.abc import Callable, Iterator
from itertools import chain, compress, repeat
from typing import Any, NamedTuple

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
    ignored_files,
)
from tooldeck.workspace.listing import Dirs, Files, list_fd

_Item = list["Entry"] | tuple[str, int]  # a run of admitted files, ready to yield, or one folder
_Frame = tuple[str, int, list[DirSpec], list[_Item], int, int | None]
# a folder's file names joined by newlines hold a denied suffix only if this matches (checked one by one then)
_DENY_SUFFIX_HINT = re.compile("(?:" + "|".join(re.escape(s) for s in DENY_FILE_SUFFIXES) + ")(?:\n|$)")


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


def _rule_files(files: Files) -> list[str]:
    """Which of :data:`IGNORE_FILES` a sorted listing holds (one bisection per
    name: a folder of thousands of files is not scanned)."""
    names = files.names
    found = []
    for name in IGNORE_FILES:
        i = bisect_left(names, name)
        if i < len(names) and names[i] == name:
            found.append(name)
    return found


class _Opts(NamedTuple):
    respect_ignore: bool
    sizes: bool
    stamps: bool
    rels: bool  # files as their relative paths only (:func:`walk_files`), no Entry built


def _admitted_files(
    rules: IgnoreRules, prefix: str, depth: int, specs: list[DirSpec], files: Files, opts: _Opts
) -> list[Entry] | list[str]:
    """The entries of the files of one folder that the rules admit (in order):
    the deny list and the ignore rules applied to the whole folder at once,
    the entries built in C (``map`` over columns, no Python loop body per file)."""
    respect_ignore = opts.respect_ignore
    if (
        respect_ignore
        and files.names
        and (_DENY_SUFFIX_HINT.search("\n".join(files.names)) or not DENY_FILES.isdisjoint(files.names))
    ):
        files = files.select([not (n in DENY_FILES or n.endswith(DENY_FILE_SUFFIXES)) for n in files.names])
    names = files.names
    rels = list(map(prefix.__add__, names)) if prefix else names
    if respect_ignore and (specs or rules.has_root_rules) and rels:
        out = ignored_files(prefix, names, rules.file_checks(specs))
        if out:  # a few of the folder's files, usually: mark them rather than test every index
            keep = [True] * len(names)
            for k in out:
                keep[k] = False
            rels = list(compress(rels, keep))
            if opts.rels:
                return rels
            files = files.select(keep)
    if opts.rels:
        return rels
    rows = zip(rels, repeat(False), files.links, repeat(depth), files.sizes, files.mtimes)
    return list(map(new_entry, repeat(Entry), rows))


def _plan(
    rules: IgnoreRules,
    rel_dir: str,
    depth: int,
    specs: list[DirSpec],
    listing: tuple[Files, Dirs],
    opts: _Opts,
) -> list[_Item]:
    """What the walk yields for one folder, in path order: runs of admitted
    file entries (ready to yield) between the folders (still to judge and open)."""
    files, dirs = listing
    prefix = f"{rel_dir}/" if rel_dir else ""
    admitted: list[Any] = _admitted_files(rules, prefix, depth + 1, specs, files, opts)
    if not dirs:
        return [admitted] if admitted else []
    items: list[_Item] = []
    lo = 0
    for d in dirs:
        hi = bisect_left(admitted, prefix + d[0] if opts.rels else (prefix + d[0],), lo)
        if hi > lo:
            items.append(admitted[lo:hi])
        items.append(d)
        lo = hi
    if lo < len(admitted):
        items.append(admitted[lo:])
    return items


def _open_child(root: str, parent_fd: int | None, rel: str, name: str, expect_ino: int) -> int | None:
    """The folder ``rel`` (child ``name`` of ``parent_fd``, or reached from the
    root when the parent is not held), or None when it cannot be opened or is
    no longer the folder that was listed (``expect_ino``)."""
    try:
        fd = os.open(name, DIR_FLAGS, dir_fd=parent_fd) if parent_fd is not None else open_dir(root, rel.split("/"))
    except (OSError, ToolError):
        return None
    try:
        st = os.fstat(fd)
        if st.st_ino == expect_ino or _named_now(root, parent_fd, rel, name, st):
            return fd
    except OSError:
        pass
    os.close(fd)
    return None


def _named_now(root: str, parent_fd: int | None, rel: str, name: str, opened: os.stat_result) -> bool:
    """Whether ``name`` is still the folder ``opened``, by its own lstat:
    the listing's inode is the directory entry's (``d_ino``: no stat per
    folder), which a mount point or an overlay file system may number
    otherwise than the folder itself."""
    if parent_fd is not None:
        now = os.stat(name, dir_fd=parent_fd, follow_symlinks=False)
    else:
        now = os.lstat(os.path.join(root, rel))
    return now.st_ino == opened.st_ino and now.st_dev == opened.st_dev


def _open_start(root: str, start_rel: str) -> int | None:
    """The start folder, reached from the root without following any link."""
    try:
        return open_dir(root, start_rel.split("/") if start_rel else [])
    except (OSError, ToolError):
        return None


def _first_frame(rules: IgnoreRules, start_rel: str, opts: _Opts) -> _Frame | None:
    """The walk's frame of its start folder, or None when there is nothing to walk
    (hidden, not a folder reached without a link, unreadable)."""
    root = rules.root
    start_rel = start_rel.strip("/")
    if start_rel in (".",):
        start_rel = ""
    if is_hidden(os.path.join(root, start_rel) if start_rel else root):
        return None
    chain = _rules_above(rules, start_rel) if opts.respect_ignore else []
    start_fd = _open_start(root, start_rel)
    if start_fd is None:
        return None
    first = list_fd(start_fd, opts.sizes, opts.stamps)
    if first is None:
        os.close(start_fd)
        return None
    return (start_rel, 0, chain, _plan(rules, start_rel, 0, chain, first, opts), 0, start_fd)


def _child_frame(
    rules: IgnoreRules,
    parent_fd: int | None,
    rel: str,
    name: str,
    ino: int,
    depth: int,
    specs: list[DirSpec],
    held: int,
    opts: _Opts,
) -> _Frame | None:
    """The walk's frame of the folder ``rel`` (listed, its rule files read),
    or None when it cannot be opened or listed. Its descriptor is kept open
    unless ``held`` folders are open already (then its children reopen from
    the root)."""
    child_fd = _open_child(rules.root, parent_fd, rel, name, ino)
    if child_fd is None:
        return None
    children = list_fd(child_fd, opts.sizes, opts.stamps)
    kept: int | None = child_fd
    if held >= MAX_HELD_FDS or children is None:
        os.close(child_fd)  # too deep to hold: its children reopen from the root
        kept = None
    if children is None:
        return None
    child_specs = specs
    if opts.respect_ignore:
        spec = rules.dir_spec(rel, _rule_files(children[0]))
        if spec is not None:
            child_specs = [*specs, spec]
    return (rel, depth, child_specs, _plan(rules, rel, depth, child_specs, children, opts), 0, kept)


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
    opts = _Opts(respect_ignore, sizes, stamps, False)
    for run in _runs(rules, start_rel, max_depth, include_dirs, opts, stop):
        yield from run


def walk_files(rules: IgnoreRules, start_rel: str = "", **kw: Any) -> Iterator[str]:
    """Relative paths of the admitted files under ``start_rel`` (the walk's
    runs of paths flattened in C: no generator step, no entry per file)."""
    opts = _Opts(kw.pop("respect_ignore", True), kw.pop("sizes", False), kw.pop("stamps", False), True)
    max_depth = kw.pop("max_depth", None)
    stop = kw.pop("stop", None)
    if kw:
        raise TypeError(f"walk_files() got unexpected arguments {sorted(kw)}")
    return chain.from_iterable(_runs(rules, start_rel, max_depth, False, opts, stop))


def _runs(
    rules: IgnoreRules,
    start_rel: str,
    max_depth: int | None,
    include_dirs: bool,
    opts: _Opts,
    stop: Callable[[], None] | None,
) -> Iterator[list[Any]]:
    """:func:`walk`'s entries (or with ``opts.rels`` the files' paths) as
    runs: lists that together are the walk, in order."""
    root = rules.root
    respect_ignore = opts.respect_ignore
    if max_depth is not None and max_depth < 1:
        return  # depth 0 is the start folder itself: it has no entries to show
    first = _first_frame(rules, start_rel, opts)
    if first is None:
        return
    skip = hidden_below(root)  # the state directory, when this root holds it
    check = respect_ignore and rules.has_root_rules
    # one frame per open level: (folder rel, depth, rules chain, its entries, next index, its fd)
    stack: list[_Frame] = [first]
    held: int | None = None  # the fd of the frame being listed (off the stack meanwhile)
    try:
        while stack:
            rel_dir, depth, specs, items, i, fd = stack.pop()
            held = fd
            prefix = f"{rel_dir}/" if rel_dir else ""
            while i < len(items):
                item = items[i]
                i += 1
                if item.__class__ is list:
                    yield item  # a run of admitted files
                    continue
                name, ino = item  # type: ignore[misc]
                rel = prefix + name
                if respect_ignore:
                    if name in DENY_DIRS:
                        continue
                    if (specs or check) and rules.decide(rel, True, specs):
                        continue
                if skip and rel in skip:
                    continue
                if include_dirs:
                    yield [Entry(rel, True, False, depth + 1)]
                if max_depth is not None and depth + 1 >= max_depth:
                    continue
                if stop is not None:
                    stop()
                child = _child_frame(rules, fd, rel, name, ino, depth + 1, specs, len(stack), opts)
                if child is None:
                    continue
                # pre-order: finish this folder after the child
                stack.append((rel_dir, depth, specs, items, i, fd))
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
