"""Crash recovery, step by step: a writer process dies (``os._exit``) at a
chosen step of a 4-file batch, then recovery runs as the next process would.
Deterministic companions of the random-kill test in test_crash_recovery.py."""

from __future__ import annotations

import fcntl
import os
import subprocess
import sys
import textwrap
import time
from pathlib import Path

import pytest

from tooldeck.runtime import Runtime
from tooldeck.workspace import journal
from tooldeck.workspace.atomic import AtomicBatch

WRITER = textwrap.dedent(
    """
    import os, sys
    from tooldeck.workspace import atomic
    root, state, step, rel = sys.argv[1:5]
    def hook(s, r):
        if s == step and r == rel:
            os._exit(9)
    atomic.fault_hook = hook
    b = atomic.AtomicBatch(state)
    for name in ("a.txt", "b.txt", "sub/c.txt"):
        b.write(root, name, b"new " + name.encode() + b"\\n")
    b.write(root, "new/d.txt", b"added\\n")
    b.delete(root, "gone.txt")
    b.commit()
    """
)
OLD = {"a.txt": "old a\n", "b.txt": "old b\n", "sub/c.txt": "old c\n", "gone.txt": "doomed\n"}
NEW = {"a.txt": "new a.txt\n", "b.txt": "new b.txt\n", "sub/c.txt": "new sub/c.txt\n", "new/d.txt": "added\n"}


def seed(root: Path) -> None:
    for rel, text in OLD.items():
        (root / rel).parent.mkdir(parents=True, exist_ok=True)
        (root / rel).write_text(text)


def die_at(root: Path, state_dir: Path, step: str, rel: str) -> None:
    proc = subprocess.run([sys.executable, "-c", WRITER, str(root), str(state_dir), step, rel], check=False)
    assert proc.returncode == 9


def tree(root: Path) -> dict[str, str]:
    return {str(p.relative_to(root)): p.read_text() for p in root.rglob("*") if p.is_file()}


def journal_empty(state_dir: Path) -> bool:
    j = state_dir / "journal"
    return not j.exists() or not any(j.iterdir())


@pytest.mark.parametrize(
    ("step", "rel"),
    [("stage", "b.txt"), ("apply", "a.txt"), ("apply", "sub/c.txt"), ("apply", "gone.txt")],
)
def test_a_batch_cut_before_its_commit_point_is_undone(root: Path, state_dir: Path, step: str, rel: str) -> None:
    seed(root)
    die_at(root, state_dir, step, rel)
    assert not journal_empty(state_dir) and tree(root) != OLD  # the crash left work half done
    Runtime.for_dirs([root], state_dir=state_dir)  # the next process starts
    assert tree(root) == OLD
    assert not (root / "new").exists()  # the folder the batch created is gone too
    assert journal_empty(state_dir)


def test_a_batch_cut_after_its_commit_point_is_finished(root: Path, state_dir: Path) -> None:
    seed(root)
    die_at(root, state_dir, "done", "")
    assert not journal_empty(state_dir)
    assert journal.recover(state_dir) == 1
    assert tree(root) == NEW
    assert journal_empty(state_dir)


def test_recovery_leaves_a_file_another_writer_changed_since(root: Path, state_dir: Path) -> None:
    seed(root)
    die_at(root, state_dir, "apply", "gone.txt")  # a, b, c and d were renamed in
    (root / "b.txt").write_text("someone else's\n")  # before any tooldeck process recovered
    journal.recover(state_dir)
    assert tree(root) == {**OLD, "b.txt": "someone else's\n"}
    assert journal_empty(state_dir)


def test_a_live_batch_is_never_recovered(root: Path, state_dir: Path) -> None:
    seed(root)
    die_at(root, state_dir, "apply", "b.txt")
    [folder] = (state_dir / "journal").iterdir()
    fd = os.open(folder / "intent.json", os.O_RDONLY)
    try:
        fcntl.flock(fd, fcntl.LOCK_EX)  # as its writer holds it while it runs
        assert journal.recover(state_dir) == 0
        assert (root / "a.txt").read_text() == "new a.txt\n"
    finally:
        os.close(fd)
    assert journal.recover(state_dir) == 1 and tree(root) == OLD


def test_a_successful_batch_leaves_no_backup_or_journal(root: Path, state_dir: Path) -> None:
    seed(root)
    batch = AtomicBatch(state_dir)
    batch.write(str(root), "a.txt", b"1\n")
    batch.write(str(root), "b.txt", b"2\n")
    batch.commit()
    assert journal.flush()
    assert journal_empty(state_dir)
    assert not [p for p in root.rglob("*") if p.name.startswith(".tooldeck-tmp-")]
    assert (root / "a.txt").read_text() == "1\n" and (root / "b.txt").read_text() == "2\n"


def test_a_batch_killed_after_its_reply_before_its_cleanup_is_finished(root: Path, state_dir: Path) -> None:
    """The cleanup runs after the call returned (atexit flush here); dying
    there leaves a committed batch with its backups: recovery keeps the new side."""
    seed(root)
    die_at(root, state_dir, "cleanup", "")
    assert tree(root) == NEW  # the commit had returned
    leftovers = [p.name for p in (state_dir / "journal").rglob("*")]
    assert "done.json" in leftovers and any(n.endswith(".bak") for n in leftovers), leftovers
    assert journal.recover(state_dir) == 1
    assert tree(root) == NEW
    assert journal_empty(state_dir)


SINGLE = textwrap.dedent(
    """
    import os, sys
    from tooldeck.workspace import atomic
    root, state = sys.argv[1:3]
    atomic.fault_hook = lambda s, r: os._exit(9) if s == "cleanup" else None
    atomic.write_file(root, "a.txt", b"single new\\n", state_dir=state)
    """
)


def test_a_single_file_write_killed_before_its_cleanup_keeps_the_new_content(root: Path, state_dir: Path) -> None:
    seed(root)
    proc = subprocess.run([sys.executable, "-c", SINGLE, str(root), str(state_dir)], check=False)
    assert proc.returncode == 9
    assert not journal_empty(state_dir)  # its intent is still there
    Runtime.for_dirs([root], state_dir=state_dir)
    assert tree(root) == {**OLD, "a.txt": "single new\n"}
    assert journal_empty(state_dir)
    assert not [p for p in root.rglob("*") if p.name.startswith(".tooldeck-tmp-")]


def test_after_reply_holds_the_cleanup_until_the_block_ends(root: Path, state_dir: Path) -> None:
    seed(root)
    with journal.after_reply():
        batch = AtomicBatch(state_dir)
        batch.write(str(root), "a.txt", b"1\n")
        batch.write(str(root), "b.txt", b"2\n")
        batch.commit()
        time.sleep(0.05)  # the worker would have run a submitted job by now
        assert (root / "a.txt").read_text() == "1\n"  # committed: the new content is in place
        assert not journal_empty(state_dir)  # its backups and journal wait for the reply
    assert journal.flush()
    assert journal_empty(state_dir)
