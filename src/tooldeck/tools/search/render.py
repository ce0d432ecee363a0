"""Text a model reads cheaply: one header, results grouped by file, one closing
line saying what was left out and the cursor that continues.

::

    content matches for /foo/ (regex) — 12 matching lines in 3 files; showing 1-5
    src/app.py
      12: def foo(x):
      40:     return foo(1)
    src/util.py
      7- context line
      8: foo = 1
    [7 more matching lines in 2 files not shown; continue with {"cursor": "fs:..."}]

``N:`` marks a matching line, ``N-`` a context line, ``--`` a gap between
context groups. A line longer than :data:`MAX_LINE_CHARS` (minified code) is
shown as a window around its first match, with its full length.
A page also stops early when its text would exceed the character budget
(derived from the token budget), so the Toolbox never has to cut it blindly.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from dataclasses import dataclass

from tooldeck.tools.search.content import Block
from tooldeck.tools.search.model import ContentQuery, Counts, Line
from tooldeck.tools.search.paths import PathHit

MAX_LINE_CHARS = 240
_BEFORE = 80  # characters kept before the match in a cut line


def n(x: int, word: str) -> str:
    return f"{x:,} {word}" + ("" if x == 1 else "s")


def describe_pattern(pattern: str, literal: bool, whole_word: bool = False) -> str:
    shown = f"/{pattern}/ (regex)" if not literal else f"{json.dumps(pattern, ensure_ascii=False)} (literal)"
    return shown + (" whole-word" if whole_word else "")


def continue_note(what: str, cursor: str) -> str:
    return f"[{what} not shown; continue with {json.dumps({'cursor': cursor})}]"


def show_line(line: Line) -> str:
    text = line.text.removesuffix("\r")
    if len(text) <= MAX_LINE_CHARS:
        return text.rstrip()
    start, end = line.span if line.span is not None else (0, 0)
    lo = max(0, start - _BEFORE)
    hi = min(len(text), max(end, lo + MAX_LINE_CHARS))
    if hi - lo > MAX_LINE_CHARS + 100:  # a very long match: its head is enough
        hi = lo + MAX_LINE_CHARS
    return ("…" if lo else "") + text[lo:hi] + ("…" if hi < len(text) else "") + f" [line of {len(text):,} chars cut]"


@dataclass(slots=True)
class Page:
    lines: list[str]
    shown: int  # matching lines (or entries) shown


def content_page(
    blocks: list[Block], display: Callable[[int, str], str], budget_chars: int, *, gaps: bool = False
) -> Page:
    """Grouped lines of ``blocks``, stopping before the budget is exceeded;
    ``gaps`` marks breaks between context groups with ``--``."""
    out: list[str] = []
    used = shown = 0
    for block in blocks:
        header = display(block.root_index, block.rel)
        started = False
        prev: int | None = None
        for line in block.lines:
            body = f"  {line.number}{':' if line.is_match else '-'} {show_line(line)}"
            cost = len(body) + (0 if started else len(header) + 1) + 1
            if line.is_match and shown and used + cost > budget_chars:
                return Page(out, shown)
            if not started:
                out.append(header)
                started = True
            elif gaps and prev is not None and line.number > prev + 1:
                out.append("  --")
            out.append(body)
            used += cost
            prev = line.number
            shown += line.is_match
    return Page(out, shown)


def content_header(q: ContentQuery, counts: Counts, engine: str) -> str:
    what = f"content matches for {describe_pattern(q.pattern, q.literal, q.whole_word)}"
    if engine != "ripgrep":
        what += f" [engine: {engine}]"
    if counts.total == 0:
        return f"{what} — none"
    return f"{what} — {n(counts.total, 'matching line')} in {n(len(counts.files), 'file')}"


def showing(offset: int, shown: int, total: int, unit: str = "") -> str:
    """``; showing 51-100`` when a page is not the whole result, else ``""``."""
    if not offset and shown >= total:
        return ""
    if not shown:
        return f"; nothing after {offset:,}{unit}"
    return f"; showing {unit.strip()}{' ' if unit else ''}{offset + 1:,}-{offset + shown:,}"


def remaining(counts: Counts, end: int) -> tuple[int, int]:
    """(matching lines, files) after the first ``end`` matching lines."""
    pos = files = 0
    for fc in counts.files:
        pos += fc.count
        if pos > end:
            files += 1
    return max(0, counts.total - end), files


def count_lines(counts: Counts, offset: int, limit: int, display: Callable[[int, str], str]) -> list[str]:
    """Per-file counts, most matches first."""
    ranked = sorted(counts.files, key=lambda fc: -fc.count)
    width = len(f"{ranked[0].count:,}") if ranked else 1
    return [f"  {fc.count:>{width},}  {display(fc.root_index, fc.rel)}" for fc in ranked[offset : offset + limit]]


def path_lines(hits: list[PathHit], display: Callable[[int, str], str]) -> list[str]:
    return [display(h.root_index, h.rel) + ("/" if h.is_dir else "") for h in hits]
