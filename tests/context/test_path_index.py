"""Path scores from the kept path-word index equal the scores computed over
every path, and the index is rebuilt when the walk finds other files."""

from __future__ import annotations

import random
from pathlib import Path

from tooldeck.context.builder import ContextBuilder
from tooldeck.context.query import parse_query
from tooldeck.context.retrieve import FileInfo, Scores, path_word_index, score_paths
from tooldeck.context.universe import Universe
from tooldeck.runtime import Runtime

WORDS = ["http", "adapter", "retry", "pool", "session", "cache", "util", "core", "test", "docs", "parser", "token"]


def tree(seed: int, n: int = 300) -> list[FileInfo]:
    rnd = random.Random(seed)
    out: list[FileInfo] = []
    for i in range(n):
        parts = [rnd.choice(WORDS) + rnd.choice(["", "_" + rnd.choice(WORDS)]) for _ in range(rnd.randint(1, 4))]
        rel = "/".join(parts) + f"_{i}.py"
        out.append(FileInfo("/r/" + rel, "r", rel, rel, 100))
    return out


def scores(files: list[FileInfo], task: str, by_word: dict[str, list[str]] | None) -> list[tuple]:
    scored = Scores()
    score_paths(parse_query(task), files, scored, by_word)
    return [(k, s.path, tuple(s.reasons)) for k, s in scored.items()]  # insertion order included


def test_indexed_path_scores_equal_the_full_pass() -> None:
    for seed in range(5):
        files = tree(seed)
        by_word = path_word_index(files)
        for task in ("retry the http adapter pool", "session cache tokens", "parser", "nothing matches here"):
            assert scores(files, task, by_word) == scores(files, task, None)
    files = tree(7)
    named = files[3].rel
    # a task naming a path takes the full pass (its suffix test needs every path)
    assert scores(files, f"fix {named} retry", path_word_index(files)) == scores(files, f"fix {named} retry", None)
    assert any(s[0] == files[3].abs and "path named in the task" in s[2] for s in scores(files, f"fix {named}", None))


def test_walk_says_whether_the_files_are_the_same(runtime: Runtime, root: Path) -> None:
    (root / "a.py").write_text("x = 1\n")
    (root / "b.py").write_text("y = 2\n")
    uni = Universe()
    assert not uni.walk(runtime.workspace).same_files  # nothing to compare with
    assert uni.walk(runtime.workspace).same_files
    (root / "a.py").write_text("x = 10\n")  # an edit keeps the same files
    assert uni.walk(runtime.workspace).same_files
    (root / "c.py").write_text("z = 3\n")
    assert not uni.walk(runtime.workspace).same_files
    (root / "b.py").unlink()
    assert not uni.walk(runtime.workspace).same_files
    assert uni.walk(runtime.workspace).same_files


def test_builder_scores_a_new_file_by_its_path(runtime: Runtime, root: Path) -> None:
    (root / "app.py").write_text("def main():\n    return 0\n")
    builder = ContextBuilder(runtime)
    builder.build("ledger reconciliation", 5000, apply=False)
    (root / "ledger_reconcile.py").write_text("X = 1\n")  # matched by its path only
    res = builder.build("ledger reconciliation", 5000, apply=False)
    assert [c.candidate.shown for c in res.selected] == ["ledger_reconcile.py"]
