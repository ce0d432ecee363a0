"""Fixtures for the index tests: a hermetic config (no user file)."""

from __future__ import annotations

from pathlib import Path

import pytest


@pytest.fixture(autouse=True)
def hermetic_config(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """No user config file unless a test writes one here."""
    cfg = tmp_path / "user-config.toml"
    monkeypatch.setenv("TOOLDECK_CONFIG", str(cfg))
    return cfg
