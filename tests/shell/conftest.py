"""Fixtures for the shell tests (helpers live in shell_harness.py)."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.shell.shell_harness import Shell, dev_runtime
from tooldeck.shell.spec import ShellToolSpec


@pytest.fixture
def shell(root: Path, state_dir: Path) -> Shell:
    """Tools `sh` (structured, structured result), `ch` (chain), `sht` (structured, text) on dev_runtime()."""
    rt = dev_runtime()
    s = Shell(root, state_dir)
    s.add(ShellToolSpec(name="sh", mode="structured", runtime=rt.id, result="structured", stdin=True), rt)
    s.add(ShellToolSpec(name="ch", mode="chain", runtime=rt.id, result="structured"), rt)
    s.add(ShellToolSpec(name="sht", mode="structured", runtime=rt.id), rt)
    return s
