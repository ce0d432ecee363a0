"""The reference graph and a personalised PageRank over it.

Nodes are files of the symbol index. File A links to file B when A uses a
name that B defines (and A does not): the edge weight is split among all
definers of the name, names defined in many files carry little, and names
defined in more than ``MAX_DEFINERS`` files (``get``, ``run``...) carry none.
A weaker reverse edge (definer → user) lets rank flow from a changed function
to its callers, which tasks often touch too.

PageRank is personalised: the teleport vector is the lexical retrieval score,
so rank spreads from what the task names to what that code depends on and
what depends on it. The graph does not change between builds (only the
personalisation does), so its transition matrix is made once, as a
``scipy.sparse`` CSR matrix, when the graph is built; each power-iteration
step is then one compiled sparse mat-vec: on a 12,817-file tree (1.3M
edges) a build's PageRank fell from ~0.30 s (a numpy ``bincount`` over the
edge arrays per step) to ~0.04 s, and the matrix (values + column indices)
is smaller than the three edge arrays it replaces (16 MB against 21 MB).
scipy is imported when the first graph is built, never at server start.

Building the graph walks every file's reference words, so it is cached by a
fingerprint of the index (the content keys of all files): unchanged code
never rebuilds it.
"""

from __future__ import annotations

import hashlib
import threading
from array import array
from bisect import bisect_right
from collections.abc import Callable, Iterator, Mapping
from contextlib import contextmanager
from itertools import accumulate, repeat
from pathlib import Path

import numpy as np

from tooldeck.codemap.index import FileRecord, SymbolIndex
from tooldeck.context import graph_store
from tooldeck.context.graph_model import Graph, Transition
from tooldeck.context.query import subwords

MAX_DEFINERS = 8
REVERSE_WEIGHT = 0.7
ALPHA = 0.8  # probability of following an edge (1 - teleport)
ITERATIONS = 30
TOLERANCE = 1e-6  # L1 change per step below which the ranking no longer moves


def fingerprint(index: SymbolIndex) -> str:
    h = hashlib.blake2b(digest_size=16)
    for rec in sorted(index.records(), key=lambda r: (r.root_path, r.rel)):
        h.update(f"{rec.root_path}\0{rec.rel}\0{rec.key}\n".encode())
    return h.hexdigest()


Pause = Callable[[], object]
PAUSE_EVERY = 2000  # records (or names) between two calls of a graph build's ``pause``


def _go_on() -> None:
    return None


def build_graph(index: SymbolIndex, lazy_words: bool = False, pause: Pause = _go_on) -> Graph:
    """The reference graph of ``index``; ``lazy_words``: its symbol words
    found per word asked (:class:`LazySymbolWords`) instead of all made now.

    ``pause`` is called between steps and every :data:`PAUSE_EVERY` records
    or names of the Python loops. The whole tree's graph is built by the
    background fill's thread when it completes (1.4 s of CPU on 12.4k files,
    most of it Python holding the GIL); a build made meanwhile took 0.64 s
    instead of 0.4, 0.44 s of it waiting for the GIL. That thread passes
    :meth:`~tooldeck.codemap.fill.IndexFill.pause`: it sleeps while a request
    is served."""
    records = sorted(index.records(), key=lambda r: r.shown)
    nodes = [r.shown for r in records]
    index_of = {p: i for i, p in enumerate(nodes)}
    definers: dict[str, list[int]] = {}
    for i, rec in enumerate(records):
        if i % PAUSE_EVERY == 0:
            pause()
        for name in {n for n in rec.names if len(n) >= 3}:
            definers.setdefault(name, []).append(i)
    n = len(nodes)
    src, dst, w = _edges(records, definers, n, pause)
    pause()
    if w.size:
        out_sum = np.bincount(src, weights=w, minlength=n)
        w = w / out_sum[src]
    else:
        out_sum = np.zeros(n)
    matrix = _transition(src, dst, w, n)
    del src, dst, w  # the matrix holds them (the edges are distinct: nothing is summed)
    pause()
    # after the edges: their transients (the build's peak) are gone before these sets are made
    symbol_words = LazySymbolWords(definers, nodes) if lazy_words else _symbol_words(definers, nodes, pause)
    return Graph(nodes, index_of, matrix, np.flatnonzero(out_sum == 0), symbol_words)


