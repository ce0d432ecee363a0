"""A large tree's first build parses only its top candidates and fills the
symbol index in the background: the build is useful before the index is
complete, the fill completes and later builds use it, and a file changed
while the fill runs is never left stale in the index."""

from __future__ import annotations

import threading
import time
from collections.abc import Callable
from pathlib import Path

import pytest

from tooldeck.codemap import fill as fill_mod
from tooldeck.codemap.service import codemap_service
from tooldeck.context import partial as partial_mod
from tooldeck.context.builder import ContextBuilder
from tooldeck.runtime import Runtime

from .test_universe import age

# the task names the ledger and its reconcile function; ledger.py calls a helper in a
# file that shares no word with the task: only the reference graph can bring it in
LEDGER = '''"""The ledger: reconcile entries against the bank statement."""
from audit.digest import fold_checksum


def reconcile_ledger(entries, statement):
    """Reconcile the ledger entries with the statement."""
    return fold_checksum(entries) == fold_checksum(statement)
'''
DIGEST = '''"""Folding helpers."""


def fold_checksum(rows):
    total = 0
    for r in rows:
        total = (total * 31 + hash(r)) & 0xFFFF
    return total
'''
TASK = "reconcile_ledger reports a mismatch for a balanced ledger statement"


@pytest.fixture
def tree(root: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A "large" tree: the inline limit is 0 and a cold build parses 3 files."""
    monkeypatch.setenv("TOOLDECK_CONTEXT_INLINE_INDEX", "0")
    monkeypatch.setenv("TOOLDECK_CODEMAP_WORKERS", "0")  # parse in process: fast tests
    monkeypatch.setattr(partial_mod, "COLD_PARSE", 3)
    monkeypatch.setattr(partial_mod, "COLD_NAMING", 0)
    monkeypatch.setattr(partial_mod, "COLD_IMPORTED", 0)
    (root / "books").mkdir()
    (root / "audit").mkdir()
    (root / "books" / "ledger.py").write_text(LEDGER)
    (root / "audit" / "digest.py").write_text(DIGEST)
    for i in range(12):  # decoys with a lexical hit each, and unrelated files
        note = f'"""statement number {i}."""\n\ndef note_{i}():\n    return {i}\n'
        (root / "books" / f"note_{i}.py").write_text(note)
        (root / f"misc_{i}.py").write_text(f"def misc_{i}(x):\n    return x * {i}\n")
    for p in root.rglob("*.py"):
        age(p)
    return root


@pytest.fixture
def runtime(runtime: Runtime) -> Runtime:
    """Started as a server starts it (the stored workspace restored before any
    build: entering it later would swap the workspace and drop the index)."""
    return runtime.start()


@pytest.fixture
def gate(monkeypatch: pytest.MonkeyPatch) -> threading.Event:
    """Hold the background fill before it starts (released by the test)."""
    go = threading.Event()
    real = fill_mod.IndexFill._fill

    def held(self: fill_mod.IndexFill) -> None:
        assert go.wait(30)
        real(self)

    monkeypatch.setattr(fill_mod.IndexFill, "_fill", held)
    return go


def test_cold_build_is_useful_before_the_full_index_exists(runtime: Runtime, tree: Path, gate: threading.Event) -> None:
    svc = codemap_service(runtime)
    res = ContextBuilder(runtime).build(TASK, 8000, apply=False)
    try:
        assert res.selected[0].candidate.shown == "books/ledger.py"
        assert any("defines `reconcile_ledger`" in r for r in res.selected[0].candidate.reasons)
        idx = svc.partial_index([])
        assert not idx.complete and len(idx) == 3  # only the top candidates were indexed
        assert svc.parse_count == 13  # ...and the codemaps of the files with a lexical hit, to measure them
        assert any("background" in n for n in res.notes)
        assert svc.filling is not None and not svc.filling.finished
    finally:
        gate.set()
    assert svc.filling is not None and svc.filling.wait(30)


def test_the_fill_completes_and_later_builds_follow_references(
    runtime: Runtime, tree: Path, gate: threading.Event
) -> None:
    svc = codemap_service(runtime)
    builder = ContextBuilder(runtime)
    cold = builder.build(TASK, 8000, apply=False)
    assert "audit/digest.py" not in {c.candidate.shown for c in cold.selected}  # not parsed: no edge to it yet
    gate.set()
    fill = svc.filling
    assert fill is not None and fill.wait(30) and not fill.failed
    idx = svc.partial_index([])
    assert idx.complete and len(idx) == 26 and fill.done == fill.total == 26
    prepared = builder.graphs.get(idx)  # built by the fill's thread once the index was complete
    assert prepared.nodes == sorted(r.shown for r in idx.records())
    warm = builder.build(TASK, 8000, apply=False)
    assert builder._last_graph is prepared  # the build did not rebuild it
    assert not warm.notes
    chosen = {c.candidate.shown: c for c in warm.selected}
    assert "audit/digest.py" in chosen  # brought in by the reference graph over the whole tree
    assert any("linked by references" in r for r in chosen["audit/digest.py"].candidate.reasons)
    assert svc.index() is idx  # a full index request finds it complete: no second index


def test_a_file_changed_while_the_fill_parses_it_is_not_left_stale(
    runtime: Runtime, tree: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The fill reads misc_0.py, then (held at its parse) a build sees the file
    changed and indexes the new content; the fill's older parse must not win."""
    reached, go = threading.Event(), threading.Event()
    real_submit = fill_mod.LowPriorityPool.submit

    def held_submit(self, items):  # type: ignore[no-untyped-def]
        reached.set()
        assert go.wait(30)
        return real_submit(self, items)

    monkeypatch.setattr(fill_mod.LowPriorityPool, "submit", held_submit)
    svc = codemap_service(runtime)
    builder = ContextBuilder(runtime)
    builder.build(TASK, 8000, apply=False)
    assert reached.wait(30)  # the fill has read every file of its first slice, parse pending
    target = tree / "misc_0.py"
    target.write_text("def renamed_while_filling(x):\n    return x\n")
    age(target, 30)
    builder.build("renamed_while_filling", 8000, apply=False)  # its walk sees the change: refreshed now
    go.set()
    fill = svc.filling
    assert fill is not None and fill.wait(30) and not fill.failed
    idx = svc.partial_index([])
    assert idx.complete
    assert [d.path for d in idx.definitions("renamed_while_filling")] == ["misc_0.py"]
    assert idx.definitions("misc_0") == []  # the content the fill read first is not what the index holds
    res = builder.build("renamed_while_filling", 8000, apply=False)
    assert res.selected[0].candidate.shown == "misc_0.py"


def test_a_cold_build_also_parses_what_its_best_candidates_import(
    runtime: Runtime, tree: Path, gate: threading.Event, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(partial_mod, "COLD_IMPORTED", 200)
    svc = codemap_service(runtime)
    try:
        res = ContextBuilder(runtime).build(TASK, 8000, apply=False)
        idx = svc.partial_index([])
        assert not idx.complete and len(idx) == 4  # the three best, and audit/digest.py that ledger.py imports
        assert "audit/digest.py" in {c.candidate.shown for c in res.selected}  # the graph reaches it already
    finally:
        gate.set()


def test_a_file_removed_during_the_fill_leaves_the_index(runtime: Runtime, tree: Path, gate: threading.Event) -> None:
    svc = codemap_service(runtime)
    builder = ContextBuilder(runtime)
    builder.build(TASK, 8000, apply=False)
    (tree / "misc_3.py").unlink()
    gate.set()
    fill = svc.filling
    assert fill is not None and fill.wait(30)
    builder.build(TASK, 8000, apply=False)
    assert svc.partial_index([]).definitions("misc_3") == []


def test_a_workspace_change_stops_the_fill(runtime: Runtime, tree: Path, gate: threading.Event, tmp_path: Path) -> None:
    svc = codemap_service(runtime)
    ContextBuilder(runtime).build(TASK, 8000, apply=False)
    fill = svc.filling
    assert fill is not None
    other = tmp_path / "other"
    other.mkdir()
    from tooldeck.workspace.roots import Workspace

    runtime.replace_workspace(Workspace.from_dirs([str(other)]))
    gate.set()
    assert fill.wait(30)
    assert not fill.index.complete  # abandoned: it belonged to the old workspace
    assert svc.filling is None


def test_small_trees_are_indexed_whole_before_ranking(runtime: Runtime, tree: Path, monkeypatch) -> None:
    monkeypatch.setenv("TOOLDECK_CONTEXT_INLINE_INDEX", "1000")
    svc = codemap_service(runtime)
    res = ContextBuilder(runtime).build(TASK, 8000, apply=False)
    assert svc.filling is None and svc.index_complete and not res.notes
    assert "audit/digest.py" in {c.candidate.shown for c in res.selected}


@pytest.mark.slow
def test_the_fill_runs_in_niced_worker_processes(runtime: Runtime, tree: Path, monkeypatch) -> None:
    monkeypatch.setenv("TOOLDECK_CODEMAP_WORKERS", "2")
    svc = codemap_service(runtime)
    ContextBuilder(runtime).build(TASK, 8000, apply=False)
    fill = svc.filling
    assert fill is not None and fill.wait(60) and not fill.failed
    assert svc.index_complete and fill.pool._executor is None  # workers stopped once done


def test_a_build_during_the_fill_parses_only_its_best_candidates_and_builds_no_graph(
    runtime: Runtime, tree: Path, gate: threading.Event, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A second question while the fill runs: its few best candidates are
    indexed in its own thread, no graph of a partial index past
    ``FILL_GRAPH_MAX`` files is built for it (it ranks with the last one), and
    once the fill completes builds rank with the whole tree's graph."""
    monkeypatch.setattr(partial_mod, "FILL_PARSE", 1)
    monkeypatch.setattr(partial_mod, "FILL_NAMING", 0)
    monkeypatch.setattr(partial_mod, "FILL_GRAPH_MAX", 3)
    svc = codemap_service(runtime)
    builder = ContextBuilder(runtime)
    builder.build(TASK, 8000, apply=False)
    first_graph = builder._last_graph
    assert first_graph is not None and len(svc.partial_index([])) == 3
    second = builder.build("fold_checksum of the rows", 8000, apply=False)
    try:
        idx = svc.partial_index([])
        assert not idx.complete and len(idx) == 4  # audit/digest.py, its best candidate, added; nothing else
        assert [d.path for d in idx.definitions("fold_checksum")] == ["audit/digest.py"]
        assert builder._last_graph is first_graph  # no graph of the partial index was built for it
        chosen = {c.candidate.shown: c for c in second.selected}
        assert any("defines `fold_checksum`" in r for r in chosen["audit/digest.py"].candidate.reasons)
        assert any("background" in n for n in second.notes)
    finally:
        gate.set()
    fill = svc.filling
    assert fill is not None and fill.wait(30) and not fill.failed
    warm = builder.build(TASK, 8000, apply=False)
    assert builder._last_graph is not first_graph and not warm.notes
    assert "audit/digest.py" in {c.candidate.shown for c in warm.selected}


def test_the_fill_pauses_while_a_build_is_served(runtime: Runtime, tree: Path, gate: threading.Event) -> None:
    from tooldeck.core import foreground

    svc = codemap_service(runtime)
    builder = ContextBuilder(runtime)
    builder.build(TASK, 8000, apply=False)
    fill = svc.filling
    assert fill is not None
    with foreground.serving():  # a build in flight (held open here)
        gate.set()
        for _ in range(3000):
            if fill.yielding:
                break
            threading.Event().wait(0.01)
        assert fill.yielding and foreground.waiting() >= 1 and not fill.finished  # (the term index's fill may wait too)
        assert len(svc.partial_index([])) == 3  # it read nothing while paused
        assert fill.wait(30) and not fill.failed  # a caller waiting for it (inside a request) ends the pause
    assert svc.index_complete and fill.paused > 0


def test_a_build_during_the_fill_graphs_a_small_partial_index(
    runtime: Runtime, tree: Path, gate: threading.Event, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(partial_mod, "FILL_PARSE", 1)
    monkeypatch.setattr(partial_mod, "FILL_NAMING", 0)
    builder = ContextBuilder(runtime)
    try:
        builder.build(TASK, 8000, apply=False)
        first_graph = builder._last_graph
        builder.build("fold_checksum of the rows", 8000, apply=False)
        graph = builder._last_graph
        assert graph is not None and graph is not first_graph
        assert "audit/digest.py" in graph.nodes  # the partial index's graph, with this build's file in it
    finally:
        gate.set()


def test_the_symbol_fill_waits_for_the_term_index_fill(
    runtime: Runtime, tree: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Builds during the fills count words from the term index once it is
    complete (no ripgrep pass), so it is filled first: the symbol fill's first
    file comes after it, even when the term fill is slow."""
    from tooldeck.context import term_index as term_mod

    real_fill, real_first = term_mod.TermIndex._fill, fill_mod.IndexFill._fill
    seen: dict[str, float] = {}

    def slow_terms(self: term_mod.TermIndex, *args: object) -> None:
        time.sleep(0.5)
        real_fill(self, *args)  # type: ignore[arg-type]
        seen["terms done"] = time.monotonic()

    def symbols(self: fill_mod.IndexFill) -> bool:
        seen["symbols start"] = time.monotonic()
        return real_first(self)

    monkeypatch.setattr(term_mod.TermIndex, "_fill", slow_terms)
    monkeypatch.setattr(fill_mod.IndexFill, "_fill", symbols)
    builder = ContextBuilder(runtime)
    builder.build(TASK, 8000, apply=False)
    fill = codemap_service(runtime).filling
    assert fill is not None
    deadline = time.monotonic() + 30
    while not fill.finished and time.monotonic() < deadline:  # not fill.wait(): that stops the waiting
        time.sleep(0.02)
    assert fill.finished and not fill.failed
    assert seen["symbols start"] >= seen["terms done"]
    assert builder.terms.ready_for(runtime.workspace)


def test_the_whole_trees_graph_pauses_for_requests(
    runtime: Runtime, tree: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The graph built in the fill's thread when it completes calls the fill's
    ``pause`` between its steps and every PAUSE_EVERY records (it sleeps there
    while a build is served: the GIL is the build's)."""
    from tooldeck.context import rank as rank_mod

    monkeypatch.setattr(rank_mod, "PAUSE_EVERY", 4)
    paused: list[bool] = []
    asks: list[bool] = []
    real = fill_mod.IndexFill.pause

    def counted(self: fill_mod.IndexFill, wanted: Callable[[], bool] = lambda: False) -> None:
        paused.append(self.done == self.total)  # called once the fill's files are all in
        asks.append(wanted == builder.graphs.wanted)  # a request waiting for this graph ends the pause
        real(self, wanted)

    monkeypatch.setattr(fill_mod.IndexFill, "pause", counted)
    builder = ContextBuilder(runtime)
    builder.build(TASK, 8000, apply=False)
    fill = codemap_service(runtime).filling
    assert fill is not None and fill.wait(30) and not fill.failed
    # 26 records: 7 pauses in the loops over records (definers, occurrences), 3 between steps,
    # and those over the names (at least one, and one after)
    assert len(paused) >= 12 and all(paused)
    assert all(asks)
    assert builder.graphs.get(fill.index).nodes == sorted(r.shown for r in fill.index.records())
