"""The reference graph is kept on disk under its index fingerprint: a
restarted server (a new ContextBuilder on the same state directory) loads
the very graph a rebuild would make instead of building it (issue 30: a
restart costs little); a changed index gets a new graph."""

from __future__ import annotations

import time
from pathlib import Path

import numpy as np
import pytest

from tooldeck.context import graph_store, rank
from tooldeck.context.builder import ContextBuilder
from tooldeck.runtime import Runtime


def _tree(root: Path) -> None:
    for i in range(30):
        uses = f"    return invoice_total_{(i + 1) % 30}(cart) + shared_rate_{i % 4}()\n"
        (root / f"billing_{i}.py").write_text(
            f"def invoice_total_{i}(cart):\n{uses}\n\ndef shared_rate_{i % 4}():\n    return 1\n"
        )


def _graph_files(runtime: Runtime) -> list[Path]:
    deadline = time.monotonic() + 10
    folder = Path(runtime.state_dir) / "graphs"
    while time.monotonic() < deadline:  # written by a background thread
        files = sorted(folder.glob("graph-*.npz")) if folder.is_dir() else []
        if files:
            return files
        time.sleep(0.05)
    return []


def test_a_restart_loads_the_graph_a_rebuild_would_make(
    runtime: Runtime, root: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    _tree(root)
    first = ContextBuilder(runtime)
    first.build("invoice total for a cart", 20000, apply=False)
    built = first._last_graph
    assert built is not None and built.edges > 0
    assert len(_graph_files(runtime)) == 1

    def no_build(index):  # type: ignore[no-untyped-def]
        raise AssertionError("the graph was built again")

    monkeypatch.setattr(rank, "build_graph", no_build)
    again = ContextBuilder(runtime)  # a restarted server
    again.build("invoice total for a cart", 20000, apply=False)
    loaded = again._last_graph
    assert loaded is not None and loaded is not built
    assert loaded.nodes == built.nodes and loaded.index_of == built.index_of
    assert loaded.symbol_words == built.symbol_words
    assert np.array_equal(loaded.dangling, built.dangling)
    for field in ("data", "indices", "indptr"):
        assert np.array_equal(getattr(loaded.matrix, field), getattr(built.matrix, field))
    assert loaded.matrix.shape == built.matrix.shape

    monkeypatch.undo()
    (root / "billing_new.py").write_text("def refund_total(cart):\n    return invoice_total_1(cart)\n")
    changed = ContextBuilder(runtime)
    changed.build("invoice total for a cart", 20000, apply=False)
    assert "billing_new.py" in changed._last_graph.nodes  # type: ignore[union-attr]


def test_an_unreadable_graph_file_is_ignored(tmp_path: Path) -> None:
    (tmp_path / f"graph-v{graph_store.FORMAT}-abc.npz").write_bytes(b"not a zip")
    assert graph_store.load(tmp_path, "abc") is None
    assert graph_store.load(tmp_path, "missing") is None


@pytest.mark.parametrize("damage", ["empty", "truncated", "flipped", "inconsistent"])
def test_a_damaged_graph_file_is_removed_and_rebuilt(runtime: Runtime, root: Path, damage: str) -> None:
    """An empty, truncated or corrupted file (a power cut, a full disk) or
    arrays that do not fit together is dropped, not raised at every build."""
    _tree(root)
    ContextBuilder(runtime).build("invoice total", 20000, apply=False)
    path = _graph_files(runtime)[0]
    raw = path.read_bytes()
    if damage == "empty":
        path.write_bytes(b"")
    elif damage == "truncated":
        path.write_bytes(raw[: len(raw) // 2])
    elif damage == "flipped":
        path.write_bytes(raw[:200] + bytes([raw[200] ^ 0xFF]) + raw[201:])
    else:
        with np.load(path) as z:
            arrays = {k: z[k] for k in z.files}
        arrays["owners"] = np.asarray([10**6], dtype=np.int32)
        arrays["word_ptr"] = np.asarray([0, 1], dtype=np.int64)
        with open(path, "wb") as fh:
            np.savez(fh, **arrays)
    key = path.name.removeprefix(f"graph-v{graph_store.FORMAT}-").removesuffix(".npz")
    assert graph_store.load(path.parent, key) is None
    assert not path.exists()
    again = ContextBuilder(runtime)  # a restarted server: the graph is rebuilt, no error
    again.build("invoice total", 20000, apply=False)
    assert again._last_graph is not None and again._last_graph.edges > 0


def test_the_graph_of_a_partial_index_is_not_written(tmp_path: Path) -> None:
    """A build during the background fill ranks with a graph of the partial
    index: never asked for again, so not written (it cost a thread beside the
    build and pushed the whole tree's graphs out of the kept ones)."""
    from tests.context.test_rank import index_of, rec

    idx = index_of(rec("a.py", ["alpha"], ["beta"]), rec("b.py", ["beta"], []))
    cache = rank.GraphCache(tmp_path)
    assert not idx.complete
    assert cache.get(idx).edges > 0
    time.sleep(0.3)  # the write, if there were one, runs in a thread
    assert not list(tmp_path.glob("graph-*.npz"))
    idx.complete = True
    idx.put(rec("c.py", ["gamma"], ["alpha"]))
    assert cache.get(idx).edges > 0
    assert len(_graph_files_in(tmp_path)) == 1


def _graph_files_in(folder: Path) -> list[Path]:
    deadline = time.monotonic() + 10
    while time.monotonic() < deadline:
        files = sorted(folder.glob("graph-*.npz"))
        if files:
            return files
        time.sleep(0.05)
    return []
