"""Where does a search block sit in a file? apply_edits' stages of the one
fuzz ladder (:mod:`locate`). Pure.

1. the exact text (it must occur once, unless ``all``);
2. the same after decoding escapes a model doubled (``\\n`` typed as two
   characters because the JSON was escaped twice);
3. whole lines equal once indentation and runs of spaces are ignored (the
   ladder's stage "inner whitespace collapsed", :meth:`LineIndex.find_all`);
4. a fuzzy line window at least ``threshold`` similar over the same keys, and
   clearly better than any other window (two close candidates are an
   ``ambiguous`` error naming both, never a guess).

Levels 3 and 4 replace whole lines and re-indent the replacement to the
matched block (:mod:`reindent`). Several matches where one is required are
an ``ambiguous`` error listing their line numbers.
"""

from __future__ import annotations

import bisect
import difflib
import re
from dataclasses import dataclass

from tooldeck.core.errors import ErrorCode, ToolError
from tooldeck.tools.edits.locate import COLLAPSED, LineIndex, collapse, nearest
from tooldeck.tools.edits.reindent import reindent

LADDER = ("exact", "escape-decoded", "whitespace-flexible", "fuzzy")
THRESHOLD = 0.85
NEAR_TIE = 0.05
FUZZY_MAX_LINES = 50_000

_ESCAPES = {"n": "\n", "t": "\t", "r": "\r", '"': '"', "'": "'", "\\": "\\"}
_ESCAPE_RE = re.compile(r"\\([ntr\"'\\])")


@dataclass(frozen=True, slots=True)
class Span:
    start: int  # character offsets in the text
    end: int
    text: str  # what replaces text[start:end]
    first_line: int  # 1-based
    last_line: int
    level: int  # index into LADDER
    similarity: float = 1.0


def decode_escapes(text: str) -> str:
    return _ESCAPE_RE.sub(lambda m: _ESCAPES[m.group(1)], text)


class Lines:
    """A text's lines, where each starts (for offsets ↔ line numbers), and
    their :class:`LineIndex` (the ladder's keys, shared by the line stages).

    Built on first use: the exact levels only need the line numbers of their
    matches, which :func:`line_numbers` counts without splitting a (possibly
    huge) file into a list of lines."""

    def __init__(self, text: str) -> None:
        self.text = text
        self._lines: list[str] | None = None
        self._starts: list[int] | None = None
        self._index: LineIndex | None = None

    @property
    def lines(self) -> list[str]:
        if self._lines is None:
            self._lines = self.text.split("\n")
        return self._lines

    @property
    def index(self) -> LineIndex:
        if self._index is None:
            self._index = LineIndex(self.lines)
        return self._index

    @property
    def starts(self) -> list[int]:
        if self._starts is None:
            starts: list[int] = []
            pos = 0
            for line in self.lines:
                starts.append(pos)
                pos += len(line) + 1
            self._starts = starts
        return self._starts

    def line_of(self, offset: int) -> int:
        return bisect.bisect_right(self.starts, offset)

    def end_of(self, index: int) -> int:
        return self.starts[index] + len(self.lines[index])


def line_numbers(text: str, offsets: list[int]) -> list[int]:
    """1-based line numbers of ascending ``offsets``, counted in one pass."""
    out: list[int] = []
    line, prev = 1, 0
    for off in offsets:
        line += text.count("\n", prev, off)
        prev = off
        out.append(line)
    return out


def _trim_blank(lines: list[str]) -> list[str]:
    start, end = 0, len(lines)
    while start < end and not lines[start].strip():
        start += 1
    while end > start and not lines[end - 1].strip():
        end -= 1
    return lines[start:end]


def find(
    text: str, search: str, replace: str, *, all: bool = False, name: str = "the file", threshold: float = THRESHOLD
) -> list[Span]:
    """Spans to replace for one edit, or ToolError (``ambiguous`` / ``no_match``).
    ``threshold``: the similarity a fuzzy match needs (setting ``editing.fuzzy_threshold``)."""
    if not search:
        raise ToolError(ErrorCode.INVALID_ARGUMENTS, "`search` is empty; give the exact text to replace")
    lines = Lines(text)
    spans = _literal(lines, search, replace, all, name, level=0)
    if spans is not None:
        return spans
    decoded = decode_escapes(search)
    if decoded != search:
        spans = _literal(lines, decoded, decode_escapes(replace), all, name, level=1)
        if spans is not None:
            return spans
    s_lines = _trim_blank(search.split("\n"))
    if not s_lines:
        raise ToolError(ErrorCode.NO_MATCH, f"`search` is only whitespace and does not occur in {name} as given")
    r_lines = replace.strip("\n").split("\n") if replace.strip() else []
    spans = _flexible(lines, s_lines, r_lines, all, name)
    if spans is not None:
        return spans
    return _fuzzy(lines, s_lines, r_lines, all, name, threshold)


