"""CLI paging across processes (issue 8 item 11): a cursor printed by
``tooldeck call`` continues in the next ``tooldeck call`` process; a cursor
never runs a tool again, and the message for a lost cursor never tells the
model to repeat a call that changes files."""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
import time
from pathlib import Path

import pytest

from tooldeck.state.pages import FilePageStore

pytestmark = pytest.mark.timeout(120)


def _call(root: Path, state: Path, tool: str, args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "tooldeck", "call", tool, args, "--root", str(root), "--state-dir", str(state)],
        capture_output=True,
        text=True,
        timeout=60,
        env={**os.environ, "TOOLDECK_STATE_DIR": str(state)},
    )


def _cursor(text: str) -> str:
    m = re.search(r'"cursor": "(p:[0-9a-f]+)"', text)
    assert m is not None, text[-500:]
    return m.group(1)


def test_a_cursor_continues_in_the_next_process(root: Path, state_dir: Path) -> None:
    lines = [f"row {i:06d} " + "z" * 60 for i in range(1_500)]  # three pages: three processes after the first
    (root / "big.txt").write_text("\n".join(lines) + "\n")
    first = _call(root, state_dir, "read_file", '{"path": "big.txt"}')
    assert first.returncode == 0, first.stderr
    assert "Continue with" in first.stdout
    shown_end = int(re.match(r"big.txt:1-(\d+)", first.stdout).group(1))  # type: ignore[union-attr]
    seen, pages = first.stdout, 1
    while "Continue with" in seen.splitlines()[-1] and pages < 20:
        nxt = _call(root, state_dir, "read_file", json.dumps({"cursor": _cursor(seen)}))
        assert nxt.returncode == 0, nxt.stderr
        seen, pages = nxt.stdout, pages + 1
    assert pages >= 3 and f"row {shown_end - 1:06d}" in seen  # the last page ends where read_file's output ends
    # a cursor is used once
    again = _call(root, state_dir, "read_file", json.dumps({"cursor": _cursor(first.stdout)}))
    assert again.returncode == 1 and "unknown, expired or already used" in again.stderr


def test_a_lost_cursor_never_reruns_a_writing_tool(root: Path, state_dir: Path) -> None:
    (root / "a.txt").write_text("one\n")
    res = _call(root, state_dir, "append_to_file", '{"cursor": "p:0123456789ab"}')
    assert res.returncode in (1, 2), res.stdout
    assert (root / "a.txt").read_text() == "one\n"
    if res.returncode == 1 and "cursor" in res.stderr:
        assert "do not repeat" in res.stderr and "repeat the original call" not in res.stderr
    patch = _call(root, state_dir, "apply_patch", '{"cursor": "p:0123456789ab"}')
    assert patch.returncode == 1 and "do not repeat the apply_patch call" in patch.stderr, patch.stderr


def test_pages_expire_and_cursors_are_not_paths(tmp_path: Path) -> None:
    store = FilePageStore(tmp_path / "pages", ttl=3600)
    page = {"tool": "read_file", "lines": ["a", "b"], "start_line": 3, "total_lines": 4}
    store.save("p:00000000000a", page)
    assert store.load("p:00000000000a") == page
    assert store.load("p:00000000000a") is None  # used once
    store.save("p:00000000000b", page)
    old = time.time() - 7200
    os.utime(tmp_path / "pages" / "00000000000b.json", (old, old))
    assert store.load("p:00000000000b") is None  # expired
    store.save("p:../../etc", page)
    assert store.load("p:../../etc") is None and not (tmp_path / "etc.json").exists()
