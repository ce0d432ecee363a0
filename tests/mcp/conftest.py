"""Fixtures for the end-to-end MCP tests (helpers live in mcp_e2e.py)."""

from __future__ import annotations

from pathlib import Path

import pytest


@pytest.fixture
def served(tmp_path: Path) -> tuple[Path, Path]:
    """A small workspace and a state directory for a spawned server."""
    root, state = tmp_path / "root", tmp_path / "state"
    root.mkdir()
    state.mkdir()
    (root / "hello.txt").write_text("hello\nworld\n")
    (root / "src").mkdir()
    (root / "src" / "app.py").write_text("def main():\n    return 1\n")
    (root / "notes.md").write_text("one\none\n")
    return root, state
