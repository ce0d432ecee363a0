"""Fixtures for the git tool tests (the helper lives in tests/git/gitkit.py)."""

from __future__ import annotations

import importlib.util
import sys
from pathlib import Path

if "gitkit" not in sys.modules:
    _spec = importlib.util.spec_from_file_location("gitkit", Path(__file__).parents[2] / "git" / "gitkit.py")
    assert _spec is not None and _spec.loader is not None
    sys.modules["gitkit"] = importlib.util.module_from_spec(_spec)
    _spec.loader.exec_module(sys.modules["gitkit"])

from gitkit import repo  # noqa: F401  (fixture)
