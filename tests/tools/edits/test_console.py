"""The `apply_patch` executable run as a subprocess: the Codex CLI contract."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

PATCH = (
    "*** Begin Patch\n*** Add File: hello.txt\n+Hello, world!\n"
    "*** Update File: a.txt\n@@\n-a\n+A\n*** Delete File: gone.txt\n*** End Patch\n"
)


def command() -> list[str]:
    """The installed console script when present, else the same entry point via -m."""
    script = Path(sys.executable).parent / "apply_patch"
    if script.exists():
        return [str(script)]
    found = shutil.which("apply_patch")
    return [found] if found else [sys.executable, "-m", "tooldeck.tools.edits.console"]


def run(cwd: Path, *args: str, stdin: str | None = None) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [*command(), *args],
        cwd=cwd,
        input=stdin,
        stdin=None if stdin is not None else subprocess.DEVNULL,
        capture_output=True,
        text=True,
        timeout=60,
        env={**os.environ, "PYTHONDONTWRITEBYTECODE": "1"},
    )


@pytest.fixture
def tree(tmp_path: Path) -> Path:
    (tmp_path / "a.txt").write_text("a\n")
    (tmp_path / "gone.txt").write_text("bye\n")
    return tmp_path


def test_argument_success_prints_codex_summary(tree: Path) -> None:
    res = run(tree, PATCH)
    assert res.returncode == 0, res.stderr
    assert res.stdout == "Success. Updated the following files:\nA hello.txt\nM a.txt\nD gone.txt\n"
    assert (tree / "hello.txt").read_text() == "Hello, world!\n" and (tree / "a.txt").read_text() == "A\n"
    assert not (tree / "gone.txt").exists()


def test_stdin_is_read_when_no_argument(tree: Path) -> None:
    res = run(tree, stdin=PATCH)
    assert res.returncode == 0, res.stderr
    assert res.stdout.startswith("Success. Updated the following files:\n")


def test_apply_error_exits_1_and_changes_nothing(tree: Path) -> None:
    bad = PATCH.replace("-a\n+A", "-zzz\n+A")
    res = run(tree, bad)
    assert res.returncode == 1 and res.stdout == ""
    assert "a.txt" in res.stderr and "Nothing was changed" in res.stderr
    assert not (tree / "hello.txt").exists() and (tree / "gone.txt").exists()
    assert run(tree, "not a patch").returncode == 1


def test_usage_errors_exit_2(tree: Path) -> None:
    assert run(tree).returncode == 2  # nothing on stdin
    res = run(tree, PATCH, "extra")
    assert res.returncode == 2 and "exactly one" in res.stderr
    assert not (tree / "hello.txt").exists()


def test_cwd_is_the_root(tree: Path) -> None:
    res = run(tree, "*** Begin Patch\n*** Add File: ../outside.txt\n+x\n*** End Patch\n")
    assert res.returncode == 1 and not (tree.parent / "outside.txt").exists()
