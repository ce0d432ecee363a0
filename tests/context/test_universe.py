"""One walk per build, and the files it finds changed since the last one: the
symbol index is refreshed for those only, and still sees every edit."""

from __future__ import annotations

import os
import time
from pathlib import Path

from tooldeck.context.builder import ContextBuilder
from tooldeck.context.universe import RACY_NS, Universe
from tooldeck.runtime import Runtime


def age(path: Path, seconds: float = 60.0) -> None:
    """Backdate a file so its stamp is trusted (older than the racy margin)."""
    t = time.time() - seconds
    os.utime(path, (t, t))


def changed_rels(walked) -> set[str]:  # type: ignore[no-untyped-def]
    return {rel for _root, rel in walked.changed}


def test_first_walk_has_nothing_to_compare_then_only_changes_are_named(runtime: Runtime, root: Path) -> None:
    for name in ("a.py", "b.py", "c.py"):
        (root / name).write_text(f"def {name[0]}():\n    pass\n")
        age(root / name)
    uni = Universe()
    first = uni.walk(runtime.workspace)
    assert first.changed is None
    assert sorted(f.rel for f in first.files) == ["a.py", "b.py", "c.py"]
    assert changed_rels(uni.walk(runtime.workspace)) == set()

    (root / "a.py").write_text("def a():\n    return 1\n")  # edited
    age(root / "a.py", 30)
    (root / "b.py").unlink()  # removed
    (root / "d.py").write_text("x = 1\n")  # added
    age(root / "d.py")
    walked = uni.walk(runtime.workspace)
    assert changed_rels(walked) == {"a.py", "b.py", "d.py"}
    assert sorted(f.rel for f in walked.files) == ["a.py", "c.py", "d.py"]
    assert changed_rels(uni.walk(runtime.workspace)) == set()


def test_a_file_as_new_as_the_last_walk_is_checked_again(runtime: Runtime, root: Path) -> None:
    """Same size, same mtime tick: its stamp cannot prove it unchanged yet
    (where no watch reports the changes, so every build walks)."""
    (root / "fresh.py").write_text("x = 1\n")
    uni = Universe(watch=False)
    uni.walk(runtime.workspace)
    assert changed_rels(uni.walk(runtime.workspace)) == {"fresh.py"}
    # once the stamp is older than the margin before the previous walk, it is trusted
    t = (time.time_ns() - 3 * RACY_NS) / 1e9
    os.utime(root / "fresh.py", (t, t))
    uni.walk(runtime.workspace)
    assert changed_rels(uni.walk(runtime.workspace)) == set()


def test_builder_sees_a_definition_added_between_builds(runtime: Runtime, root: Path) -> None:
    (root / "app.py").write_text("def main():\n    return 0\n")
    (root / "util.py").write_text("def helper():\n    return 1\n")
    for p in root.iterdir():
        age(p)
    builder = ContextBuilder(runtime)
    builder.build("make main faster", 5000, apply=False)
    # same size and an old mtime would hide an edit from a stamp check: this one changes both
    (root / "util.py").write_text("def compute_quarterly_totals(rows):\n    return sum(rows)\n")
    age(root / "util.py", 10)
    res = builder.build("compute_quarterly_totals returns the wrong sum", 5000, apply=False)
    top = res.selected[0].candidate
    assert top.shown.endswith("util.py")
    assert any("defines `compute_quarterly_totals`" in r for r in top.reasons)
    # and a removed file leaves the index
    (root / "util.py").unlink()
    res = builder.build("compute_quarterly_totals returns the wrong sum", 5000, apply=False)
    assert all(not c.candidate.shown.endswith("util.py") for c in res.choices)


def test_build_reports_wall_and_thread_cpu_per_stage(runtime: Runtime, root: Path) -> None:
    (root / "app.py").write_text("def main():\n    return 0\n")
    res = ContextBuilder(runtime).build("make main faster", 5000, apply=True)
    for stage in ("walk", "index", "retrieve", "rank", "measure", "fit", "apply", "total"):
        assert res.timings[stage] >= 0 and res.cpu[stage] >= 0
    assert res.cpu["total"] >= res.cpu["walk"]
