"""Personalised PageRank over the reference graph."""

import threading

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st

from tooldeck.codemap.index import FileRecord, SymbolIndex
from tooldeck.codemap.model import Symbol
from tooldeck.context.rank import GraphCache, build_graph, personalized_pagerank


def rec(rel: str, defines: list[str], uses: list[str], key: str = "k") -> FileRecord:
    symbols = [Symbol(n, "function", f"def {n}()", i + 1) for i, n in enumerate(defines)]
    return FileRecord("/r", "r", rel, rel, "python", key + rel, symbols, " " + " ".join(uses) + " ")


def index_of(*records: FileRecord) -> SymbolIndex:
    idx = SymbolIndex()
    for r in records:
        idx.put(r)
    return idx


def test_edges_go_from_user_to_definer_and_weakly_back():
    g = build_graph(index_of(rec("a.py", ["alpha"], ["beta"]), rec("b.py", ["beta"], [])))
    a, b = g.index_of["a.py"], g.index_of["b.py"]
    pairs = set(zip(g.src.tolist(), g.dst.tolist(), strict=True))
    assert (a, b) in pairs and (b, a) in pairs
    assert np.allclose(np.bincount(g.src, weights=g.weight, minlength=2), 1.0)


def test_rank_flows_from_seed_to_what_it_uses_not_to_unrelated_files():
    idx = index_of(
        rec("main.py", ["main"], ["parse_config", "connect"]),
        rec("config.py", ["parse_config"], []),
        rec("db.py", ["connect"], []),
        rec("unrelated.py", ["lonely"], []),
    )
    pr = personalized_pagerank(build_graph(idx), {"main.py": 1.0})
    assert pr["config.py"] > 0 and pr["db.py"] > 0
    assert pr.get("unrelated.py", 0.0) == 0.0
    assert pr["main.py"] > pr["config.py"]


def test_names_defined_everywhere_carry_no_edges():
    common = [rec(f"m{i}.py", ["run"], []) for i in range(10)]
    idx = index_of(rec("user.py", ["x1"], ["run"]), *common)
    assert build_graph(idx).edges == 0


def test_no_seed_gives_no_rank_and_cache_rebuilds_only_on_change():
    idx = index_of(rec("a.py", ["alpha"], ["beta"]), rec("b.py", ["beta"], []))
    cache = GraphCache()
    g1 = cache.get(idx)
    assert cache.get(idx) is g1
    assert personalized_pagerank(g1, {"missing.py": 1.0}) == {}
    idx.put(rec("b.py", ["beta", "gamma"], [], key="changed"))
    assert cache.get(idx) is not g1


def reference_edges(index: SymbolIndex) -> dict[tuple[str, str], float]:
    """The graph's definition, one edge at a time (the vectorised build must equal it)."""
    from tooldeck.context.rank import MAX_DEFINERS, REVERSE_WEIGHT

    records = sorted(index.records(), key=lambda r: r.shown)
    definers: dict[str, list[int]] = {}
    for i, r in enumerate(records):
        for name in {s.name for s in r.symbols if len(s.name) >= 3}:
            definers.setdefault(name, []).append(i)
    weights: dict[tuple[int, int], float] = {}
    for i, r in enumerate(records):
        for word in r.refs.split():
            owners = definers.get(word)
            if not owners or len(owners) > MAX_DEFINERS or i in owners:
                continue
            for j in owners:
                weights[(i, j)] = weights.get((i, j), 0.0) + 1.0 / len(owners)
                weights[(j, i)] = weights.get((j, i), 0.0) + REVERSE_WEIGHT / len(owners)
    return {(records[i].shown, records[j].shown): w for (i, j), w in weights.items()}


def random_records(seed: int, names: int, files: int, most_defined: int, most_used: int) -> list:
    """``files`` records, each defining up to ``most_defined`` and using up to
    ``most_used`` of ``names`` random names."""
    import random

    rnd = random.Random(seed)
    pool = [f"name{k}" for k in range(names)]
    return [
        rec(
            f"f{i:03}.py",
            rnd.sample(pool, rnd.randint(0, most_defined)),
            [rnd.choice(pool) for _ in range(rnd.randint(0, most_used))],
        )
        for i in range(files)
    ]


