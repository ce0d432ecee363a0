"""The term index answers the content signal's question (how often each word
occurs, whole-word, ASCII case-insensitive, per file) as ripgrep did, and
stays right as files change between builds."""

from __future__ import annotations

import os
import random
import re
import time
from collections import Counter
from pathlib import Path

import pytest

from tooldeck.context import term_index as ti_mod
from tooldeck.context.builder import ContextBuilder
from tooldeck.context.term_index import TermIndex
from tooldeck.context.universe import Universe
from tooldeck.runtime import Runtime
from tooldeck.state.terms import DB_NAME
from tooldeck.workspace.ripgrep import MAX_PER_FILE, MAX_SEARCH_BYTES

WORDS = ["order", "node", "Query", "case-insensitive", "x.order", "runtime", "session_id", "pool"]
NOISE = ["ORDER", "Node", "orders", "node_id", "runtime·call", "sessión", "case insensitive", "(pool)", "naïve"]


def reference(text: str, terms: list[str]) -> Counter[str]:
    """The definition: whole-word, ASCII case-insensitive matches, capped per word."""
    out: Counter[str] = Counter()
    for t in terms:
        n = len(re.findall(rf"\b{re.escape(t)}\b", text, re.IGNORECASE | re.ASCII))
        if n:
            out[t] = min(n, MAX_PER_FILE)
    return out


def backdate(path: Path, seconds: float = 600.0) -> None:
    t = time.time() - seconds
    os.utime(path, (t, t))


def index_of(runtime: Runtime, uni: Universe, terms: TermIndex) -> list:  # type: ignore[type-arg]
    """Walk, and bring the index up to date (a first walk fills it in the background)."""
    walked = uni.walk(runtime.workspace)
    if not terms.refresh(runtime.workspace, walked):
        terms.wait()
        walked = uni.walk(runtime.workspace)
        assert terms.refresh(runtime.workspace, walked)
    return walked.files


def counted(runtime: Runtime, terms: TermIndex, files: list, asked: list[str]) -> dict[str, Counter[str]]:  # type: ignore[type-arg]
    found = terms.counts(runtime.workspace, files, asked)
    return {rel: c for _rid, search in found for rel, c in search.result().items()}


@pytest.fixture
def tree(root: Path) -> Path:
    rnd = random.Random(7)
    for i in range(25):
        lines = [" ".join(rnd.choice(WORDS + NOISE) for _ in range(7)) for _ in range(rnd.randint(3, 120))]
        (root / f"f{i}.txt").write_text("\n".join(lines) + "\n", encoding="utf-8")
        backdate(root / f"f{i}.txt")
    return root


def test_counts_equal_the_definition(runtime: Runtime, tree: Path, state_dir: Path) -> None:
    uni, terms = Universe(), TermIndex(state_dir)
    files = index_of(runtime, uni, terms)
    asked = ["order", "node", "query", "case-insensitive", "x.order", "runtime", "session_id", "sessi", "pool"]
    got = counted(runtime, terms, files, asked)
    want = {p.name: reference(p.read_text(encoding="utf-8"), asked) for p in tree.iterdir()}
    assert got == {rel: c for rel, c in want.items() if c}
    assert any(c["order"] == MAX_PER_FILE for c in got.values())  # the cap was reached somewhere


