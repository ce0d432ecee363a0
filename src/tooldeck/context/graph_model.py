"""The reference graph's data: its nodes, transition matrix and symbol words.

Apart from :mod:`tooldeck.context.rank` (which builds and ranks it) so that
:mod:`tooldeck.context.graph_store` can save and load it without a cycle.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np


@dataclass(slots=True)
class Graph:
    nodes: list[str]  # shown paths
    index_of: dict[str, int]
    # the transition matrix, transposed: row = destination, column = source, value = the edge's
    # weight normalised per source (each source's weights sum to 1); spread = matrix @ rank
    matrix: Any  # scipy.sparse.csr_matrix (n × n)
    dangling: np.ndarray  # indices of the nodes without out-edges
    # word → files defining a symbol with that word in its name (tuples: 33k sets of a 13k-file tree took 28 MB)
    symbol_words: dict[str, tuple[str, ...]]

    @property
    def edges(self) -> int:
        return int(self.matrix.nnz)

    def _coo(self) -> Any:
        return self.matrix.tocoo()

    @property
    def src(self) -> np.ndarray:
        """Source node of each edge (made from the matrix: for tests and inspection)."""
        return np.asarray(self._coo().col)

    @property
    def dst(self) -> np.ndarray:
        return np.asarray(self._coo().row)

    @property
    def weight(self) -> np.ndarray:
        """Each edge's weight, in the order of :attr:`src` and :attr:`dst`."""
        return np.asarray(self._coo().data)
