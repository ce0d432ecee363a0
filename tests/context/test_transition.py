"""The graph's CSR matrix (issue 35): scipy.sparse is not imported, and the
product is the one ``scipy.sparse.csr_matrix @ x`` gives, to the last bit,
through scipy's compiled kernel and through the numpy fallback alike."""

from __future__ import annotations

import subprocess
import sys

import numpy as np

from tooldeck.context import graph_model
from tooldeck.context.graph_model import Transition


def _random_edges(seed: int, n: int, m: int) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    rng = np.random.default_rng(seed)
    keys = np.unique(rng.integers(0, n * n, size=m))
    rng.shuffle(keys)  # edges in no particular order, as the graph builder makes them
    return rng.random(keys.size), (keys // n).astype(np.int32), (keys % n).astype(np.int32)


def test_product_equals_scipy_bit_for_bit_on_both_paths(monkeypatch):
    import scipy.sparse

    n = 700
    w, dst, src = _random_edges(3, n, 40_000)
    ours = Transition.from_edges(w, dst, src, n)
    theirs = scipy.sparse.csr_matrix((w, (dst, src)), shape=(n, n))
    assert np.array_equal(ours.indptr, theirs.indptr) and np.array_equal(ours.indices, theirs.indices)
    x = np.random.default_rng(4).random(n)
    want = theirs @ x
    assert graph_model._csr_matvec() is not None  # scipy is a dependency: the compiled kernel is found
    assert np.array_equal(ours @ x, want)
    monkeypatch.setattr(graph_model, "_csr_matvec", lambda: None)
    assert np.array_equal(ours @ x, want)
    assert np.array_equal(ours.rows, theirs.tocoo().row)


def test_ranking_does_not_import_scipy_sparse(tmp_path):
    code = (
        "import sys, numpy as np\n"
        "from tooldeck.context.graph_model import Transition\n"
        "t = Transition.from_edges(np.array([0.5, 1.0]), np.array([1, 0]), np.array([0, 1]), 2)\n"
        "print((t @ np.array([1.0, 2.0])).tolist(), 'scipy.sparse' in sys.modules)\n"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    assert out.split() == ["[2.0,", "0.5]", "False"]