def test_changes_between_walks_reach_the_counts(runtime: Runtime, tree: Path, state_dir: Path) -> None:
    uni, terms = Universe(), TermIndex(state_dir)
    index_of(runtime, uni, terms)
    before = os.stat(tree / "f1.txt")
    body = (tree / "f1.txt").read_text(encoding="utf-8")
    (tree / "f1.txt").write_text("zebra " * (len(body.encode()) // 6) + " " * (len(body.encode()) % 6), "utf-8")
    os.utime(tree / "f1.txt", ns=(before.st_atime_ns, before.st_mtime_ns))  # a stamp cannot tell
    (tree / "f2.txt").unlink()
    (tree / "new.txt").write_text("zebra zebra\n")
    files = index_of(runtime, uni, terms)
    got = counted(runtime, terms, files, ["zebra", "order"])
    assert got["f1.txt"] == Counter({"zebra": min(len(body.encode()) // 6, MAX_PER_FILE)})
    assert got["new.txt"] == Counter({"zebra": 2}) and "f2.txt" not in got


def test_a_change_set_larger_than_a_batch_is_written_in_groups(
    runtime: Runtime, tree: Path, state_dir: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A refresh's rows are flushed every BATCH files inside its transaction
    (a checkout's thousands of changed files are not held in memory whole)."""
    uni, terms = Universe(), TermIndex(state_dir)
    index_of(runtime, uni, terms)
    monkeypatch.setattr(ti_mod, "BATCH", 2)
    for i in range(3, 10):  # 7 changed files: 3 full groups and a last one
        (tree / f"f{i}.txt").write_text(f"zebra {'zebra ' * i}\n", encoding="utf-8")
    files = index_of(runtime, uni, terms)
    got = counted(runtime, terms, files, ["zebra"])
    assert {rel: c["zebra"] for rel, c in got.items()} == {f"f{i}.txt": i + 1 for i in range(3, 10)}


def test_what_ripgrep_skips_is_not_indexed(runtime: Runtime, root: Path, state_dir: Path) -> None:
    (root / "text.py").write_text("needle\n")
    (root / "blob.bin").write_bytes(b"needle\0needle\n")
    (root / "huge.txt").write_bytes(b"needle\n" * (MAX_SEARCH_BYTES // 7 + 1))
    os.symlink("text.py", root / "link.py")
    uni, terms = Universe(), TermIndex(state_dir)
    files = index_of(runtime, uni, terms)
    assert set(counted(runtime, terms, files, ["needle"])) == {"text.py"}


def test_a_reopened_index_trusts_old_stamps(runtime: Runtime, tree: Path, state_dir: Path) -> None:
    """A new process reads again only the files whose stamps moved."""
    index_of(runtime, Universe(), TermIndex(state_dir))
    before = os.stat(tree / "f3.txt")
    old = (tree / "f3.txt").read_bytes()
    (tree / "f3.txt").write_bytes(b"z" * len(old))  # same size, stamp put back: only a read would tell
    os.utime(tree / "f3.txt", ns=(before.st_atime_ns, before.st_mtime_ns))
    (tree / "f4.txt").write_text("pool pool\n")  # a moved stamp
    terms = TermIndex(state_dir)
    files = index_of(runtime, Universe(), terms)
    got = counted(runtime, terms, files, ["pool", "order"])
    assert got["f3.txt"] == reference(old.decode(), ["pool", "order"])  # not read again
    assert got["f4.txt"] == Counter({"pool": 2})


def test_tombstones_past_the_limit_refill_the_index(
    runtime: Runtime, tree: Path, state_dir: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(ti_mod, "REFILL_MIN_DEAD", 5)
    uni, terms = Universe(), TermIndex(state_dir)
    index_of(runtime, uni, terms)
    for round_ in range(2):
        for i in range(10):
            (tree / f"f{i}.txt").write_text(f"pool {'order ' * round_}\n")
        index_of(runtime, uni, terms)
    assert terms._dead == 20  # a replaced document stays behind, unmapped
    for i in range(10):
        (tree / f"f{i}.txt").write_text("pool order order\n")
    walked = uni.walk(runtime.workspace)
    assert not terms.refresh(runtime.workspace, walked)  # 30 tombstones > 25 files: refilled
    files = index_of(runtime, uni, terms)
    assert terms._dead == 0
    assert counted(runtime, terms, files, ["order"])["f0.txt"] == Counter({"order": 2})
    terms = TermIndex(state_dir)  # and a new process finds the refilled index
    files = index_of(runtime, Universe(), terms)
    assert terms._dead == 0 and counted(runtime, terms, files, ["pool"])["f9.txt"] == Counter({"pool": 1})


def test_builds_use_the_index_once_it_is_filled(runtime: Runtime, tree: Path) -> None:
    (tree / "app.py").write_text("def main():\n    return 0\n")
    builder = ContextBuilder(runtime)
    builder.build("fix the order of nodes", 5000, apply=False)
    assert not builder.terms.ready_for(runtime.workspace) or builder.terms._filling is not None
    builder.terms.wait()  # the first build started the fill
    assert builder.terms.ready_for(runtime.workspace)
    (tree / "billing.py").write_text('def total(rows):\n    """The quarterly invoice sum."""\n    return sum(rows)\n')
    res = builder.build("the quarterly invoice is wrong", 5000, apply=False)
    assert res.selected[0].candidate.shown.endswith("billing.py")
    assert any("quarterly" in r and "invoice" in r for r in res.selected[0].candidate.reasons)


def test_a_broken_index_leaves_builds_on_ripgrep(runtime: Runtime, tree: Path, state_dir: Path) -> None:
    (state_dir / DB_NAME).mkdir()  # the database cannot be opened
    (tree / "billing.py").write_text("def quarterly_invoice_total(rows):\n    return sum(rows)\n")
    builder = ContextBuilder(runtime)
    for _ in range(2):
        res = builder.build("the quarterly invoice total is wrong", 5000, apply=False)
        assert res.selected[0].candidate.shown.endswith("billing.py")
    assert not builder.terms.ready_for(runtime.workspace)


def test_two_processes_share_one_index(runtime: Runtime, tree: Path, state_dir: Path) -> None:
    """Two indexes on one state directory (a server and a `tooldeck call`)
    number their documents from the database, and one that empties the index
    makes the other read it again."""
    uni_a, a = Universe(), TermIndex(state_dir)
    uni_b, b = Universe(), TermIndex(state_dir)
    index_of(runtime, uni_a, a)
    index_of(runtime, uni_b, b)
    (tree / "f1.txt").write_text("zebra\n")
    (tree / "f2.txt").write_text("yak yak\n")
    files_a = index_of(runtime, uni_a, a)  # numbers two new documents
    files_b = index_of(runtime, uni_b, b)  # and these two must not reuse them
    for terms, files in ((a, files_a), (b, files_b)):
        got = counted(runtime, terms, files, ["zebra", "yak"])
        assert got == {"f1.txt": Counter({"zebra": 1}), "f2.txt": Counter({"yak": 2})}
    a._empty(a._open())  # what a's fill does first when tombstones outnumber files
    (tree / "f3.txt").write_text("zebra zebra zebra\n")
    walked = uni_b.walk(runtime.workspace)
    assert not b.refresh(runtime.workspace, walked)  # b's map is void: it reads the index again
    files_b = index_of(runtime, uni_b, b)
    assert counted(runtime, b, files_b, ["zebra"]) == {"f1.txt": Counter({"zebra": 1}), "f3.txt": Counter({"zebra": 3})}
