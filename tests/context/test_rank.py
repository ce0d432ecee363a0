"""Personalised PageRank over the reference graph."""

import numpy as np

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
