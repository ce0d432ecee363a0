"""Walking a root: every file and directory that the ignore rules admit.

``os.scandir`` with an explicit stack (no recursion limit), pruning ignored and
denied directories before descending, never following a symlinked directory
(no loops, no escapes). Entries come out sorted per directory so trees and
listings are deterministic.
"""

from __future__ import annotations

import os
from collections.abc import Iterator
from dataclasses import dataclass

from pathspec import GitIgnoreSpec

from tooldeck.workspace.ignore import IgnoreRules


@dataclass(frozen=True, slots=True)
class Entry:
    rel: str  # "/"-separated, relative to the root
    is_dir: bool
    is_symlink: bool
    depth: int  # 1 for a direct child of the start directory
    size: int = 0


def walk(
    rules: IgnoreRules,
    start_rel: str = "",
    *,
    max_depth: int | None = None,
    include_dirs: bool = True,
    respect_ignore: bool = True,
    sizes: bool = False,
) -> Iterator[Entry]:
    """Yield entries under ``root/start_rel`` in depth-first, sorted order."""
    root = rules.root
    start_rel = start_rel.strip("/")
    if start_rel in (".",):
        start_rel = ""
    # rules in effect above the start directory
    chain: list[tuple[str, GitIgnoreSpec]] = []
    if respect_ignore:
        parts = start_rel.split("/") if start_rel else []
        for i in range(len(parts) + 1):
            base = "/".join(parts[:i])
            spec = rules.rules_for_dir(base)
            if spec is not None:
                chain.append((base, spec))
    stack: list[tuple[str, int, list[tuple[str, GitIgnoreSpec]]]] = [(start_rel, 0, chain)]
    while stack:
        rel_dir, depth, specs = stack.pop()
        abs_dir = os.path.join(root, rel_dir) if rel_dir else root
        try:
            with os.scandir(abs_dir) as it:
                entries = sorted(it, key=lambda e: e.name)
        except OSError:
            continue
        subdirs: list[tuple[str, int, list[tuple[str, GitIgnoreSpec]]]] = []
        for e in entries:
            try:
                is_link = e.is_symlink()
                is_dir = e.is_dir(follow_symlinks=False)
            except OSError:
                continue
            rel = f"{rel_dir}/{e.name}" if rel_dir else e.name
            if respect_ignore:
                if rules.denied_name(e.name, is_dir):
                    continue
                if specs and rules.decide(rel, is_dir, specs):
                    continue
            if is_dir:
                if include_dirs:
                    yield Entry(rel, True, is_link, depth + 1)
                if max_depth is None or depth + 1 < max_depth:
                    child_specs = specs
                    if respect_ignore:
                        spec = rules.rules_for_dir(rel)
                        if spec is not None:
                            child_specs = [*specs, (rel, spec)]
                    subdirs.append((rel, depth + 1, child_specs))
            else:
                size = 0
                if sizes:
                    try:
                        size = e.stat(follow_symlinks=False).st_size
                    except OSError:
                        size = 0
                yield Entry(rel, False, is_link, depth + 1, size)
        # depth-first, in sorted order: push reversed
        stack.extend(reversed(subdirs))


def walk_files(rules: IgnoreRules, start_rel: str = "", **kw: object) -> Iterator[str]:
    """Relative paths of the admitted files under ``start_rel``."""
    for entry in walk(rules, start_rel, include_dirs=False, **kw):  # type: ignore[arg-type]
        yield entry.rel
