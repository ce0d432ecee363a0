"""A FIFO in the workspace never hangs a tool (issue 8 item 8).

Every reader opens through the non-blocking safe path, so a FIFO (even one
named like a rule file) is skipped or refused at once instead of waiting for a
writer that never comes. Each test runs in a subprocess-free thread with a
short pytest timeout: on the old code they hang until it fires.
"""

from __future__ import annotations

import os
from pathlib import Path

import pytest


def _fifos(root: Path, rule_file: bool = True) -> None:
    (root / "pkg").mkdir()
    (root / "pkg" / "a.py").write_text("def needle():\n    return 1\n")
    os.mkfifo(root / "pkg" / "pipe.py")
    if rule_file:
        os.mkfifo(root / "pkg" / ".gitignore")  # a rule file that is a FIFO: read by every walk


@pytest.mark.timeout(15)
def test_selection_add_of_a_folder_with_a_fifo_returns(call, root: Path) -> None:  # type: ignore[no-untyped-def]
    _fifos(root)
    out = call.ok("manage_selection", {"op": "add", "paths": ["pkg"], "mode": "full"})
    assert "pkg/a.py" in out and "skipped 2" in out and "pkg/pipe.py" in out, out
    content = call.ok("manage_selection", {"op": "get", "view": "content"})
    assert "def needle" in content


@pytest.mark.timeout(15)
@pytest.mark.parametrize(
    ("tool", "args"),
    [
        ("get_file_tree", {"mode": "full"}),
        ("get_code_structure", {"scope": "paths", "paths": ["pkg"]}),
        ("find_symbol", {"name": "needle"}),
    ],
)
def test_readers_skip_fifos_without_blocking(call, root: Path, tool: str, args: dict) -> None:  # type: ignore[no-untyped-def]
    _fifos(root)
    res = call(tool, args)
    assert res.error is None or res.error.code != "timeout", res.text


@pytest.mark.timeout(15)
@pytest.mark.parametrize(
    ("tool", "args"),
    [
        ("file_search", {"pattern": "needle", "mode": "content"}),
        ("context_builder", {"instructions": "where is needle", "budget": 5000}),
    ],
)
def test_ripgrep_readers_skip_fifos(call, root: Path, tool: str, args: dict) -> None:  # type: ignore[no-untyped-def]
    # ripgrep opens `.gitignore` files itself (blocking): a FIFO named so is a
    # known limit there, ended by the tool timeout; a FIFO among the files is skipped
    _fifos(root, rule_file=False)
    res = call(tool, args)
    assert res.error is None, res.text


@pytest.mark.timeout(15)
def test_explicit_fifo_is_refused_at_once(call, root: Path) -> None:  # type: ignore[no-untyped-def]
    _fifos(root)
    call.err("manage_selection", {"op": "add", "paths": ["pkg/pipe.py"]})
    call.err("read_file", {"path": "pkg/pipe.py"}, code="not_a_file")
