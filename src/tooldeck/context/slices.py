"""The slices of a candidate file: the lines a task names, with context.

A build slices each of its top candidates (the fitter may show a file as
slices rather than whole): the definitions of the names the task mentions,
from the file's codemap, and the lines that mention its terms, each with a
few lines around it, up to ``MAX_SLICE_LINES`` in all.
"""

from __future__ import annotations

import functools
import re
from collections.abc import Iterator

from tooldeck.codemap.model import Codemap
from tooldeck.context.query import Query
from tooldeck.selection.package import slices_chunk
from tooldeck.state.selections import LineRange, merge_ranges

CONTEXT_LINES = 6
MAX_SLICE_LINES = 240


def slice_ranges(text: str, query: Query, cm: Codemap | None) -> tuple[LineRange, ...]:
    """Line ranges worth showing: the definitions of names the task mentions,
    and the lines that mention its terms, each with a little context."""
    n = text.count("\n") + 1  # lines (as text.split("\n") counts them)
    found: list[LineRange] = []
    names = {t.lower() for t in query.identifiers} | set(query.words)
    if cm is not None:
        for sym in cm.symbols:
            if sym.name.lower() in names and sym.end_line >= sym.line:
                end = min(sym.end_line, sym.line + 80)
                found.append(LineRange(sym.line, end, f"{sym.kind} {sym.name}"))
    pattern = term_pattern(query)
    if pattern is not None:
        for k, i in enumerate(_matching_lines(text.lower(), pattern), 1):
            found.append(LineRange(max(1, i - CONTEXT_LINES), min(n, i + CONTEXT_LINES)))
            if k % SETTLE_EVERY == 0 and _settled(found, i + 1 - CONTEXT_LINES):
                break  # the lines further down cannot change what is shown
    return _budgeted(merge_ranges(found))[0]


SETTLE_EVERY = 32  # matching lines between two checks of whether the rest can change the slices


def _budgeted(merged: tuple[LineRange, ...]) -> tuple[tuple[LineRange, ...], LineRange | None]:
    """The first of ``merged`` that fit in ``MAX_SLICE_LINES`` together, and
    the range that did not fit (None: all of them did)."""
    out: list[LineRange] = []
    total = 0
    for r in merged:
        size = r.end - r.start + 1
        if total + size > MAX_SLICE_LINES:
            return tuple(out), r
        out.append(r)
        total += size
    return tuple(out), None


def _settled(found: list[LineRange], next_start: int) -> bool:
    """Whether ranges that start at ``next_start`` or later (those of the
    lines not searched yet) would leave the slices as they are. They would
    when the range where the budget runs out starts no later: every range
    shown before it ends more than a line before it (else the two would be
    one), so a later range cannot join a shown one, nor sort before the
    range that did not fit; it can only make that one longer, which still
    does not fit. A file naming the task's words on hundreds of lines is
    then not searched to its end (the slices stop at 240 lines)."""
    cut = _budgeted(merge_ranges(found))[1]
    return cut is not None and cut.start <= next_start


@functools.lru_cache(maxsize=8)
def term_pattern(query: Query) -> re.Pattern[str] | None:
    """The task's terms as one pattern for *lowercased* text, ASCII word
    boundaries (as ripgrep counts them, see :func:`tooldeck.workspace.ripgrep.term_hits`).

    Searching ``text.lower()`` with plain lowercase words is about 3x faster
    than ``re.IGNORECASE`` over the text (Python folds case per character,
    with Unicode tables): 0.66 -> 0.21 s for 300 files x 5 tasks, the same
    lines found. Lowercasing never adds or removes a newline, so line
    numbers are those of the text. Built once per build (the 80 candidates
    share it). A lookahead for the terms' first characters lets the
    engine reject most positions before it tries each alternative (1.3-1.7x
    faster on stdlib modules, the same matches)."""
    terms = [t.lower() for t in query.terms if len(t) >= 3][:24]
    if not terms:
        return None
    first = "".join(sorted({re.escape(t[0]) for t in terms}))
    alts = "|".join(re.escape(t) for t in dict.fromkeys(terms))
    return re.compile(r"\b(?=[" + first + r"])(" + alts + r")\b", re.ASCII)


def _matching_lines(text: str, pattern: re.Pattern[str]) -> Iterator[int]:
    """1-based numbers of the lines holding a match of ``pattern``, in order
    (a generator: :func:`slice_ranges` may stop early).

    One search per matching line, not one per line (a 2,000-line file with
    ten matching lines is ten C calls, not 2,000): a match never spans a
    newline (terms are words), and a search resumed after a newline sees it,
    as ``\\b`` sees a line's start, as a word boundary; so the lines found are
    the same."""
    line, pos = 1, 0
    m = pattern.search(text)
    while m is not None:
        line += text.count("\n", pos, m.start())
        yield line
        pos = text.find("\n", m.end())
        if pos < 0:
            return
        m = pattern.search(text, pos + 1)  # the rest of this line cannot add a line: skip to the next


OUTLINE_RANGES = 16  # headings shown at most in a doc page's outline
_MD_HEADING = re.compile(r"^#{1,3}\s+\S")
_SETEXT = re.compile(r"^(?:=+|-+)\s*$")
_RST_ADORNMENT = re.compile(r"^([=\-~^\"'`#*+:.<>_])\1{2,}\s*$")


def outline_ranges(text: str, shown: str) -> tuple[LineRange, ...]:
    """A doc page's headings (Markdown ``#``/``##``/``###`` and setext, outside
    fences; reStructuredText titles of the page's first two adornment
    styles), the first ``OUTLINE_RANGES``: what a codemap is to code, for a
    file that has none. Empty for other files or a page without headings."""
    ext = shown.rsplit(".", 1)[-1].lower() if "." in shown.rsplit("/", 1)[-1] else ""
    lines = text.split("\n")
    if ext in ("md", "markdown"):
        found = _markdown_headings(lines)
    elif ext == "rst":
        found = _rst_titles(lines)
    else:
        return ()
    return merge_ranges([LineRange(i, i) for i in found[:OUTLINE_RANGES]])


def outline_view(shown: str, text: str) -> tuple[tuple[LineRange, ...], str] | None:
    """A doc page's outline as the slices chunk that shows it (None: not a
    doc page, or no headings)."""
    ranges = outline_ranges(text, shown)
    return (ranges, slices_chunk(shown, text, ranges)) if ranges else None


def _markdown_headings(lines: list[str]) -> list[int]:
    found: list[int] = []
    fence = False
    for i, line in enumerate(lines, 1):
        if line.lstrip().startswith(("```", "~~~")):
            fence = not fence
        elif fence:
            continue
        elif _MD_HEADING.match(line):
            found.append(i)
        elif i > 1 and _SETEXT.match(line) and lines[i - 2].strip() and not lines[i - 2].startswith(("#", "-", "*")):
            found.append(i - 1)
    return found


def _rst_titles(lines: list[str]) -> list[int]:
    found: list[int] = []
    styles: list[str] = []  # adornment characters in the order the page first uses them: its levels
    for i in range(1, len(lines)):
        m = _RST_ADORNMENT.match(lines[i])
        title = lines[i - 1]
        if (
            m is None
            or not title.strip()
            or _RST_ADORNMENT.match(title)
            or len(lines[i].rstrip()) < len(title.rstrip())
        ):
            continue
        if m.group(1) not in styles:
            styles.append(m.group(1))
        if styles.index(m.group(1)) < 2:
            found.append(i)  # the title's 1-based number: the line above the underline
    return found
