"""AtomicBatch guards added for the edit tools: lost-update checks at commit
time, one descriptor per directory, and which file failed."""

from __future__ import annotations

import os
import resource
from pathlib import Path

import pytest

from tooldeck.core.errors import ToolError
from tooldeck.workspace import atomic
from tooldeck.workspace.atomic import AtomicBatch


def test_expect_refuses_a_file_changed_after_it_was_read(tmp_path: Path) -> None:
    (tmp_path / "a.txt").write_text("read\n")
    (tmp_path / "b.txt").write_text("b\n")
    batch = AtomicBatch()
    batch.write(str(tmp_path), "b.txt", b"B\n", expect=b"b\n")
    batch.write(str(tmp_path), "a.txt", b"mine\n", expect=b"read\n")
    (tmp_path / "a.txt").write_text("someone else's\n")  # between the read and the commit
    with pytest.raises(ToolError) as info:
        batch.commit()
    assert info.value.code == "conflict" and batch.failed_rel == "a.txt"
    assert (tmp_path / "a.txt").read_text() == "someone else's\n" and (tmp_path / "b.txt").read_text() == "b\n"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["a.txt", "b.txt"]  # no temp files left


def test_expect_absent_refuses_a_file_created_meanwhile(tmp_path: Path) -> None:
    batch = AtomicBatch()
    batch.write(str(tmp_path), "new/x.txt", b"mine\n", expect_absent=True)
    (tmp_path / "new").mkdir()
    (tmp_path / "new/x.txt").write_text("theirs\n")
    with pytest.raises(ToolError) as info:
        batch.commit()
    assert info.value.code == "conflict" and (tmp_path / "new/x.txt").read_text() == "theirs\n"


def test_dot_slash_spelling_is_the_same_file(tmp_path: Path) -> None:
    batch = AtomicBatch()
    batch.write(str(tmp_path), "a.txt", b"1")
    with pytest.raises(ValueError):
        batch.write(str(tmp_path), "./a.txt", b"2")


def test_rollback_removes_created_directories_and_restores_files(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    (tmp_path / "keep.txt").write_text("keep\n")
    batch = AtomicBatch()
    batch.write(str(tmp_path), "keep.txt", b"changed\n")
    batch.write(str(tmp_path), "deep/er/new.txt", b"new\n")
    calls: list[tuple[str, str]] = []

    def hook(step: str, rel: str) -> None:
        calls.append((step, rel))
        if (step, rel) == ("apply", "deep/er/new.txt"):
            raise OSError(28, "No space left on device")

    monkeypatch.setattr(atomic, "fault_hook", hook)
    with pytest.raises(OSError):
        batch.commit()
    assert batch.failed_rel == "deep/er/new.txt"
    assert (tmp_path / "keep.txt").read_text() == "keep\n" and not (tmp_path / "deep").exists()
    assert sorted(p.name for p in tmp_path.iterdir()) == ["keep.txt"]


def test_many_files_in_one_directory_do_not_need_a_descriptor_each(tmp_path: Path) -> None:
    """400 files in one folder within 128 spare descriptors: the limit is set
    above what the process already holds (a long test run holds many), so the
    test measures the batch, not its neighbours."""
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    held = len(os.listdir("/proc/self/fd")) if os.path.isdir("/proc/self/fd") else 64
    resource.setrlimit(resource.RLIMIT_NOFILE, (min(held + 128, hard), hard))
    try:
        batch = AtomicBatch()
        for i in range(400):
            batch.write(str(tmp_path), f"d/f{i}.txt", b"x")
        batch.commit()
    finally:
        resource.setrlimit(resource.RLIMIT_NOFILE, (soft, hard))
    assert len(list((tmp_path / "d").iterdir())) == 400
