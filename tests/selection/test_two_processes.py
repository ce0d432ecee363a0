"""Two real processes hammering one state directory: no lost update, no
corruption, one launch workspace."""

from __future__ import annotations

import os
import sqlite3
import subprocess
import sys
import textwrap
import time
from pathlib import Path

from tooldeck.catalog import build_toolbox
from tooldeck.runtime import Runtime
from tooldeck.selection.service import selection_service

ROUNDS = 40

WORKER = textwrap.dedent(
    """
    import os, sys, time
    from tooldeck.runtime import Runtime
    from tooldeck.selection.service import Item, selection_service

    root, state, name, rounds, go = sys.argv[1], sys.argv[2], sys.argv[3], int(sys.argv[4]), sys.argv[5]
    while not os.path.exists(go):
        time.sleep(0.005)
    rt = Runtime.for_dirs([root], state_dir=state)
    svc = selection_service(rt)
    for i in range(rounds):
        svc.add([Item(f"{name}/f{i:03d}.txt")])
        svc.append_prompt(f"{name}-{i}")
        if i % 10 == 9:
            svc.remove([f"{name}/f{i - 5:03d}.txt"])
    print("done", name, svc.conflicts)
    """
)


def test_two_processes_writing_selections_concurrently(tmp_path: Path, root: Path, state_dir: Path) -> None:
    for name in ("a", "b"):
        (root / name).mkdir()
        for i in range(ROUNDS):
            (root / name / f"f{i:03d}.txt").write_text(f"{name} {i}\n")
    script = tmp_path / "worker.py"
    script.write_text(WORKER)
    go = tmp_path / "go"
    procs = [
        subprocess.Popen(
            [sys.executable, str(script), str(root), str(state_dir), name, str(ROUNDS), str(go)],
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
        )
        for name in ("a", "b")
    ]
    time.sleep(0.5)
    go.write_text("go")
    conflicts = 0
    for p in procs:
        out, err = p.communicate(timeout=240)
        assert p.returncode == 0, err
        assert out.startswith("done")
        conflicts += int(out.split()[-1])
    print(f"\nselection saves redone after a concurrent write: {conflicts}")

    rt = Runtime.for_dirs([root], state_dir=state_dir)
    build_toolbox(rt)
    svc = selection_service(rt)
    removed = {i - 5 for i in range(ROUNDS) if i % 10 == 9}
    expected = {
        os.path.realpath(root / name / f"f{i:03d}.txt")
        for name in ("a", "b")
        for i in range(ROUNDS)
        if i not in removed
    }
    assert set(svc.snapshot().files) == expected  # every add and remove of both processes landed
    lines = svc.prompt().splitlines()
    assert sorted(lines) == sorted(f"{name}-{i}" for name in ("a", "b") for i in range(ROUNDS))

    db = sqlite3.connect(state_dir / "tooldeck.sqlite3")
    assert db.execute("PRAGMA integrity_check").fetchone()[0] == "ok"
    assert db.execute("SELECT COUNT(*) FROM workspaces").fetchone()[0] == 1  # both started on it: one workspace
    assert db.execute("SELECT COUNT(*) FROM tabs").fetchone()[0] == 1
    saves = ROUNDS * 2 + len(removed) * 2
    assert db.execute("SELECT version FROM tabs").fetchone()[0] == saves