def _symbol_words(
    definers: dict[str, list[int]], nodes: list[str], pause: Pause = _go_on
) -> dict[str, tuple[str, ...]]:
    """Word of a defined name → the files defining a name with that word, sorted."""
    sym_words: dict[str, set[str]] = {}
    for at, (name, files) in enumerate(definers.items()):  # each distinct name split once, its definers together
        if at % PAUSE_EVERY == 0:
            pause()
        for w in subwords(name):
            sym_words.setdefault(w, set()).update(nodes[k] for k in files)
    pause()
    return {w: tuple(sorted(owners)) for w, owners in sym_words.items()}


class LazySymbolWords(Mapping[str, tuple[str, ...]]):
    """:func:`_symbol_words`'s mapping, each word's files found when it is
    asked. A build during the background fill makes a graph of the partial
    index and asks a dozen words of it; splitting every defined name of that
    index (16k-40k) cost it 0.05-0.15 s of CPU. A word's files are the
    definers of the names holding it as a substring whose subwords include
    it (every subword is a piece of its name, lowercased: ASCII letters and
    digits): the same tuples. Iterating makes them all (the graph store
    writes only a complete index's graph, which is never lazy).

    The names, lowercased, are one string: a word is looked for with
    ``str.find`` (C speed) and only the names it occurs in are split. A
    test of ``word in name`` on each of 40k names took ~1.5 ms per word,
    and the list of lowered pairs ~5 ms per graph."""

    def __init__(self, definers: dict[str, list[int]], nodes: list[str]) -> None:
        self._definers, self._nodes = definers, nodes
        self._names = list(definers)
        lowered = list(map(str.lower, self._names))  # a name's length may change (U+0130)
        self._text = "".join(lowered)
        self._starts = list(accumulate(map(len, lowered), initial=0))  # name k is text[starts[k]:starts[k + 1]]
        self._found: dict[str, tuple[str, ...] | None] = {}
        self._all: dict[str, tuple[str, ...]] | None = None

    def _owners(self, word: str) -> tuple[str, ...] | None:
        if word not in self._found:
            owners: set[str] = set()
            text, starts, names = self._text, self._starts, self._names
            at = text.find(word) if word else -1
            while at >= 0:
                # the name it starts in, split once; a match running on into the next name is
                # rejected by the split (had the name held the word, find would have stopped earlier)
                k = bisect_right(starts, at) - 1
                if word in subwords(names[k]):
                    owners.update(self._nodes[i] for i in self._definers[names[k]])
                at = text.find(word, starts[k + 1])  # the next name that holds it
            self._found[word] = tuple(sorted(owners)) if owners else None
        return self._found[word]

    def __getitem__(self, word: str) -> tuple[str, ...]:
        owners = self._owners(word) if isinstance(word, str) else None
        if owners is None:
            raise KeyError(word)
        return owners

    def __contains__(self, word: object) -> bool:
        return isinstance(word, str) and self._owners(word) is not None

    def _every(self) -> dict[str, tuple[str, ...]]:
        if self._all is None:
            self._all = _symbol_words(self._definers, self._nodes)
        return self._all

    def __iter__(self) -> Iterator[str]:
        return iter(self._every())

    def __len__(self) -> int:
        return len(self._every())


def _transition(src: np.ndarray, dst: np.ndarray, w: np.ndarray, n: int) -> Transition:
    """The CSR matrix whose row ``d`` holds the weights of the edges into ``d``."""
    return Transition.from_edges(w, dst, src, n)


