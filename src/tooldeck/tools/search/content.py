"""Content search, engine-neutral: count everything (pass 1), then fetch the
lines of one page (pass 2), falling back to a literal search when the regex
is invalid.

Order is fixed (roots in workspace order, then walker order of paths, then
line numbers), so "matching lines ``offset`` to ``offset + n``" always names
the same lines and a cursor only has to carry the offset.
"""

from __future__ import annotations

import os
from concurrent.futures import Future, ThreadPoolExecutor
from dataclasses import dataclass, field, replace
from typing import Protocol

from tooldeck.core import ToolError, invalid_arguments
from tooldeck.tools.search.model import ContentQuery, Counts, FileCount, InvalidPattern, Line
from tooldeck.tools.search.scope import Target, path_key
from tooldeck.workspace.content import read_lines
from tooldeck.workspace.dirfd import regular_files
from tooldeck.workspace.roots import Root


class Engine(Protocol):
    name: str

    def count(self, target: Target, q: ContentQuery) -> tuple[list[tuple[str, int]], list[str]]: ...

    def lines(self, root: Root, q: ContentQuery, rels: list[str], max_count: int) -> dict[str, list[Line]]: ...


# the check that the files rg counted are regular files reached without a link runs here,
# beside the page pass (which picks its files from the counts before the check ends)
_CHECKS = ThreadPoolExecutor(max_workers=2, thread_name_prefix="tdk-search-check")


@dataclass(slots=True)
class ContentSearch:
    query: ContentQuery  # as actually run (literal after a fallback)
    counts: Counts  # only the checked files once settled; before, every file rg counted
    invalid_regex: str | None = None  # why the pattern was searched literally
    pending: list[tuple[int, Future[set[str]]]] = field(default_factory=list)  # (root index, its check)

    def settle(self) -> bool:
        """Wait for the checks and keep only the files that passed; whether any was dropped."""
        if not self.pending:
            return False
        inside = {index: fut.result() for index, fut in self.pending}
        self.pending = []
        kept = [fc for fc in self.counts.files if fc.rel in inside.get(fc.root_index, ())]
        dropped = len(kept) != len(self.counts.files)
        self.counts.files = kept
        return dropped


@dataclass(slots=True)
class Block:
    """One file of a page: its lines in order; ``is_match`` marks the page's matches."""

    root_index: int
    rel: str
    lines: list[Line]


def verified(root: Root, rel: str, lines: list[Line]) -> bool:
    """Whether the file, read again through the safe path from the root,
    holds exactly the lines the engine reported. ripgrep opened files by name:
    a folder swapped for a link while it ran would have let it read outside
    the root, so nothing it read is shown unless the safe read agrees (a file
    changed meanwhile is dropped from the page too)."""
    if not lines:
        return True
    try:
        safe = read_lines(os.path.join(root.path, rel), rel, {ln.number for ln in lines}, root=root.path)
    except (ToolError, OSError):
        return False
    return all(safe.get(ln.number) == ln.text for ln in lines)


def _collect(engine: Engine, targets: list[Target], q: ContentQuery) -> ContentSearch:
    counts = Counts()
    pending: list[tuple[int, Future[set[str]]]] = []
    for target in targets:
        found, warnings = engine.count(target, q)
        seen: set[str] = set()
        files: list[FileCount] = []
        for rel, n in sorted(found, key=lambda item: path_key(item[0])):
            if n > 0 and rel not in seen:
                seen.add(rel)
                files.append(FileCount(target.index, rel, n))
        if files:
            # names an outside process reported: only regular files reached from the root without a link
            pending.append((target.index, _CHECKS.submit(regular_files, target.root.path, seen)))
        counts.files.extend(files)
        counts.warnings.extend(warnings)
    return ContentSearch(q, counts, pending=pending)


def count_matches(engine: Engine, targets: list[Target], q: ContentQuery) -> ContentSearch:
    """Pass 1 over every target; an invalid regex is retried as literal text.
    The counts are not settled yet (:meth:`ContentSearch.settle`, or
    :func:`page_blocks`, which settles them while its page pass runs)."""
    try:
        return _collect(engine, targets, q)
    except InvalidPattern as exc:
        if q.literal:
            raise invalid_arguments(f"field `pattern`: cannot be searched ({exc})", field="pattern") from exc
        search = _collect(engine, targets, replace(q, literal=True))
        search.invalid_regex = str(exc)
        return search


def page_blocks(engine: Engine, targets: list[Target], search: ContentSearch, offset: int, take: int) -> list[Block]:
    """Pass 2: the files holding matching lines ``offset .. offset+take`` and
    those lines. The page is picked while the counts' checks still run; once
    they end, a page picked from a file that failed is picked again."""
    pending = bool(search.pending)
    blocks = _page(engine, targets, search, offset, take)
    if pending and search.settle():
        blocks = _page(engine, targets, search, offset, take)
    return blocks


def _page(engine: Engine, targets: list[Target], search: ContentSearch, offset: int, take: int) -> list[Block]:
    chosen: list[tuple[FileCount, int, int]] = []  # (file, matches to skip, matches to show)
    pos = gathered = 0
    for fc in search.counts.files:
        if gathered >= take:
            break
        if pos + fc.count <= offset:
            pos += fc.count
            continue
        skip = max(0, offset - pos)
        n = min(fc.count - skip, take - gathered)
        chosen.append((fc, skip, n))
        gathered += n
        pos += fc.count
    if not chosen:
        return []
    roots = {t.index: t.root for t in targets}
    max_count = max(skip + n for _, skip, n in chosen)
    fetched: dict[tuple[int, str], list[Line]] = {}
    for index in dict.fromkeys(fc.root_index for fc, _, _ in chosen):
        rels = [fc.rel for fc, _, _ in chosen if fc.root_index == index]
        for rel, lines in engine.lines(roots[index], search.query, rels, max_count).items():
            if verified(roots[index], rel, lines):
                fetched[(index, rel)] = lines
    ctx = search.query.context
    blocks: list[Block] = []
    for fc, skip, n in chosen:
        lines = fetched.get((fc.root_index, fc.rel), [])
        # pass 1 is the authority on how many lines match: keep its first `count`
        matches = [ln for ln in lines if ln.is_match][: fc.count]
        shown = {ln.number for ln in matches[skip : skip + n]}
        if not shown:
            continue
        keep = {k for m in shown for k in range(m - ctx, m + ctx + 1)} if ctx else shown
        out = [replace(ln, is_match=ln.number in shown) for ln in lines if ln.number in keep]
        blocks.append(Block(fc.root_index, fc.rel, out))
    return blocks