def test_vectorised_graph_equals_the_per_edge_definition():
    recs = random_records(7, names=60, files=120, most_defined=4, most_used=30)
    g = build_graph(index_of(*recs))
    ref = reference_edges(index_of(*recs))
    got = {(g.nodes[s], g.nodes[d]) for s, d in zip(g.src.tolist(), g.dst.tolist(), strict=True)}
    assert got == set(ref) and g.edges == len(ref) > 100
    out: dict[str, float] = {}
    for (s, _d), w in ref.items():
        out[s] = out.get(s, 0.0) + w
    for s, d, w in zip(g.src.tolist(), g.dst.tolist(), g.weight.tolist(), strict=True):
        assert w == ref[(g.nodes[s], g.nodes[d])] / out[g.nodes[s]]  # exactly: same sums in the same order
    assert g.symbol_words["name"] == tuple(sorted({r.shown for r in recs if r.symbols}))


def test_pagerank_on_the_matrix_equals_the_per_edge_power_iteration():
    """The CSR mat-vec gives the ranks a per-edge sum gives (same steps, same stop)."""
    from tooldeck.context.rank import ALPHA, ITERATIONS, TOLERANCE

    recs = random_records(11, names=80, files=150, most_defined=3, most_used=20)
    g = build_graph(index_of(*recs))
    edges = reference_edges(index_of(*recs))
    out: dict[str, float] = {}
    for (s, _d), w in edges.items():
        out[s] = out.get(s, 0.0) + w
    nodes = g.nodes
    seeds = {nodes[3]: 1.0, nodes[40]: 0.5, nodes[99]: 0.25}
    total = sum(seeds.values())
    p = {k: seeds.get(k, 0.0) / total for k in nodes}
    r = dict(p)
    for _ in range(ITERATIONS):
        spread = dict.fromkeys(nodes, 0.0)
        for (s, d), w in edges.items():
            spread[d] += r[s] * w / out[s]
        lost = sum(r[k] for k in nodes if k not in out)
        nxt = {k: ALPHA * (spread[k] + lost * p[k]) + (1 - ALPHA) * p[k] for k in nodes}
        done = sum(abs(nxt[k] - r[k]) for k in nodes) < TOLERANCE
        r = nxt
        if done:
            break
    got = personalized_pagerank(g, seeds)
    assert set(got) == {k for k, v in r.items() if v > 1e-12}
    assert all(abs(got[k] - r[k]) < 1e-12 for k in got)
    assert len(got) > 20  # the rank spread beyond the three seeds


def test_pair_sums_equal_a_dict_accumulation_in_occurrence_order():
    """Each occurrence ``i uses j`` adds its share to i→j and share × REVERSE_WEIGHT
    to j→i: the sums are the floats a dict accumulating in occurrence order
    gives, and the edges come in its first-seen order (pairs repeated both ways round)."""
    from tooldeck.context.rank import REVERSE_WEIGHT, _pair_sums

    rnd = np.random.default_rng(5)
    n = 40
    i = rnd.integers(0, n, size=6_000).astype(np.int32)
    j = ((i + rnd.integers(1, n, size=i.size)) % n).astype(np.int32)  # never i itself
    share = 1.0 / rnd.integers(1, 9, size=i.size)
    want: dict[tuple[int, int], float] = {}
    for a, b, s in zip(i.tolist(), j.tolist(), share.tolist(), strict=True):
        want[(a, b)] = want.get((a, b), 0.0) + s
        want[(b, a)] = want.get((b, a), 0.0) + s * REVERSE_WEIGHT
    src, dst, weight = _pair_sums(i, j, share, n)
    assert list(zip(src.tolist(), dst.tolist(), strict=True)) == list(want)
    assert weight.tolist() == list(want.values())  # exactly
    none = np.zeros(0, dtype=np.int32)
    assert [a.size for a in _pair_sums(none, none, np.zeros(0), n)] == [0, 0, 0]