def _edges(
    records: list[FileRecord], definers: dict[str, list[int]], n: int, pause: Pause = _go_on
) -> tuple[np.ndarray, ...]:
    """(src, dst, weight) of the reference graph, unnormalised.

    For each file ``i`` and each word of its references defined by ``1..MAX_DEFINERS``
    other files ``j``: an edge i→j of ``1/len(definers)`` and j→i of that times
    ``REVERSE_WEIGHT``; repeated pairs add up. Computed with numpy on flat arrays
    (one Python step per file, none per edge); edges come out in the order of
    their first occurrence and each weight is summed in occurrence order, so the
    floats are the ones a per-edge dict accumulation gives.

    Memory (issue 35): this was the server's peak, +215 MB on a 13k-file tree
    (1.8M directed edge terms): int64 everywhere, ``np.unique`` with its index
    and inverse, and every intermediate alive at once. Now the occurrences are
    32-bit arrays (no Python list), the pairs are 32-bit, each intermediate is
    dropped once used, and the terms are summed by unordered pair
    (:func:`_pair_sums`): 60 MB of live arrays at most, from ~200."""
    usable = [owners for owners in definers.values() if len(owners) <= MAX_DEFINERS]
    word_id = {name: k for k, name in enumerate(k for k, o in definers.items() if len(o) <= MAX_DEFINERS)}
    sizes = np.fromiter((len(o) for o in usable), dtype=np.int32, count=len(usable))
    ptr = np.zeros(len(usable) + 1, dtype=np.int64)
    np.cumsum(sizes, out=ptr[1:])
    flat_owners = np.fromiter((j for o in usable for j in o), dtype=np.int32, count=int(ptr[-1]))
    del usable
    ow, of = _occurrences(records, word_id, pause)
    del word_id
    pause()
    if not ow.size:
        return ow, of, np.zeros(0, dtype=np.float64)
    counts = sizes[ow]
    # expand each occurrence to its owners, in owner order
    occ = np.repeat(np.arange(ow.size, dtype=np.int32), counts)
    offset = np.arange(occ.size, dtype=np.int64)
    offset -= (np.cumsum(counts, dtype=np.int64) - counts)[occ]  # the owner's place in its occurrence's run
    offset += ptr[ow][occ]
    j = flat_owners[offset]
    del offset
    i = of[occ]
    # a file using a name it defines itself: that occurrence adds no edge
    self_use = np.zeros(ow.size, dtype=bool)
    self_use[occ[j == i]] = True
    keep = ~self_use[occ]
    del self_use, ow, of
    i, j = i[keep], j[keep]
    share = (1.0 / counts)[occ[keep]]
    del occ, keep, counts
    return _pair_sums(i, j, share, n)


def _occurrences(
    records: list[FileRecord], word_id: dict[str, int], pause: Pause = _go_on
) -> tuple[np.ndarray, np.ndarray]:
    """(word, file) of every usable reference word, in file then word order, as
    32-bit arrays (a Python list of ints costs 8 bytes a slot and an object
    per value)."""
    occ_word = array("i")
    occ_file = array("i")
    get = word_id.get
    for i, rec in enumerate(records):
        if i % PAUSE_EVERY == 0:
            pause()
        ids = [k for k in map(get, rec.refs.split()) if k is not None]
        occ_word.extend(ids)
        occ_file.extend(repeat(i, len(ids)))
    return np.frombuffer(occ_word, dtype=np.int32), np.frombuffer(occ_file, dtype=np.int32)


def _pair_sums(i: np.ndarray, j: np.ndarray, share: np.ndarray, n: int) -> tuple[np.ndarray, ...]:
    """(src, dst, weight) from the occurrence pairs ``i`` uses ``j`` (in
    occurrence order): each pair adds ``share`` to the edge i→j and ``share *
    REVERSE_WEIGHT`` to j→i, summed in occurrence order; edges in the order
    they first occur, a pair's forward edge before its reverse.

    Both edges between two files get their terms from the same occurrences
    (those of the pair either way round), so the pairs are grouped once, by
    the unordered pair, with one stable sort (each group's occurrences stay in
    order), and ``bincount`` (which adds left to right) sums the low → high and
    the high → low edge of every group: the floats of a per-edge dict
    accumulation, from arrays of one entry per occurrence instead of two."""
    if not i.size:  # every occurrence was of a name its own file defines
        return i, j, share
    key = np.minimum(i, j).astype(np.int64)
    key *= n
    key += np.maximum(i, j)
    perm = np.argsort(key, kind="stable")
    key = key[perm]
    starts = np.empty(key.size, dtype=bool)
    starts[0] = True
    np.not_equal(key[1:], key[:-1], out=starts[1:])
    del key
    first = perm[starts]  # each group's earliest occurrence (the sort is stable)
    group = np.cumsum(starts, dtype=np.intp)
    group -= 1
    del starts
    up = (i < j)[perm]  # the occurrence goes from the lower node to the higher
    term = share[perm]
    del perm
    low_high = np.bincount(group, weights=np.where(up, term, term * REVERSE_WEIGHT), minlength=first.size)
    high_low = np.bincount(group, weights=np.where(up, term * REVERSE_WEIGHT, term), minlength=first.size)
    del group, up, term
    order = np.argsort(first)  # the groups in the order they first occur
    first = first[order]
    fi, fj = i[first], j[first]
    del first
    up = fi < fj
    low_high, high_low = low_high[order], high_low[order]
    del order
    src = np.empty(2 * fi.size, dtype=np.int32)
    dst = np.empty(2 * fi.size, dtype=np.int32)
    weight = np.empty(2 * fi.size, dtype=np.float64)
    src[0::2], dst[0::2], weight[0::2] = fi, fj, np.where(up, low_high, high_low)
    src[1::2], dst[1::2], weight[1::2] = fj, fi, np.where(up, high_low, low_high)
    return src, dst, weight


