"""Fixtures for the git service tests (shared with tests/tools/git)."""

from __future__ import annotations

from tests.git.gitkit import repo  # noqa: F401  (fixture)
