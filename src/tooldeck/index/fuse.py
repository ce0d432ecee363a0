"""Hybrid fusion of the lexical (BM25) and dense (cosine) rankings.

Three methods, all over the top ``CANDIDATES`` of each side:

* ``blend`` (markdown, pydoc): ``bm25(d) / max bm25 + w_dense * cos(d)``. The BM25
  score is divided by the query's best so it lies in [0, 1] whatever the
  query's length; the cosine is computed exactly for every candidate (also
  those only the lexical side found: the vectors are at hand), so a
  candidate is never penalised for missing from the other list. The dense
  term works as a semantic tie-breaker between lexical candidates, and
  brings in documents with no word of the query.
* ``norm`` (code): both scores normalised to the query's candidates,
  ``bm25(d) / max bm25 + w_dense * (cos(d) - median) / (max - median)``,
  where median and max are those of the dense top ``CANDIDATES``. A static
  model's cosines crowd into a narrow band whose place varies from query to
  query, so a raw cosine weight either drowns BM25 or does nothing; spread
  over [0, 1] (clipped at -1 below), the dense side moves a candidate by at
  most ``w_dense`` of the best BM25 score: it reorders near-ties and lifts
  a definition the words found weakly; one the words missed entirely scores
  at most ``w_dense``.
* ``rrf``, weighted reciprocal rank fusion:
  ``w_lexical / (k + rank_lex) + w_dense / (k + rank_dense)``. Needs no
  score normalisation, but treats the two lists as equally informative
  rank for rank unless weighted.

The defaults are the ones ``bench/index_eval.py`` selected: for markdown on
the docs set, for code on the *tuning half* of the code set (its other half
is held out and reported apart; docs/index.md has the grids and figures).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

import numpy as np

CANDIDATES = 50


@dataclass(frozen=True, slots=True)
class Fusion:
    method: Literal["blend", "norm", "rrf"] = "blend"
    k: float = 60.0  # rrf only
    w_lexical: float = 1.0  # rrf only (blend's lexical weight is 1)
    w_dense: float = 0.8


DEFAULT = Fusion()
# Per index kind (a docs section and a code definition are found differently);
# pydoc chunks (signatures and docstrings) read like prose and use DEFAULT.
BY_KIND: dict[str, Fusion] = {"markdown": DEFAULT, "code": Fusion("norm", w_dense=0.2)}
# A contextual model (MiniLM, an endpoint) is about as good as BM25 or better, and earns a larger share:
# chosen with the minilm extra on the docs set and on the code set's tuning half (docs/index.md).
BY_KIND_CONTEXTUAL: dict[str, Fusion] = {
    "markdown": Fusion("blend", w_dense=2.0),
    "code": Fusion("rrf", k=5.0, w_dense=1.5),
}


def for_kind(kind: str, model_id: str = "") -> Fusion:
    """The fusion of an index of ``kind`` whose vectors ``model_id`` made
    (the packaged static model unless the id names another provider)."""
    if model_id and not model_id.startswith("static:"):
        return BY_KIND_CONTEXTUAL.get(kind, BY_KIND_CONTEXTUAL["markdown"])
    return BY_KIND.get(kind, DEFAULT)


Fused = list[tuple[int, float, int | None, int | None]]  # (id, score, lexical rank, dense rank)


def rrf(lexical: list[tuple[int, float]], dense: list[tuple[int, float]], fusion: Fusion = DEFAULT) -> Fused:
    """``(id, fused score, lexical rank, dense rank)`` best first (ranks 1-based)."""
    scores: dict[int, float] = {}
    lex_rank: dict[int, int] = {}
    dense_rank: dict[int, int] = {}
    for r, (i, _s) in enumerate(lexical, 1):
        lex_rank[i] = r
        scores[i] = scores.get(i, 0.0) + fusion.w_lexical / (fusion.k + r)
    for r, (i, _s) in enumerate(dense, 1):
        dense_rank[i] = r
        scores[i] = scores.get(i, 0.0) + fusion.w_dense / (fusion.k + r)
    ordered = sorted(scores.items(), key=lambda kv: (-kv[1], kv[0]))
    return [(i, s, lex_rank.get(i), dense_rank.get(i)) for i, s in ordered]


def _normalised(
    lexical: list[tuple[int, float]], dense: list[tuple[int, float]]
) -> tuple[dict[int, int], dict[int, int], dict[int, float], list[int]]:
    """Ranks on each side, BM25 scores over their maximum, and every candidate id
    (lexical first): what the score-combining fusions start from."""
    lex_rank = {i: r for r, (i, _s) in enumerate(lexical, 1)}
    dense_rank = {i: r for r, (i, _s) in enumerate(dense, 1)}
    best = max((s for _i, s in lexical), default=0.0) or 1.0
    lex = {i: s / best for i, s in lexical}
    return lex_rank, dense_rank, lex, list(dict.fromkeys([*lex, *dense_rank]))


def blend(
    lexical: list[tuple[int, float]],
    dense: list[tuple[int, float]],
    vectors: np.ndarray,
    query: np.ndarray,
    fusion: Fusion = DEFAULT,
) -> Fused:
    lex_rank, dense_rank, lex, ids = _normalised(lexical, dense)
    if not ids:
        return []
    cos = vectors[ids] @ query.astype(np.float32).reshape(-1) if len(vectors) else np.zeros(len(ids))
    scored = [(i, lex.get(i, 0.0) + fusion.w_dense * float(c)) for i, c in zip(ids, cos, strict=True)]
    scored.sort(key=lambda t: (-t[1], t[0]))
    return [(i, s, lex_rank.get(i), dense_rank.get(i)) for i, s in scored]


def norm(
    lexical: list[tuple[int, float]],
    dense: list[tuple[int, float]],
    vectors: np.ndarray,
    query: np.ndarray,
    fusion: Fusion,
) -> Fused:
    """The score-normalised combination (see the module docstring)."""
    lex_rank, dense_rank, lex, ids = _normalised(lexical, dense)
    if not ids or not len(vectors):
        return rrf(lexical, dense, fusion)
    cos = vectors[ids] @ query.astype(np.float32).reshape(-1)
    pool = np.asarray([s for _i, s in dense], dtype=np.float32) if dense else cos
    top, mid = float(pool.max()), float(np.median(pool))
    spread = np.clip((cos - mid) / max(top - mid, 1e-6), -1.0, 1.0)
    scored = [(i, lex.get(i, 0.0) + fusion.w_dense * float(c)) for i, c in zip(ids, spread, strict=True)]
    scored.sort(key=lambda t: (-t[1], t[0]))
    return [(i, s, lex_rank.get(i), dense_rank.get(i)) for i, s in scored]


def fuse(
    lexical: list[tuple[int, float]],
    dense: list[tuple[int, float]],
    vectors: np.ndarray,
    query: np.ndarray | None,
    fusion: Fusion = DEFAULT,
) -> Fused:
    if fusion.method == "blend" and query is not None:
        return blend(lexical, dense, vectors, query, fusion)
    if fusion.method == "norm" and query is not None:
        return norm(lexical, dense, vectors, query, fusion)
    return rrf(lexical, dense, fusion)
