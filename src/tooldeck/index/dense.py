"""The dense side: every chunk's unit vector, rows of one float32 matrix.

Saved as ``vectors.npy`` beside the lexical index and memory-mapped when
opened, so a search touches only the pages it needs and many processes share
them. Brute force cosine (one matrix-vector product, then ``argpartition``)
is exact and, at the sizes an agent indexes (tens of thousands of chunks,
64-384 dimensions), a few milliseconds: no approximate index to build or
tune.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np

from tooldeck.ast_lock import AST_LOCK


def write_vectors(path: Path, vectors: np.ndarray) -> None:
    with open(path, "wb") as fh:  # a file of the index's own new generation, not of a root
        np.save(fh, np.ascontiguousarray(vectors, dtype=np.float32))
        fh.flush()


def load_vectors(path: Path) -> np.ndarray:
    with AST_LOCK:  # numpy reads the header with ast.literal_eval: one thread at a time (ast_lock)
        return np.load(path, mmap_mode="r")


def top_k(vectors: np.ndarray, query: np.ndarray, k: int) -> list[tuple[int, float]]:
    """``(row, cosine)`` of the ``k`` rows nearest ``query`` (a unit vector), best first."""
    n = vectors.shape[0]
    if n == 0 or k <= 0:
        return []
    scores = vectors @ query.astype(np.float32).reshape(-1)
    k = min(k, n)
    idx = np.argpartition(-scores, k - 1)[:k] if k < n else np.arange(n)
    idx = idx[np.argsort(-scores[idx], kind="stable")]
    return [(int(i), float(scores[i])) for i in idx]
