"""Path search: rank the workspace's file and folder paths against a pattern.

The candidates come from :func:`tooldeck.workspace.walk`, so ignored files
never show up. A pattern is read one of three ways:

* a glob (``*.py``, ``src/**/test_*.py``): gitignore-style wildcard matching,
  results in tree order;
* a regex (it uses regex syntax beyond ``.``): ``re.search`` on the relative
  path, results in tree order;
* text (the usual case): tiers from exact file name down to substring, word
  pieces and finally a fuzzy subsequence (``tlbx`` finds ``toolbox.py``),
  best first, shorter paths first within a tier.

Matching is smart-case: case-insensitive unless the pattern has a capital.
"""

from __future__ import annotations

import itertools
import re
import warnings
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from typing import Literal

from pathspec import GitIgnoreSpec

from tooldeck.tools.search.scope import Target, exclude_spec, extension_ok, path_key
from tooldeck.workspace.ignore import IgnoreRules
from tooldeck.workspace.roots import Root
from tooldeck.workspace.walk import walk

PathKind = Literal["glob", "regex", "text"]
STRONG = 50  # scores at or above: the pattern occurs in the path (no fuzzy guess)
_REGEX_CHARS = set("\\()|+^${}[]")
_REGEX_TELLS = ("\\", "(", ")", "|", "+", "^", "$", "{", ".*", ".+", ".?")
_FILE_NAME = re.compile(r"[\w.-]*\w\.[A-Za-z][A-Za-z0-9]{0,7}")
_SEPARATORS = "/_-. "


def looks_like_glob(pattern: str) -> bool:
    return ("*" in pattern or "?" in pattern) and not any(t in pattern for t in _REGEX_TELLS)


def looks_like_path(pattern: str) -> bool:
    """``src/app``, ``tools/search/``, ``package.json``: no regex syntax, no spaces."""
    if any(c.isspace() for c in pattern) or any(c in _REGEX_CHARS or c in "*?" for c in pattern):
        return False
    return "/" in pattern or _FILE_NAME.fullmatch(pattern) is not None


def path_kind(pattern: str, regex: bool) -> PathKind:
    if not regex:
        return "text"
    if looks_like_glob(pattern):
        return "glob"
    if any(c in _REGEX_CHARS for c in pattern) or re.search(r"\.[*+?]", pattern):
        return "regex"
    return "text"


@dataclass(frozen=True, slots=True)
class PathHit:
    root_index: int
    rel: str
    is_dir: bool
    score: int


def _fuzzy(q: str, s: str, base_start: int) -> int | None:
    """Score of ``q`` as a subsequence of ``s`` (None: absent or too scattered)."""
    best: int | None = None
    starts = [i for i, ch in enumerate(s) if ch == q[0]][-8:]  # later starts favour the file name
    for start in starts:
        positions = [start]
        for ch in q[1:]:
            nxt = s.find(ch, positions[-1] + 1)
            if nxt < 0:
                break
            positions.append(nxt)
        if len(positions) < len(q):
            continue
        gaps = sum(1 for a, b in itertools.pairwise(positions) if b != a + 1)
        if gaps > max(2, len(q) // 2):
            continue
        bounds = sum(1 for p in positions if p == 0 or s[p - 1] in _SEPARATORS)
        score = 40 - 4 * gaps + 2 * bounds + (4 if start >= base_start else 0)
        best = score if best is None else max(best, score)
    return None if best is None else max(1, min(STRONG - 1, best))


class TextScorer:
    """Scores paths against a text pattern (tiers documented in the module)."""

    def __init__(self, q: str) -> None:
        self.q = q
        pieces = [p for p in re.split(r"[/\s_.-]+", q) if p]
        self.pieces = pieces if len(pieces) > 1 else []
        self.compact = "".join(q.split())

    def __call__(self, rel: str) -> int | None:
        q = self.q
        base_start = rel.rfind("/") + 1
        if q in rel:
            base = rel[base_start:]
            if base == q:
                return 100
            if (base.rsplit(".", 1)[0] if "." in base[1:] else base) == q:
                return 95
            if base.startswith(q):
                return 85
            if q in base:
                return 75
            return 70 if rel.endswith(q) else 60
        if self.pieces and all(p in rel for p in self.pieces):
            return STRONG
        if not self.compact or not _is_subsequence(self.compact, rel):
            return None
        return _fuzzy(self.compact, rel, base_start)


def _is_subsequence(q: str, s: str) -> bool:
    """Cheap rejection before scoring (most paths do not contain the letters in order)."""
    it = iter(s)
    return all(ch in it for ch in q)


def _matcher(pattern: str, kind: PathKind) -> tuple[Callable[[str], int | None], bool]:
    """A scorer for relative paths and whether it ranks (else: tree order)."""
    fold = pattern == pattern.lower()
    if kind == "glob":
        spec = GitIgnoreSpec.from_lines([pattern.lower() if fold else pattern])
        return (lambda rel: 50 if spec.match_file(rel.lower() if fold else rel) else None), False
    if kind == "regex":
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            rx = re.compile(pattern, re.IGNORECASE if fold else 0)  # the caller checked it compiles
        return (lambda rel: 50 if rx.search(rel) else None), False
    q = pattern.lower() if fold else pattern
    scorer = TextScorer(q)
    return (lambda rel: scorer(rel.lower() if fold else rel)), True


def _candidates(
    target: Target, rules: IgnoreRules, extensions: tuple[str, ...], exclude: tuple[str, ...]
) -> Iterator[tuple[str, bool]]:
    spec = exclude_spec(exclude)
    starts = target.dirs if target.dirs else (("",) if target.whole_root else ())
    for start in starts:
        for entry in walk(rules, start):
            if entry.is_dir and extensions:
                continue
            if not entry.is_dir and not extension_ok(entry.rel.rsplit("/", 1)[-1], extensions):
                continue
            if spec is not None and spec.match_file(entry.rel + "/" if entry.is_dir else entry.rel):
                continue
            yield entry.rel, entry.is_dir
    for rel in target.files:
        yield rel, False


def regex_error(pattern: str) -> str | None:
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            re.compile(pattern)
    except (re.error, OverflowError, RecursionError) as exc:
        return str(exc)
    return None


def rank_paths(
    targets: list[Target],
    rules_for: Callable[[Root], IgnoreRules],
    pattern: str,
    kind: PathKind,
    *,
    extensions: tuple[str, ...] = (),
    exclude: tuple[str, ...] = (),
    min_score: int = 1,
) -> list[PathHit]:
    """Every matching path, best first (or in tree order for globs and regexes)."""
    score_of, ranks = _matcher(pattern, kind)
    hits: list[PathHit] = []
    for target in targets:
        rules = rules_for(target.root)
        for rel, is_dir in _candidates(target, rules, extensions, exclude):
            score = score_of(rel)
            if score is not None and score >= min_score:
                hits.append(PathHit(target.index, rel, is_dir, score))
    if ranks:
        hits.sort(key=lambda h: (-h.score, h.rel.count("/"), len(h.rel), h.root_index, path_key(h.rel)))
    else:
        hits.sort(key=lambda h: (h.root_index, path_key(h.rel)))
    return hits
