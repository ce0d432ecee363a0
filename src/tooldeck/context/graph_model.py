"""The reference graph's data: its nodes, transition matrix and symbol words.

Apart from :mod:`tooldeck.context.rank` (which builds and ranks it) so that
:mod:`tooldeck.context.graph_store` can save and load it without a cycle.
"""

from __future__ import annotations

import functools
import importlib.machinery
import importlib.util
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from pathlib import Path

import numpy as np


class Transition:
    """A square sparse matrix in CSR form (row ``d``: the weights of the edges
    into ``d``, columns ascending) and its product with a vector, without
    importing scipy.sparse: that import cost ~20 MB of resident memory (issue
    35) for one matrix-vector product. The product is scipy's own compiled
    ``csr_matvec`` loaded alone (0.2 MB) when scipy is installed, else numpy's
    ``bincount``; both sum each row's terms left to right from 0.0, as
    ``csr_matrix @ x`` does: the same floats."""

    __slots__ = ("data", "indices", "indptr", "n")

    def __init__(self, data: np.ndarray, indices: np.ndarray, indptr: np.ndarray, n: int) -> None:
        self.data = np.ascontiguousarray(data, dtype=np.float64)
        self.indptr = np.ascontiguousarray(indptr, dtype=np.int32 if n < 2**31 and data.size < 2**31 else np.int64)
        self.indices = np.ascontiguousarray(indices, dtype=self.indptr.dtype)
        self.n = n

    @classmethod
    def from_edges(cls, w: np.ndarray, dst: np.ndarray, src: np.ndarray, n: int) -> Transition:
        """The matrix with entry ``(dst[k], src[k]) = w[k]`` (the pairs distinct)."""
        order = np.lexsort((src, dst))  # by row, then column
        indptr = np.zeros(n + 1, dtype=np.int64)
        np.cumsum(np.bincount(dst, minlength=n), out=indptr[1:])
        return cls(w[order], src[order], indptr, n)

    @property
    def nnz(self) -> int:
        return int(self.data.size)

    @property
    def shape(self) -> tuple[int, int]:
        return self.n, self.n

    @property
    def rows(self) -> np.ndarray:
        """The row of each stored entry."""
        return np.repeat(np.arange(self.n, dtype=self.indptr.dtype), np.diff(self.indptr))

    def __matmul__(self, x: np.ndarray) -> np.ndarray:
        x = np.ascontiguousarray(x, dtype=np.float64)
        matvec = _csr_matvec()
        if matvec is None:
            return np.bincount(self.rows, weights=self.data * x[self.indices], minlength=self.n)
        out = np.zeros(self.n)
        matvec(self.n, self.n, self.indptr, self.indices, self.data, x, out)
        return out


@functools.cache
def _csr_matvec() -> Callable[..., None] | None:
    """scipy's compiled ``csr_matvec``, its extension module loaded by itself
    (importing ``scipy.sparse`` loads the whole package: ~20 MB); None where
    scipy or that module is missing or differs."""
    try:
        spec = importlib.util.find_spec("scipy")  # finds the package without importing it
        if spec is None or not spec.submodule_search_locations:
            return None
        folder = Path(next(iter(spec.submodule_search_locations))) / "sparse"
        for suffix in importlib.machinery.EXTENSION_SUFFIXES:
            path = folder / f"_sparsetools{suffix}"
            if path.is_file():
                ext = importlib.util.spec_from_file_location("scipy.sparse._sparsetools", path)
                if ext is None or ext.loader is None:
                    return None
                module = importlib.util.module_from_spec(ext)
                ext.loader.exec_module(module)
                return module.csr_matvec  # type: ignore[no-any-return]
    except (ImportError, OSError, AttributeError):
        return None
    return None


@dataclass(slots=True)
class Graph:
    nodes: list[str]  # shown paths
    index_of: dict[str, int]
    # the transition matrix, transposed: row = destination, column = source, value = the edge's
    # weight normalised per source (each source's weights sum to 1); spread = matrix @ rank
    matrix: Transition  # n × n, CSR
    dangling: np.ndarray  # indices of the nodes without out-edges
    # word → files defining a symbol with that word in its name (tuples: 33k sets of a 13k-file tree took 28 MB)
    # (a partial index's graph: rank.LazySymbolWords, the same mapping found per word asked)
    symbol_words: Mapping[str, tuple[str, ...]]

    @property
    def edges(self) -> int:
        return self.matrix.nnz

    @property
    def src(self) -> np.ndarray:
        """Source node of each edge (made from the matrix: for tests and inspection)."""
        return self.matrix.indices

    @property
    def dst(self) -> np.ndarray:
        return self.matrix.rows

    @property
    def weight(self) -> np.ndarray:
        """Each edge's weight, in the order of :attr:`src` and :attr:`dst`."""
        return self.matrix.data
