"""The reference graph and a personalised PageRank over it.

Nodes are files of the symbol index. File A links to file B when A uses a
name that B defines (and A does not): the edge weight is split among all
definers of the name, names defined in many files carry little, and names
defined in more than ``MAX_DEFINERS`` files (``get``, ``run``...) carry none.
A weaker reverse edge (definer → user) lets rank flow from a changed function
to its callers, which tasks often touch too.

PageRank is personalised: the teleport vector is the lexical retrieval score,
so rank spreads from what the task names to what that code depends on and
what depends on it. The power iteration runs on numpy arrays (one
``bincount`` per step), so 100k edges cost milliseconds.

Building the graph walks every file's reference words, so it is cached by a
fingerprint of the index (the content keys of all files): unchanged code
never rebuilds it.
"""

from __future__ import annotations

import hashlib
import threading
from dataclasses import dataclass

import numpy as np

from tooldeck.codemap.index import SymbolIndex
from tooldeck.context.query import subwords

MAX_DEFINERS = 8
REVERSE_WEIGHT = 0.35
ALPHA = 0.8  # probability of following an edge (1 - teleport)
ITERATIONS = 30
TOLERANCE = 1e-6  # L1 change per step below which the ranking no longer moves


@dataclass(slots=True)
class Graph:
    nodes: list[str]  # shown paths
    index_of: dict[str, int]
    src: np.ndarray
    dst: np.ndarray
    weight: np.ndarray  # normalised per source (rows sum to 1)
    dangling: np.ndarray  # bool per node: no out-edges
    symbol_words: dict[str, set[str]]  # word → files defining a symbol with that word in its name

    @property
    def edges(self) -> int:
        return int(self.src.size)


def fingerprint(index: SymbolIndex) -> str:
    h = hashlib.blake2b(digest_size=16)
    for rec in sorted(index.records(), key=lambda r: (r.root_path, r.rel)):
        h.update(f"{rec.root_path}\0{rec.rel}\0{rec.key}\n".encode())
    return h.hexdigest()


def build_graph(index: SymbolIndex) -> Graph:
    records = sorted(index.records(), key=lambda r: r.shown)
    nodes = [r.shown for r in records]
    index_of = {p: i for i, p in enumerate(nodes)}
    definers: dict[str, list[int]] = {}
    sym_words: dict[str, set[str]] = {}
    for i, rec in enumerate(records):
        names = {s.name for s in rec.symbols if len(s.name) >= 3}
        for name in names:
            definers.setdefault(name, []).append(i)
        for name in names:
            for w in subwords(name):
                sym_words.setdefault(w, set()).add(rec.shown)
    weights: dict[tuple[int, int], float] = {}
    for i, rec in enumerate(records):
        for word in rec.refs.split():
            owners = definers.get(word)
            if not owners or len(owners) > MAX_DEFINERS or i in owners:
                continue
            share = 1.0 / len(owners)
            for j in owners:
                weights[(i, j)] = weights.get((i, j), 0.0) + share
                weights[(j, i)] = weights.get((j, i), 0.0) + share * REVERSE_WEIGHT
    n = len(nodes)
    if weights:
        pairs = np.fromiter((k for pair in weights for k in pair), dtype=np.int64, count=2 * len(weights))
        src, dst = pairs[0::2], pairs[1::2]
        w = np.fromiter(weights.values(), dtype=np.float64, count=len(weights))
        out_sum = np.bincount(src, weights=w, minlength=n)
        w = w / out_sum[src]
    else:
        src = dst = np.zeros(0, dtype=np.int64)
        w = np.zeros(0, dtype=np.float64)
        out_sum = np.zeros(n)
    return Graph(nodes, index_of, src, dst, w, out_sum == 0, sym_words)


def personalized_pagerank(
    graph: Graph, seeds: dict[str, float], *, alpha: float = ALPHA, iterations: int = ITERATIONS
) -> dict[str, float]:
    """Stationary rank of each node for teleport distribution ``seeds``
    (shown path → weight; unknown paths are ignored)."""
    n = len(graph.nodes)
    if n == 0:
        return {}
    p = np.zeros(n)
    for path, weight in seeds.items():
        i = graph.index_of.get(path)
        if i is not None and weight > 0:
            p[i] += weight
    if p.sum() == 0:
        return {}
    p /= p.sum()
    r = p.copy()
    for _ in range(iterations):
        spread = np.bincount(graph.dst, weights=r[graph.src] * graph.weight, minlength=n)
        lost = r[graph.dangling].sum()
        r_next = alpha * (spread + lost * p) + (1 - alpha) * p
        if np.abs(r_next - r).sum() < TOLERANCE:
            r = r_next
            break
        r = r_next
    return {graph.nodes[i]: float(r[i]) for i in np.nonzero(r > 1e-12)[0]}


class GraphCache:
    """One graph per index fingerprint (the last one only)."""

    def __init__(self) -> None:
        self._key: str | None = None
        self._graph: Graph | None = None
        self._lock = threading.Lock()

    def get(self, index: SymbolIndex) -> Graph:
        key = fingerprint(index)
        with self._lock:
            if self._graph is None or self._key != key:
                self._graph = build_graph(index)
                self._key = key
            return self._graph
