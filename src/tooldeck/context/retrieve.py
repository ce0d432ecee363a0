"""Retrieval: score every workspace file against a task, lexically.

Three signals, each with its reason kept for the explanation:

* **content**: BM25 over term frequencies that one ripgrep pass counts
  (whole-word, case-insensitive); code identifiers named in the task weigh
  more than prose words;
* **path**: query words found among a path's words (``http_adapter.py`` has
  ``http`` and ``adapter``), rarer words weighing more; a path named in the
  task outright scores highest;
* **symbols**: files that define an identifier the task names (from the
  codemap symbol index), and files defining symbols whose names contain a
  task word.

``lexical_only`` drops the symbol signal: it is the baseline the evaluation
compares against (content + paths, what a search tool alone gives).
"""

from __future__ import annotations

import functools
import math
import os
from collections import Counter
from collections.abc import Collection, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Protocol

from tooldeck.codemap.index import SymbolIndex
from tooldeck.context.query import Query, subwords
from tooldeck.workspace.ripgrep import TermSearch
from tooldeck.workspace.roots import Workspace
from tooldeck.workspace.walk import walk

K1, B = 1.2, 0.75
MAX_TERMS = 24
IDENT_WEIGHT = 2.0
PATH_NAMED = 8.0
DEFINES_NAMED = 6.0


@dataclass(slots=True)
class FileInfo:
    abs: str
    root_id: str
    rel: str
    shown: str
    size: int


@dataclass(slots=True)
class Scored:
    info: FileInfo
    content: float = 0.0
    path: float = 0.0
    symbol: float = 0.0
    term_scores: Counter[str] = field(default_factory=Counter)  # BM25 contribution per term
    reasons: list[str] = field(default_factory=list)

    @property
    def lexical(self) -> float:
        return self.content + self.path + self.symbol


def universe(ws: Workspace) -> list[FileInfo]:
    """Every admitted file of every root (ignore rules applied)."""
    out: list[FileInfo] = []
    for root in ws.roots:
        for e in walk(ws.rules(root), include_dirs=False, sizes=True):
            abs_path = os.path.join(root.path, e.rel)
            out.append(FileInfo(abs_path, root.id, e.rel, ws.display(abs_path), e.size))
    return out


def _path_words(rel: str) -> frozenset[str]:
    stem = rel.rsplit(".", 1)[0] if "." in os.path.basename(rel) else rel
    return frozenset(subwords(stem)) | {p.lower() for p in stem.split("/") if p}


# the paths whose words a build looks at (those holding a task's word); :func:`path_word_index` reads
# every path without the cache (a frozenset per path of a 13k-file tree held ~11 MB)
path_words = functools.lru_cache(maxsize=1 << 13)(_path_words)
path_words.__doc__ = "The words of a path (cached: the same paths come back build after build)."


def _bm25(tf: int, idf: float, size: int, avg: float) -> float:
    norm = K1 * (1 - B + B * (size / avg if avg else 1.0))
    return idf * tf * (K1 + 1) / (tf + norm)


class Scores(dict[str, Scored]):
    """abs path → :class:`Scored`, created on first signal."""

    def of(self, f: FileInfo) -> Scored:
        s = self.get(f.abs)
        if s is None:
            s = self[f.abs] = Scored(f)
        return s


def retrieve(
    ws: Workspace,
    query: Query,
    index: SymbolIndex | None,
    *,
    symbol_words: Mapping[str, Collection[str]] | None = None,
    lexical_only: bool = False,
    files: list[FileInfo] | None = None,
    by_word: dict[str, list[str]] | None = None,
    started: ContentSearch | None = None,
) -> dict[str, Scored]:
    """abs path → scores for every file with any signal: content (BM25 over
    ripgrep term counts), path words, then (unless ``lexical_only``) the
    symbols the task names. ``symbol_words`` (word → files defining a symbol
    with that word in its name) comes from
    :func:`tooldeck.context.rank.symbol_words`, cached with the graph.
    ``started``: the content search :func:`start_content` began earlier."""
    files = files if files is not None else universe(ws)
    scored = Scores()
    score_content(ws, query, files, scored, started)
    score_paths(query, files, scored, by_word)
    if not lexical_only and index is not None:
        score_symbols(query, files, index, symbol_words or {}, scored)
    return scored


class TermCounts(Protocol):
    """A content search's per-file term counts, maybe still being counted."""

    def result(self) -> dict[str, Counter[str]]: ...


ContentSearch = Sequence[tuple[str, TermCounts]]  # (root id, its running search or the index's counts)


def start_content(ws: Workspace, query: Query) -> ContentSearch:
    """Start the ripgrep searches :func:`score_content` needs, one per root:
    rg reads the tree in its own processes while the caller walks it."""
    terms = content_terms(query)
    return [(root.id, TermSearch(ws.rules(root), terms)) for root in ws.roots]


def content_terms(query: Query) -> list[str]:
    """The words the content signal counts."""
    return list(query.terms[:MAX_TERMS])


