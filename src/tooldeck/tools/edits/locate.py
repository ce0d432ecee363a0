"""Where do lines sit in a file? The one fuzz ladder of both edit tools. No I/O.

One ladder of line keys, each stage looser than the one before; a tool walks
the stages it names, in order, and the first stage that finds the lines wins:

===============================  ======================================  ===========  ===========
stage                            key of a line                           apply_patch  apply_edits
===============================  ======================================  ===========  ===========
0 exact                          the line                                yes (1)      yes (2)
1 trailing whitespace ignored    ``rstrip()``                            yes          —
2 surrounding whitespace ignored ``strip()``                             yes          —
3 unicode punctuation normalised ``strip()``, typographic dashes,        yes          —
                                 quotes and spaces as ASCII
4 inner whitespace collapsed     runs of whitespace as one space,        —            yes
                                 stripped ("whitespace-flexible")
fuzzy                            stage 4's keys, windows scored by       —            yes
                                 :class:`difflib.SequenceMatcher`
===============================  ======================================  ===========  ===========

(1) its fast path, :mod:`exact`: one ``find`` on the file's bytes.
(2) on the text itself (:mod:`match`: a substring, then with doubled escapes
decoded), before the line stages.

apply_patch follows Codex's ``seek_sequence`` order (stages 0-3), which models
are trained against; within a stage the first position at or after the
cursor wins (chunks come in file order). apply_edits takes stage 4 and the
fuzzy window over the same :class:`LineIndex`, so the keys a file's lines get
are computed once for both of its stages. The fast paths are stage 0 done
without splitting the file into lines (:mod:`exact` on the bytes, fed by the
bulk parse of :mod:`plain`); whenever one cannot place a chunk, the caller
runs this ladder from stage 0, so no leniency is lost.

Each looser stage's line keys are computed once per file, when first needed
(one C-speed ``map`` of a ``str`` method for stages 1 and 2), so a 300-chunk
patch on a 20,000-line file costs a short C-speed walk from the cursor per
chunk (or an index look-up when the pattern starts with a line that is
everywhere) rather than a Python scan.

When nothing matches, :func:`nearest` finds the window that shares the most
lines with the pattern so the error can show the model what the file really
says.
"""

from __future__ import annotations

import bisect
import difflib
from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass

LEVELS = (
    "exact",
    "trailing whitespace ignored",
    "surrounding whitespace ignored",
    "unicode punctuation normalised",
    "inner whitespace collapsed",
)
EXACT, RSTRIP, STRIP, PUNCT, COLLAPSED = range(len(LEVELS))
PATCH_LEVELS = (EXACT, RSTRIP, STRIP, PUNCT)  # apply_patch's stages (Codex's order)
PATCH_LADDER = tuple(LEVELS[level] for level in PATCH_LEVELS)
FUZZIEST = PUNCT  # the loosest key apply_patch knows: what :func:`nearest` compares

_PUNCT = str.maketrans(
    {
        **dict.fromkeys("\u2010\u2011\u2012\u2013\u2014\u2015\u2212", "-"),
        **dict.fromkeys("\u2018\u2019\u201a\u201b", "'"),
        **dict.fromkeys("\u201c\u201d\u201e\u201f", '"'),
        **dict.fromkeys("\u00a0\u2002\u2003\u2004\u2005\u2006\u2007\u2008\u2009\u200a\u202f\u205f\u3000", " "),
    }
)


def _punct(line: str) -> str:
    return line.strip().translate(_PUNCT)


def collapse(line: str) -> str:
    return " ".join(line.split())


_KEY: tuple[Callable[[str], str], ...] = (str, str.rstrip, str.strip, _punct, collapse)


def normalise(line: str, level: int) -> str:
    """``line``'s key at stage ``level``."""
    return line if level == EXACT else _KEY[level](line)


@dataclass(frozen=True, slots=True)
class Found:
    start: int  # 0-based index of the first matched line
    level: int  # index into LEVELS


