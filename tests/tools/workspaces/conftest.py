"""A small Python project copied into the workspace root, plus files the
selection must leave out (gitignored, binary)."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

FIXTURE = Path(__file__).resolve().parents[2] / "fixtures" / "selection" / "pyproj"


@pytest.fixture
def project(root: Path) -> Path:
    shutil.copytree(FIXTURE, root, dirs_exist_ok=True)
    (root / "build_out").mkdir()
    (root / "build_out" / "generated.py").write_text("X = 1\n")
    (root / "app.log").write_text("log line\n")
    (root / "logo.png").write_bytes(b"\x89PNG\r\n\x1a\n\x00\x00\x00\rIHDR")
    return root
