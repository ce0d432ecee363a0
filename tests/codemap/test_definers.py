"""The name → definers map kept a change at a time gives what a rebuild gives.

A background fill puts records between a build's queries; the map is
updated from the queued changes instead of rebuilt (codemap/definers.py).
Random puts, replacements and removals, with a query after each few, must
leave exactly the map built from scratch: the same names, the same definers
in the same (display) order, a file listed once per definition.
"""

from __future__ import annotations

import random

from tooldeck.codemap.definers import DefinersMap, as_tuple
from tooldeck.codemap.index import FileRecord, SymbolIndex
from tooldeck.codemap.model import Symbol

NAMES = ["__init__", "run", "main", "get", "Server", "User", "parse", "start", "close", "Config"]


def _record(rng: random.Random, rel: str, version: int) -> FileRecord:
    names = rng.choices(NAMES, k=rng.randint(0, 5))  # repeats: a file defining a name twice
    symbols = [Symbol(n, "function", f"def {n}()", i + 1) for i, n in enumerate(names)]
    return FileRecord("/r", "r", rel, f"pkg/{rel}", "python", f"k{version}", symbols, " ")


def _from_scratch(index: SymbolIndex) -> dict[str, tuple[str, ...]]:
    fresh = DefinersMap()
    built = fresh.current(index.records(), len(index))
    return {n: tuple(r.shown for r in as_tuple(d)) for n, d in built.items()}


def _kept(index: SymbolIndex) -> dict[str, tuple[str, ...]]:
    return {n: tuple(r.shown for r in index._definers(n)) for n in index.names()}


def test_changes_applied_one_by_one_match_a_rebuild() -> None:
    rng = random.Random(35)
    index = SymbolIndex()
    rels = [f"m{i:03d}.py" for i in range(60)]
    for i, rel in enumerate(rels[:40]):
        index.put(_record(rng, rel, i))
    assert _kept(index) == _from_scratch(index)  # the first query builds the map
    applied = 0
    for step in range(400):
        rel = rng.choice(rels)
        if rng.random() < 0.25:
            index.remove("/r", rel)
        else:
            index.put(_record(rng, rel, 1000 + step))
        if step % 7 == 0:
            pending = len(index._defs._changes)
            assert _kept(index) == _from_scratch(index), f"after step {step}"
            applied += pending > 0 and pending * 2 <= len(index)
    index.retain({("/r", r) for r in rels[::2]})
    assert _kept(index) == _from_scratch(index)
    assert applied > 20  # the incremental path ran, not only rebuilds


def test_many_changes_at_once_rebuild() -> None:
    rng = random.Random(7)
    index = SymbolIndex()
    index.put(_record(rng, "a.py", 0))
    index.names()
    for i in range(50):
        index.put(_record(rng, f"b{i}.py", i))
    assert _kept(index) == _from_scratch(index)
    assert not index._defs._changes


def test_a_long_run_of_changes_is_applied_by_the_thread_making_them() -> None:
    rng = random.Random(11)
    index = SymbolIndex()
    for i in range(1000):
        index.put(_record(rng, f"f{i:04d}.py", i))
    index.names()
    for i in range(300):  # a fill's stream of puts: applied at 256, 44 left for the query
        index.put(_record(rng, f"f{rng.randrange(1200):04d}.py", 5000 + i))
    assert 0 < len(index._defs._changes) < 256
    assert _kept(index) == _from_scratch(index)


def test_a_query_reading_the_whole_map_is_safe_beside_a_thread_putting_records() -> None:
    """The map is changed in place by the putting thread (a fill's): a caller
    walking all its names (``similar``, ``names``) must not see it change
    under it ("dictionary changed size during iteration")."""
    import threading

    rng = random.Random(3)
    index = SymbolIndex()
    for i in range(3000):
        index.put(_record(rng, f"base{i:05d}.py", i))
    index.names()
    errors: list[BaseException] = []
    done = threading.Event()

    def putter() -> None:
        try:
            for i in range(20000):
                sym = [Symbol(f"fresh_{i}_{k}", "function", "def f()", k + 1) for k in range(8)]
                index.put(FileRecord("/r", "r", f"new{i}.py", f"pkg/new{i}.py", "python", f"n{i}", sym, " "))
        except BaseException as exc:  # reported by the main thread
            errors.append(exc)
        finally:
            done.set()

    t = threading.Thread(target=putter)
    t.start()
    try:
        while not done.is_set():
            index.similar("fresh")
            index.names()
    except RuntimeError as exc:
        errors.append(exc)
    t.join()
    assert not errors, errors
    assert _kept(index) == _from_scratch(index)