def test_lazy_symbol_words_are_the_same_mapping():
    """A partial index's graph finds a word's files when asked: the same
    tuples as the graph of a complete index makes for every word."""
    from tooldeck.context.rank import LazySymbolWords, _symbol_words

    idx = index_of(
        rec("a.py", ["HTTPAdapter", "send_request", "max_retries"], ["Retry"]),
        rec("b.py", ["Retry", "RetryError", "is_retry_allowed"], []),
        rec("c.py", ["parse_http_date", "IOError2", "x1"], []),
        rec("d.py", ["ÉtéRetry", "get_adapter"], []),
    )
    records = sorted(idx.records(), key=lambda r: r.shown)
    nodes = [r.shown for r in records]
    definers: dict[str, list[int]] = {}
    for i, r in enumerate(records):
        for name in {n for n in r.names if len(n) >= 3}:
            definers.setdefault(name, []).append(i)
    full = _symbol_words(definers, nodes)
    lazy = LazySymbolWords(definers, nodes)
    for word in [*full, "missing", "ret", "try", "http", "error2"]:
        assert lazy.get(word) == full.get(word), word
        assert (word in lazy) == (word in full)
    assert dict(lazy) == full and len(lazy) == len(full)
    assert full["retry"] == ("b.py", "d.py") and lazy["adapter"] == ("a.py", "d.py")


@settings(max_examples=200, deadline=None)
@given(
    names=st.lists(
        st.text(alphabet=st.sampled_from("abreyt_XRİ1"), min_size=3, max_size=9), min_size=1, max_size=12, unique=True
    ),
    words=st.lists(st.text(alphabet=st.sampled_from("abrety1"), min_size=0, max_size=5), max_size=6),
)
def test_lazy_symbol_words_find_a_word_only_inside_one_name(names: list[str], words: list[str]) -> None:
    """The lazy mapping looks for a word in all the names lowercased and
    joined: a match across two names (``xxre`` + ``tryx``) is no match, a
    name whose length changes when lowercased (``İ``) shifts nothing, and
    every word gets the eager mapping's files."""
    from tooldeck.context.rank import LazySymbolWords, _symbol_words

    nodes = [f"f{i}.py" for i in range(len(names))]
    definers = {name: [i] for i, name in enumerate(names)}
    full = _symbol_words(definers, nodes)
    lazy = LazySymbolWords(definers, nodes)
    for word in [*words, *full]:
        assert lazy.get(word) == full.get(word), word
    straddle = LazySymbolWords({"xxre": [0], "tryx": [1]}, ["a.py", "b.py"])
    assert "retry" not in straddle and "xxre" in straddle


def test_a_partial_index_gets_lazy_symbol_words_and_a_complete_one_all():
    from tooldeck.context.rank import LazySymbolWords

    idx = index_of(rec("a.py", ["alpha"], ["beta"]), rec("b.py", ["beta"], []))
    assert isinstance(GraphCache().get(idx).symbol_words, LazySymbolWords)
    idx.complete = True
    idx.put(rec("c.py", ["gamma"], []))
    assert isinstance(GraphCache().get(idx).symbol_words, dict)


def test_a_request_waiting_for_the_graph_ends_the_builders_pause() -> None:
    """The fill's thread builds the whole tree's graph under the cache's lock
    and pauses while a request is served. A request that needs the graph
    meanwhile waits for that lock, so the pause must end when it does (else
    each pause point would wait out its bound, 10 s, one after another)."""
    import time

    from tooldeck.core.foreground import serving, yield_to_requests

    idx = index_of(*(rec(f"m{i}.py", [f"name{i}"], [f"name{i + 1}"]) for i in range(50)))
    idx.complete = True
    cache = GraphCache()
    pausing = threading.Event()
    got: list[float] = []

    def pause() -> None:  # what the fill passes: its own yield, urgent once the graph is wanted
        pausing.set()
        yield_to_requests(cache.wanted)

    builder = threading.Thread(target=cache.get, args=(idx,), kwargs={"pause": pause})
    with serving():  # a request in flight: the builder pauses at its first step
        builder.start()
        assert pausing.wait(5)
        start = time.monotonic()
        graph = cache.get(idx)  # the request needs the graph the builder is making
        got.append(time.monotonic() - start)
    builder.join(5)
    assert not builder.is_alive() and len(graph.nodes) == 50
    assert got[0] < 2.0, f"the request waited {got[0]:.1f} s for a paused build"
    assert not cache.wanted()