def personalized_pagerank(
    graph: Graph, seeds: dict[str, float], *, alpha: float = ALPHA, iterations: int = ITERATIONS
) -> dict[str, float]:
    """Stationary rank of each node for teleport distribution ``seeds``
    (shown path → weight; unknown paths are ignored)."""
    r = rank_vector(graph, seeds, alpha=alpha, iterations=iterations)
    if r is None:
        return {}
    idx = np.flatnonzero(r > MIN_RANK)
    return dict(zip([graph.nodes[i] for i in idx.tolist()], r[idx].tolist(), strict=True))


MIN_RANK = 1e-12  # ranks at or below this are no rank at all


def rank_vector(
    graph: Graph, seeds: dict[str, float], *, alpha: float = ALPHA, iterations: int = ITERATIONS
) -> np.ndarray | None:
    """:func:`personalized_pagerank` as an array aligned with ``graph.nodes``
    (None: no seed is a node). A caller mapping ranks to its own keys skips
    the dict of every ranked node (~12k on a 13k-file tree)."""
    n = len(graph.nodes)
    if n == 0:
        return None
    p = np.zeros(n)
    for path, weight in seeds.items():
        i = graph.index_of.get(path)
        if i is not None and weight > 0:
            p[i] += weight
    if p.sum() == 0:
        return None
    p /= p.sum()
    r = p.copy()
    matrix = graph.matrix
    for _ in range(iterations):
        spread = matrix @ r
        lost = r[graph.dangling].sum()
        r_next = alpha * (spread + lost * p) + (1 - alpha) * p
        if np.abs(r_next - r).sum() < TOLERANCE:
            r = r_next
            break
        r = r_next
    return r


class GraphCache:
    """One graph per index fingerprint (the last one only); with ``folder``,
    also on disk (:mod:`tooldeck.context.graph_store`), so a restarted
    server loads the graph instead of building it."""

    def __init__(self, folder: Path | None = None) -> None:
        self._folder = folder
        self._key: str | None = None
        self._graph: Graph | None = None
        self._seen: tuple[SymbolIndex, int] | None = None  # the index and version last fingerprinted
        self._lock = threading.Lock()
        self._waiting = 0  # threads waiting for ``_lock`` (see :meth:`wanted`)
        self._count = threading.Lock()

    def wanted(self) -> bool:
        """Whether a thread waits for the graph being built. The fill's
        thread builds the whole tree's graph under this cache's lock and its
        ``pause`` sleeps while a request is served: a request that needs the
        graph then waits for that lock, so the pause must end (the fill
        passes this as its pause's "urgent"), or each pause point would make
        the request wait out the pause's bound."""
        return self._waiting > 0

    @contextmanager
    def _locked(self) -> Iterator[None]:
        with self._count:
            self._waiting += 1
        try:
            self._lock.acquire()
        finally:
            with self._count:
                self._waiting -= 1
        try:
            yield
        finally:
            self._lock.release()

    def get(self, index: SymbolIndex, pause: Pause = _go_on) -> Graph:
        """The graph of ``index``: the one kept, loaded, or built (``pause``
        called between the build's steps)."""
        with self._locked():
            seen = self._seen
            if self._graph is not None and seen is not None and seen[0] is index and seen[1] == index.version:
                return self._graph  # not touched since: no need to fingerprint 13k records again
        version = index.version
        key = fingerprint(index)
        with self._locked():
            if self._graph is None or self._key != key:
                self._graph = None  # the old graph is not kept alive while the new one is built
                self._graph = self._load_or_build(index, key, pause)
                self._key = key
            self._seen = (index, version)
            return self._graph

    def _load_or_build(self, index: SymbolIndex, key: str, pause: Pause) -> Graph:
        if not index.complete:
            # a partial index's graph (a build during the background fill) is never asked for again:
            # writing it cost a thread beside the build and pushed the whole tree's graphs out of KEEP;
            # and such a build asks a dozen of its symbol words
            return build_graph(index, lazy_words=True)
        if self._folder is None:
            return build_graph(index, pause=pause)
        graph = graph_store.load(self._folder, key)
        if graph is None:
            graph = build_graph(index, pause=pause)
            # written off the request path: the next restart loads it
            threading.Thread(target=graph_store.save, args=(self._folder, key, graph), daemon=True).start()
        return graph
