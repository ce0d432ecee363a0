"""Edits tests dispatch through a Toolbox holding only this domain (plus the
file tools), so another domain's work in progress cannot break them; the
catalog wiring itself is tested in test_registration.py."""

from __future__ import annotations

import os
from collections.abc import Callable
from pathlib import Path

import pytest

from tooldeck.core.toolbox import Toolbox
from tooldeck.runtime import Runtime


@pytest.fixture
def box(runtime: Runtime) -> Toolbox:
    from tooldeck.tools import edits, files

    return Toolbox([*files.tools(runtime), *edits.tools(runtime)], budget_tokens=runtime.budget_tokens)


def _snapshot(path: Path) -> dict[str, bytes]:
    out: dict[str, bytes] = {}
    for dirpath, _dirs, files in os.walk(path):
        for f in files:
            p = Path(dirpath) / f
            if not p.is_symlink() and p.is_file():
                out[str(p.relative_to(path))] = p.read_bytes()
    return out


@pytest.fixture
def snapshot() -> Callable[[Path], dict[str, bytes]]:
    """Every file under a directory with its bytes (to prove nothing changed)."""
    return _snapshot
