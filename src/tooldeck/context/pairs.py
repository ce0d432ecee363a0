"""Test ↔ source pairing: a structure signal the reference graph misses.

A change to ``src/click/formatting.py`` usually comes with a change to
``tests/test_formatting.py``; a change to ``fzf/src/terminal.go`` with one to
``terminal_test.go`` beside it. The graph rarely links them strongly (a test
uses many names, each defined once, so its rank is spread thin), and the
task's words seldom name the test. So once the ranking is known, each of the
best-ranked files lends a share of its score to its counterpart: the tests
of a source file, the source file of a test.

Counterparts share a *stem*: the file name without its extension and its
test affixes (``test_x``, ``x_test``, ``x_tests``, ``x.test``, ``x.spec``,
``XTest``, ``XTests``), in the same language. A stem with many non-test
files (``__init__``, ``utils``, ``mod``) pairs nothing: it says nothing about
which one. With several counterparts, those in the same directory (Go, Rust)
win; else those that share the most directory names with the file.
"""

from __future__ import annotations

import functools
import os
import re
from collections.abc import Iterable
from dataclasses import dataclass
from operator import itemgetter

PAIR_TOP = 5  # files whose counterparts are lifted
PAIR_WEIGHT = 0.5  # a counterpart's score: at least this share of its partner's
MAX_SAME_STEM = 3  # a stem held by more non-test files than this pairs nothing

_TEST_DIRS = frozenset({"test", "tests", "__tests__", "spec", "specs", "testing"})
_AFFIXES = (
    re.compile(r"^test_(?P<s>.+)$"),
    re.compile(r"^(?P<s>.+?)_tests?$"),
    re.compile(r"^(?P<s>.+?)[.](?:test|spec)$"),
    re.compile(r"^(?P<s>[A-Z].*?)Tests?$"),
)
_GENERIC = frozenset({"__init__", "index", "main", "mod", "lib", "conftest", "setup", "helpers", "utils", "util"})


@dataclass(frozen=True, slots=True)
class Side:
    """What pairing needs to know of a file path."""

    stem: str  # lowercase, test affixes removed
    ext: str
    is_test: bool
    dirs: tuple[str, ...]


@functools.lru_cache(maxsize=1 << 18)
def side_of(rel: str) -> Side | None:
    """The pairing key of a path, or None for a file that pairs nothing
    (no extension, a generic stem)."""
    parts = rel.replace("\\", "/").split("/")
    name = parts[-1]
    if "." not in name.lstrip("."):
        return None
    base, ext = name.rsplit(".", 1)
    is_test = any(p.lower() in _TEST_DIRS for p in parts[:-1])
    stem = base
    for pattern in _AFFIXES:
        m = pattern.match(base)
        if m:
            stem, is_test = m.group("s"), True
            break
    stem = stem.lower()
    if not stem or stem in _GENERIC:
        return None
    return Side(stem, ext.lower(), is_test, tuple(p.lower() for p in parts[:-1]))


class Pairs:
    """Counterparts of every file of a walk, by stem and language."""

    def __init__(self, rels: Iterable[tuple[str, str]], stems: set[str] | None = None) -> None:
        """``rels``: (key, path relative to its root) of every file;
        ``stems``: index only these (a build asks for the counterparts of a
        few files: a 13k-file tree is then one cached lookup per file)."""
        self._side: dict[str, Side] = {}
        self._by: dict[tuple[str, str, bool], list[str]] = {}
        for key, rel in rels:
            side = side_of(rel)
            if side is None or (stems is not None and side.stem not in stems):
                continue
            self._side[key] = side
            self._by.setdefault((side.stem, side.ext, side.is_test), []).append(key)

    def counterparts(self, key: str) -> list[str]:
        """The tests of a source file, or the source file of a test (the
        nearest by directory when there are several); none for a stem too
        common among source files to say which."""
        side = self._side.get(key)
        if side is None:
            return []
        if len(self._by.get((side.stem, side.ext, False), ())) > MAX_SAME_STEM:
            return []
        others = self._by.get((side.stem, side.ext, not side.is_test), [])
        if len(others) <= 1:
            return list(others)
        same_dir = [o for o in others if self._side[o].dirs == side.dirs]
        if same_dir:
            return same_dir
        shared = {o: len(set(self._side[o].dirs) & set(side.dirs)) for o in others}
        best = max(shared.values())
        return [o for o in others if shared[o] == best]


def lift_pairs(
    ranked: list[tuple[str, float]], pairs: Pairs, *, top: int | None = None, weight: float | None = None
) -> tuple[list[tuple[str, float]], dict[str, str]]:
    """``ranked`` (key, score), best first, with the counterparts of its
    ``top`` best files lifted to ``weight`` × their partner's score (never
    lowered); and for each lifted file, the partner that lifted it."""
    top = PAIR_TOP if top is None else top
    weight = PAIR_WEIGHT if weight is None else weight
    scores = dict(ranked)
    lifted: dict[str, str] = {}
    for key, score in ranked[:top]:
        for other in pairs.counterparts(key):
            if other == key:
                continue
            share = weight * score
            if share > scores.get(other, 0.0):
                scores[other] = share
                lifted[other] = key
    out = best_first(scores)
    return out, lifted


def best_first(scores: dict[str, float]) -> list[tuple[str, float]]:
    """``scores`` by score, highest first, ties by key: the order of
    ``sorted(items, key=lambda kv: (-kv[1], kv[0]))`` from two sorts in C (by
    key, then a stable sort by score; ``reverse`` keeps ties in key order),
    a few ms less on the 13k scores of a large tree."""
    out = sorted(scores.items())
    out.sort(key=itemgetter(1), reverse=True)
    return out


def lift_test_pairs(
    ranked: list[tuple[str, float]], rels: list[tuple[str, str]]
) -> tuple[list[tuple[str, float]], dict[str, str]]:
    """:func:`lift_pairs` for the ``PAIR_TOP`` best of ``ranked`` among the
    files ``rels`` (key, rel), indexing only the stems those few files have."""
    top = {k for k, _ in ranked[:PAIR_TOP]}
    stems = {side.stem for k, rel in rels if k in top and (side := side_of(rel)) is not None}
    if not stems:
        return ranked, {}
    return lift_pairs(ranked, Pairs(rels, stems))


def pair_reason(partner_shown: str) -> str:
    return f"paired with {os.path.basename(partner_shown)} (test ↔ source)"