def score_content(
    ws: Workspace, query: Query, files: list[FileInfo], scored: Scores, started: ContentSearch | None = None
) -> None:
    """BM25 of the query terms, counted by one ripgrep pass per root
    (``started``: the searches :func:`start_content` began, else begun now)."""
    n = max(1, len(files))
    by_root: dict[str, dict[str, FileInfo]] = {}
    for f in files:
        by_root.setdefault(f.root_id, {})[f.rel] = f
    idents = set(query.identifiers)
    hits: list[tuple[FileInfo, Counter[str]]] = []
    for root_id, search in started if started is not None else start_content(ws, query):
        for rel, counts in search.result().items():
            f = by_root.get(root_id, {}).get(rel)
            if f is not None:
                hits.append((f, counts))
    df: Counter[str] = Counter()
    for _f, counts in hits:
        df.update(counts.keys())
    avg = sum(f.size for f in files) / n or 1.0
    # per term and per file once (thousands of files x a dozen terms); the same expressions as
    # _bm25, so every contribution is the same float
    idf = {term: math.log(1 + (n - k + 0.5) / (k + 0.5)) for term, k in df.items()}
    weight = {term: IDENT_WEIGHT if term in idents else 1.0 for term in df}
    k1 = K1 + 1
    for f, counts in hits:
        s = scored.of(f)
        size = max(f.size, 1)
        norm = K1 * (1 - B + B * (size / avg if avg else 1.0))
        term_scores = s.term_scores
        for term, tf in counts.items():
            contribution = weight[term] * (idf[term] * tf * k1 / (tf + norm))
            s.content += contribution
            term_scores[term] += contribution


def path_word_index(files: list[FileInfo]) -> dict[str, list[str]]:
    """path word → abs paths of the files whose path has it (kept by the
    builder while the walk finds the same files: a build then looks up the
    task's few words instead of intersecting every path's words)."""
    out: dict[str, list[str]] = {}
    for f in files:
        for w in _path_words(f.rel):
            out.setdefault(w, []).append(f.abs)
    return out


def score_paths(
    query: Query, files: list[FileInfo], scored: Scores, by_word: dict[str, list[str]] | None = None
) -> None:
    """Words of the task found in a file's path (rarer words weigh more), and
    paths the task names outright. ``by_word`` (:func:`path_word_index` of
    ``files``) gives the same scores without visiting every path's words."""
    n = max(1, len(files))
    words = set(query.words)
    named = [p.strip("/") for p in query.paths]
    path_df: Counter[str] = Counter()
    pw_cache: dict[str, frozenset[str]] = {}
    if by_word is not None:
        matched = set()
        for w in words:
            owners = by_word.get(w, ())
            path_df[w] = len(owners)
            matched.update(owners)
        # in walk order, as below: ties rank alike; a path named outright may be any file
        visit = files if named else [f for f in files if f.abs in matched]
        empty: frozenset[str] = frozenset()
        for f in visit:
            pw_cache[f.abs] = path_words(f.rel) & words if f.abs in matched else empty
    else:
        visit = files
        for f in files:
            pw = pw_cache[f.abs] = path_words(f.rel) & words
            path_df.update(pw)
    for f in visit:
        pw = pw_cache[f.abs]
        bonus = sum(math.log(1 + n / (1 + path_df[w])) * 0.5 for w in pw)
        if named and any(f.rel == p or f.rel.endswith("/" + p) or os.path.basename(f.rel) == p for p in named):
            bonus += PATH_NAMED
            scored.of(f).reasons.append("path named in the task")
        if bonus:
            s = scored.of(f)
            s.path += bonus
            if pw:
                s.reasons.append("path words: " + ", ".join(sorted(pw)))


def score_symbols(
    query: Query,
    files: list[FileInfo],
    index: SymbolIndex,
    symbol_words: Mapping[str, Collection[str]],
    scored: Scores,
) -> None:
    """Files defining the identifiers and names the task mentions (few definers
    weigh more), and files defining symbols whose names share the task's words."""
    n = max(1, len(files))
    shown_to_info = {f.shown: f for f in files}
    named_symbols = [(i, DEFINES_NAMED, 12) for i in query.identifiers] + [
        (name, DEFINES_NAMED / 2, 6) for name in query.names
    ]
    for name, weight, max_definers in named_symbols:
        definers = {d.path for d in index.definitions(name)}
        if not definers or len(definers) > max_definers:
            continue
        for shown in definers:
            f = shown_to_info.get(shown)
            if f is None:
                continue
            s = scored.of(f)
            s.symbol += weight / len(definers)
            s.reasons.append(f"defines `{name}`")
    for w in set(query.words):
        owners = symbol_words.get(w)
        if not owners or len(owners) > max(20, n // 20):
            continue
        idf = math.log(1 + n / len(owners))
        for shown in owners:
            f = shown_to_info.get(shown)
            if f is not None:
                scored.of(f).symbol += 0.3 * idf
