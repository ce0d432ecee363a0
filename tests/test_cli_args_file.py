"""``tooldeck call TOOL @args.json`` and ``@-`` (as ``rp-cli -j @edits.json``)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

pytestmark = pytest.mark.timeout(120)


def call(root: Path, state: Path, *args: str, stdin: str | None = None) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "tooldeck", "call", *args, "--root", str(root), "--state-dir", str(state)],
        input=stdin, capture_output=True, text=True, timeout=100, cwd=root,
        env={**os.environ, "TOOLDECK_STATE_DIR": str(state), "TOOLDECK_CONFIG": os.devnull},
    )  # fmt: skip


def test_arguments_from_a_file_and_from_stdin(root: Path, state_dir: Path, tmp_path: Path) -> None:
    (root / "app.py").write_text("x = 1\n")
    edits = tmp_path / "edits.json"
    edits.write_text(json.dumps({"path": "app.py", "search": "x = 1", "replace": "x = 2"}))
    done = call(root, state_dir, "apply_edits", f"@{edits}")
    assert done.returncode == 0, done.stderr
    assert (root / "app.py").read_text() == "x = 2\n"
    done = call(root, state_dir, "apply_edits", "@-", stdin='{"path": "app.py", "search": "x = 2", "replace": "y"}')
    assert done.returncode == 0, done.stderr
    assert (root / "app.py").read_text() == "y\n"
    # a custom tool takes its raw input from a file too
    patch = tmp_path / "p.patch"
    patch.write_text("*** Begin Patch\n*** Update File: app.py\n@@\n-y\n+z\n*** End Patch\n")
    done = call(root, state_dir, "apply_patch", f"@{patch}")
    assert done.returncode == 0, done.stderr
    assert (root / "app.py").read_text() == "z\n"


def test_a_missing_arguments_file_is_a_usage_error(root: Path, state_dir: Path, tmp_path: Path) -> None:
    done = call(root, state_dir, "read_file", f"@{tmp_path / 'nope.json'}")
    assert done.returncode == 2 and "cannot read the arguments from" in done.stderr
    assert "Traceback" not in done.stderr


def test_a_fifo_as_the_arguments_file_is_a_usage_error_not_a_wait(root: Path, state_dir: Path, tmp_path: Path) -> None:
    fifo = tmp_path / "args.json"
    os.mkfifo(fifo)  # no writer: a blocking read of it would never return
    done = call(root, state_dir, "read_file", f"@{fifo}")
    assert done.returncode == 2, done.stderr
    assert f"cannot read the arguments from {fifo}: not a regular file" in done.stderr
