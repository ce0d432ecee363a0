"""The reference graph kept on disk under its index fingerprint.

Why: a restarted server finds the symbol index in the store but had to build
the graph again — every file's reference words walked, the matrix made —
before its first ``context_builder`` could rank (issue 30: a restart should
cost little). The graph is a pure function of the index, and the index's
fingerprint (the content keys of all its files) names it, so a graph saved
under that name is the graph a rebuild would make.

Format: one ``.npz`` per fingerprint in ``<state>/graphs/`` (written to a
temp name, then renamed: a reader sees a whole file or none): the CSR
arrays, the dangling nodes, the node paths NUL-joined, and the symbol words
as (words NUL-joined, offsets, owner node ids). No pickle: ``np.load`` runs
with ``allow_pickle=False``. Only the :data:`KEEP` most recently used files
are kept. A file that cannot be read is ignored (the graph is built again).
"""

from __future__ import annotations

import contextlib
import io
import logging
import os
from pathlib import Path
from typing import Any

import numpy as np

from tooldeck.ast_lock import AST_LOCK
from tooldeck.context.graph_model import Graph, Transition
from tooldeck.workspace.statefiles import write_private_atomic

log = logging.getLogger("tooldeck.context")
KEEP = 4  # graphs kept: a few workspaces sharing the state directory do not evict each other
FORMAT = 1


def _path(folder: Path, key: str) -> Path:
    return folder / f"graph-v{FORMAT}-{key}.npz"


def _joined(items: list[str]) -> np.ndarray:
    return np.frombuffer("\0".join(items).encode("utf-8", "surrogateescape"), dtype=np.uint8)


def _split(arr: np.ndarray) -> list[str]:
    text = arr.tobytes().decode("utf-8", "surrogateescape")
    return text.split("\0") if text else []


def save(folder: Path, key: str, graph: Graph) -> None:
    try:
        folder.mkdir(parents=True, exist_ok=True)
        words = list(graph.symbol_words)
        ptr = np.zeros(len(words) + 1, dtype=np.int64)
        ids: list[int] = []
        for k, w in enumerate(words):
            ids.extend(graph.index_of[p] for p in graph.symbol_words[w])
            ptr[k + 1] = len(ids)
        m = graph.matrix
        buf = io.BytesIO()
        np.savez(
            buf,
            data=m.data, indices=m.indices, indptr=m.indptr, dangling=graph.dangling,
            nodes=_joined(graph.nodes), words=_joined(words), word_ptr=ptr,
            owners=np.asarray(ids, dtype=np.int32),
        )  # fmt: skip
        # the state directory's one temp-then-rename (exclusive, no link followed, fsynced); the
        # buffer's own bytes, not a copy (the arrays are ~30 MB on a 13k-file tree)
        write_private_atomic(_path(folder, key), buf.getbuffer())
        _prune(folder)
    except (OSError, ValueError):
        log.debug("saving the context graph failed", exc_info=True)


def load(folder: Path, key: str) -> Graph | None:
    path = _path(folder, key)
    if not path.exists():
        return None
    try:
        graph = _read(path)
        os.utime(path)  # recently used: kept by the pruning
        return graph
    except Exception:
        log.debug("the saved context graph %s is unreadable: removed", path, exc_info=True)
        with contextlib.suppress(OSError):
            os.unlink(path)
        return None


def _read(path: Path) -> Graph:
    # each member's header is read with ast.literal_eval as it is read: one thread at a time (ast_lock)
    with AST_LOCK, np.load(path, allow_pickle=False) as z:
        arrays: dict[str, Any] = {name: z[name] for name in z.files}
    nodes = _split(arrays["nodes"])
    n = len(nodes)
    matrix = Transition(arrays["data"], arrays["indices"], arrays["indptr"], n)
    if (
        matrix.indptr.size != n + 1
        or matrix.indptr[0] != 0
        or matrix.indices.size != matrix.data.size
        or matrix.indptr[-1] != matrix.nnz
        or bool(np.any(np.diff(matrix.indptr) < 0))
    ):
        raise ValueError("inconsistent CSR arrays")
    if matrix.nnz and (int(matrix.indices.min()) < 0 or int(matrix.indices.max()) >= n):
        raise ValueError("a column index out of range")
    words, ptr, owners = _split(arrays["words"]), arrays["word_ptr"].tolist(), arrays["owners"].tolist()
    symbol_words = {w: tuple(nodes[i] for i in owners[ptr[k] : ptr[k + 1]]) for k, w in enumerate(words)}
    return Graph(nodes, {p: i for i, p in enumerate(nodes)}, matrix, arrays["dangling"], symbol_words)


def _prune(folder: Path) -> None:
    files = []
    for entry in os.scandir(folder):
        if entry.name.startswith("graph-") and entry.name.endswith(".npz"):
            files.append((entry.stat().st_mtime, entry.path))
    for _, path in sorted(files, reverse=True)[KEEP:]:
        try:
            os.unlink(path)
        except OSError:
            pass
