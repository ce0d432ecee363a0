"""Fixtures for the git tool tests (the helper lives in tests/git/gitkit.py)."""

from __future__ import annotations

from tests.git.gitkit import repo  # noqa: F401  (fixture)