def _literal(lines: Lines, search: str, replace: str, all: bool, name: str, level: int) -> list[Span] | None:
    text = lines.text
    starts: list[int] = []
    pos = text.find(search)
    while pos >= 0:
        starts.append(pos)
        pos = text.find(search, pos + len(search))
    if not starts:
        return None
    firsts = line_numbers(text, starts)
    if len(starts) > 1 and not all:
        raise _ambiguous(name, firsts)
    extra = search.count("\n", 0, max(len(search) - 1, 0))
    return [
        Span(s, s + len(search), replace, first, first + extra, level) for s, first in zip(starts, firsts, strict=True)
    ]


def _line_span(lines: Lines, first: int, count: int, s_lines: list[str], r_lines: list[str], level: int) -> Span:
    matched = lines.lines[first : first + count]
    start, end = lines.starts[first], lines.end_of(first + count - 1)
    if r_lines:
        text = "\n".join(reindent(r_lines, s_lines, matched))
    else:  # deleting whole lines: take one line break with them
        text = ""
        if end < len(lines.text):
            end += 1
        elif start > 0:
            start -= 1
    return Span(start, end, text, first + 1, first + count, level)


def _flexible(lines: Lines, s_lines: list[str], r_lines: list[str], all: bool, name: str) -> list[Span] | None:
    m = len(s_lines)
    hits = lines.index.find_all(s_lines, COLLAPSED)
    if not hits:
        return None
    if len(hits) > 1 and not all:
        raise _ambiguous(name, [h + 1 for h in hits])
    return [_line_span(lines, h, m, s_lines, r_lines, 2) for h in hits]


def _fuzzy(
    lines: Lines, s_lines: list[str], r_lines: list[str], all: bool, name: str, threshold: float = THRESHOLD
) -> list[Span]:
    m, n = len(s_lines), len(lines.lines)
    scored: list[tuple[float, int]] = []
    if m <= n <= FUZZY_MAX_LINES and not all:
        keys = lines.index.keys(COLLAPSED)
        target = "\n".join(collapse(x) for x in s_lines)
        matcher = difflib.SequenceMatcher(None, autojunk=False)
        matcher.set_seq2(target)
        for p in range(n - m + 1):
            matcher.set_seq1("\n".join(keys[p : p + m]))
            if matcher.real_quick_ratio() < threshold or matcher.quick_ratio() < threshold:
                continue
            ratio = matcher.ratio()
            if ratio >= threshold:
                scored.append((ratio, p))
    if scored:
        best_ratio, best = max(scored)
        rivals = sorted(
            {p for r, p in scored if abs(p - best) >= m and r >= best_ratio - NEAR_TIE} | {best},
        )
        if len(rivals) > 1:
            raise _ambiguous(name, [p + 1 for p in rivals], fuzzy=True)
        span = _line_span(lines, best, m, s_lines, r_lines, 3)
        return [
            Span(span.start, span.end, span.text, span.first_line, span.last_line, span.level, round(best_ratio, 3))
        ]
    raise _no_match(lines, s_lines, name, all)


def _ambiguous(name: str, line_numbers: list[int], *, fuzzy: bool = False) -> ToolError:
    shown = ", ".join(map(str, line_numbers[:20])) + (" ..." if len(line_numbers) > 20 else "")
    what = "several places are equally similar to the search text" if fuzzy else "the search text occurs"
    count = "" if fuzzy else f" {len(line_numbers)} times"
    return ToolError(
        ErrorCode.AMBIGUOUS,
        f"{what}{count} in {name} (lines {shown}); include more surrounding lines to make it unique"
        + ("" if fuzzy else ", or set all=true to replace every occurrence")
        + ". Nothing was changed.",
        {"lines": line_numbers},
    )


def _no_match(lines: Lines, s_lines: list[str], name: str, all: bool) -> ToolError:
    tried = ", ".join(LADDER[:3] if all else LADDER)
    msg = f"the search text was not found in {name} (tried {tried}"
    msg += "; fuzzy matching is not used with all=true)" if all else f" at {THRESHOLD:.0%} similarity)"
    cand = nearest(lines.index, s_lines)
    details: dict[str, object] = {"tried": list(LADDER)}
    if cand is not None:
        shown = lines.lines[cand.start : cand.start + min(len(s_lines), 12)]
        body = "\n".join(f"  {cand.start + i + 1:>5}| {x}" for i, x in enumerate(shown))
        msg += f". The closest lines are {cand.start + 1}-{cand.start + len(shown)}:\n{body}\n"
        details["candidates"] = [cand.start + 1]
    else:
        msg += ". "
    msg += "Nothing was changed; read the file and copy the text to replace exactly."
    return ToolError(ErrorCode.NO_MATCH, msg, details)
