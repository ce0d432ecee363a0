"""A write never changes process-wide state that other threads share: the
garbage collector stays enabled while a big patch runs in another thread, and
the umask is never set (not even for a moment) to learn a new file's mode."""

from __future__ import annotations

import gc
import os
import stat
import threading
from pathlib import Path

import pytest


def big_patch(root: Path, funcs: int = 3000) -> str:
    (root / "big.py").write_text("".join(f"def f{i}():\n    return {i}\n\n" for i in range(funcs)))
    body = ["*** Begin Patch", "*** Update File: big.py"]
    for i in range(0, funcs, 5):
        body += [f"@@ def f{i}():", f"-    return {i}", f"+    return {i} + 1"]
    return "\n".join([*body, "*** End Patch"]) + "\n"


def test_the_gc_stays_enabled_for_other_threads_during_a_patch(root: Path, call) -> None:  # type: ignore[no-untyped-def]
    patch = big_patch(root)
    assert gc.isenabled()
    seen_disabled = 0
    done = threading.Event()

    def run() -> None:
        try:
            call.ok("apply_patch", patch)
        finally:
            done.set()

    worker = threading.Thread(target=run)
    worker.start()
    while not done.is_set():
        seen_disabled += not gc.isenabled()
    worker.join()
    assert seen_disabled == 0
    assert "return 5 + 1" in (root / "big.py").read_text()


def test_new_files_get_the_umask_mode_without_touching_the_umask(
    root: Path,
    call,  # type: ignore[no-untyped-def]
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    mask = os.umask(0o027)  # this test's own setting, restored below
    try:
        calls: list[int] = []
        real = os.umask

        def spy(value: int) -> int:
            calls.append(value)
            return real(value)

        monkeypatch.setattr(os, "umask", spy)
        call.ok("file_actions", {"action": "create", "path": "n/new.txt", "content": "x"})
        call.ok("apply_patch", "*** Begin Patch\n*** Add File: p.txt\n+y\n*** End Patch\n")
        call.ok("apply_edits", {"path": "r.txt", "rewrite": "z", "on_missing": "create"})
        assert calls == []
        for name in ("n/new.txt", "p.txt", "r.txt"):
            assert stat.S_IMODE((root / name).stat().st_mode) == 0o640, name
    finally:
        monkeypatch.undo()
        os.umask(mask)
