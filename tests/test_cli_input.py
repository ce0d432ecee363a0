"""Bad input on the CLI (issue 8 item 12): one line, exit 2, never a traceback;
a raw newline inside a JSON string is repaired as in process; booleans are not
integers; a symbolic link loop is said to be one."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

pytestmark = pytest.mark.timeout(60)


def _call(root: Path, state: Path, tool: str, stdin: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "tooldeck", "call", tool, "--root", str(root), "--state-dir", str(state)],
        input=stdin,
        capture_output=True,
        text=True,
        timeout=50,
        env={**os.environ, "TOOLDECK_STATE_DIR": str(state)},
    )


def test_deep_nesting_is_a_usage_error_in_one_line(root: Path, state_dir: Path) -> None:
    proc = _call(root, state_dir, "read_file", "[" * 100_000)
    assert proc.returncode == 2, proc.stderr[-500:]
    assert "Traceback" not in proc.stderr and len(proc.stderr.strip().splitlines()) == 1, proc.stderr[-500:]


def test_raw_newline_inside_a_string_is_accepted(root: Path, state_dir: Path) -> None:
    proc = _call(root, state_dir, "file_actions", '{"action": "create", "path": "n.txt", "content": "one\ntwo\n"}')
    assert proc.returncode == 0, proc.stderr
    assert (root / "n.txt").read_text() == "one\ntwo\n"


def test_boolean_is_not_an_integer(call, root: Path) -> None:  # type: ignore[no-untyped-def]
    (root / "a.txt").write_text("1\n2\n3\n")
    res = call.err("read_file", {"path": "a.txt", "limit": True}, code="invalid_arguments")
    assert "`limit`" in res.text and "boolean" in res.text
    call.err("read_file", {"path": "a.txt", "offset": False}, code="invalid_arguments")
    call.err("file_search", {"pattern": "x", "max_results": True}, code="invalid_arguments")
    assert "2" in call.ok("read_file", {"path": "a.txt", "limit": 2})
    assert json.dumps(True) == "true"  # what a model sends


def test_symlink_loop_in_a_folder_is_reported_as_a_loop(call, root: Path) -> None:  # type: ignore[no-untyped-def]
    os.symlink(root / "loop2", root / "loop1")
    os.symlink(root / "loop1", root / "loop2")
    (root / "ok.txt").write_text("fine\n")
    out = call.ok("manage_selection", {"op": "add", "paths": ["."]})
    assert "symbolic link loop" in out and "binary" not in out, out