class LineIndex:
    """A file's lines with lazily built, per-level keys and first-line indexes."""

    def __init__(self, lines: list[str]) -> None:
        self.lines = lines
        self._keys: dict[int, list[str]] = {0: lines}
        self._where: dict[int, dict[str, list[int]]] = {}

    def keys(self, level: int) -> list[str]:
        keys = self._keys.get(level)
        if keys is None:
            keys = self._keys[level] = list(map(_KEY[level], self.lines))
        return keys

    def positions(self, level: int, key: str) -> list[int]:
        where = self._where.get(level)
        if where is None:
            where = {}
            for i, k in enumerate(self.keys(level)):
                where.setdefault(k, []).append(i)
            self._where[level] = where
        return where.get(key, [])

    def _scan(self, level: int, pat: list[str], start: int) -> int | None:
        """First index >= ``start`` where ``pat`` matches the level's keys.

        A C-speed ``list.index`` walk from the cursor finds the usual case (the
        next chunk a little further down) without building anything; if the
        first line keeps matching in the wrong places ("}" or ""), switch to
        the index of the pattern's rarest line."""
        keys = self.keys(level)
        m = len(pat)
        last = len(keys) - m  # last possible start
        i, misses = start, 0
        while i <= last and misses < 32:
            try:
                i = keys.index(pat[0], i, last + 1)
            except ValueError:
                return None
            if keys[i : i + m] == pat:
                return i
            i, misses = i + 1, misses + 1
        if i > last:
            return None
        probe = min(range(m), key=lambda j: len(self.positions(level, pat[j])))
        cands = self.positions(level, pat[probe])
        for pos in cands[bisect.bisect_left(cands, i + probe) :]:
            first = pos - probe
            if first > last:
                break
            if keys[first : first + m] == pat:
                return first
        return None

    def _at(self, level: int, pattern: list[str], start: int) -> bool:
        keys = self.keys(level)
        return all(keys[start + j] == p for j, p in enumerate(pattern))

    def find_all(self, pattern: list[str], level: int) -> list[int]:
        """Every start where ``pattern`` matches at stage ``level``, first to
        last, none overlapping the one before."""
        pat = [normalise(p, level) for p in pattern]
        hits: list[int] = []
        at = self._scan(level, pat, 0) if pat else None
        while at is not None:
            hits.append(at)
            at = self._scan(level, pat, at + len(pat))
        return hits

    def seek(
        self, pattern: list[str], start: int, *, end_of_file: bool = False, levels: tuple[int, ...] = PATCH_LEVELS
    ) -> Found | None:
        """First position ≥ ``start`` where ``pattern`` matches, trying each of
        ``levels`` in turn. With ``end_of_file`` the pattern is first tried as
        the file's last lines (at every level) before an ordinary search."""
        m, n = len(pattern), len(self.lines)
        if m == 0:
            return Found(min(start, n), 0)
        if m > n:
            return None
        if end_of_file:
            for level in levels:
                if self._at(level, [normalise(p, level) for p in pattern], n - m):
                    return Found(n - m, level)
        for level in levels:
            pat = pattern if level == 0 else [normalise(p, level) for p in pattern]
            found = self._scan(level, pat, start)
            if found is not None:
                return Found(found, level)
        return None


@dataclass(frozen=True, slots=True)
class Candidate:
    start: int
    equal: int  # pattern lines equal (ignoring whitespace and punctuation) at this position


def nearest(index: LineIndex, pattern: list[str], near: int = 0) -> Candidate | None:
    """The window of the file most like ``pattern``: most lines equal at the
    fuzziest level, ties broken by closeness to ``near``. Falls back to the
    most similar single line when no line is equal anywhere."""
    if not index.lines or not pattern:
        return None
    votes: Counter[int] = Counter()
    n = len(index.lines)
    for j, line in enumerate(pattern):
        key = normalise(line, FUZZIEST)
        if not key:
            continue  # blank lines are everywhere; they say nothing about the place
        for pos in index.positions(FUZZIEST, key):
            start = pos - j
            if 0 <= start < n:
                votes[start] += 1
    if votes:
        best = max(votes.items(), key=lambda kv: (kv[1], -abs(kv[0] - near)))
        return Candidate(best[0], best[1])
    probe = next((normalise(p, FUZZIEST) for p in pattern if p.strip()), "")
    if not probe:
        return None
    keys = index.keys(FUZZIEST)
    close = difflib.get_close_matches(probe, keys, n=1, cutoff=0.5)
    if not close:
        return None
    offset = next(j for j, p in enumerate(pattern) if p.strip())
    return Candidate(max(0, keys.index(close[0]) - offset), 0)


def close_lines(index: LineIndex, line: str, limit: int = 3) -> list[int]:
    """0-based indexes of the lines most like ``line`` (for a missing anchor)."""
    keys = index.keys(FUZZIEST)
    probe = normalise(line, FUZZIEST)
    matches = difflib.get_close_matches(probe, keys, n=limit, cutoff=0.6)
    out: list[int] = []
    for m in matches:
        for i, k in enumerate(keys):
            if k == m and i not in out:
                out.append(i)
                break
    return out
