"""Shared fixtures: a temporary workspace, its Runtime and the full Toolbox."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

from tooldeck.catalog import build_toolbox
from tooldeck.core.toolbox import Toolbox, ToolResult
from tooldeck.runtime import Runtime

os.environ.setdefault("TOOLDECK_STATE_DIR", "/tmp/tooldeck-test-state-unused")


@pytest.fixture
def state_dir(tmp_path: Path) -> Path:
    d = tmp_path / "state"
    d.mkdir()
    return d


@pytest.fixture
def root(tmp_path: Path) -> Path:
    d = tmp_path / "root"
    d.mkdir()
    return d


@pytest.fixture
def runtime(root: Path, state_dir: Path) -> Runtime:
    return Runtime.for_dirs([root], state_dir=state_dir)


@pytest.fixture
def box(runtime: Runtime) -> Toolbox:
    return build_toolbox(runtime)


class Caller:
    """Call tools synchronously and assert on outcomes."""

    def __init__(self, box: Toolbox) -> None:
        self.box = box

    def __call__(self, name: str, args: dict | str | None = None) -> ToolResult:
        return self.box.call_sync(name, json.dumps(args) if isinstance(args, dict) else args)

    def ok(self, name: str, args: dict | str | None = None) -> str:
        res = self(name, args)
        assert not res.is_error, res.text
        return res.text

    def err(self, name: str, args: dict | str | None = None, code: str | None = None) -> ToolResult:
        res = self(name, args)
        assert res.is_error, f"expected an error, got: {res.text[:500]}"
        if code is not None:
            assert res.error is not None and res.error.code == code, res.text
        return res


@pytest.fixture
def call(box: Toolbox) -> Caller:
    return Caller(box)


def snapshot(path: Path) -> dict[str, bytes]:
    """Every file under ``path`` with its bytes (to prove nothing changed)."""
    out: dict[str, bytes] = {}
    for dirpath, _dirs, files in os.walk(path):
        for f in files:
            p = Path(dirpath) / f
            if p.is_symlink() or not p.is_file():
                continue
            out[str(p.relative_to(path))] = p.read_bytes()
    return out


def pytest_addoption(parser: pytest.Parser) -> None:
    parser.addoption("--run-slow", action="store_true", help="also run the @pytest.mark.slow soak tests")


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    """Soak variants (``@pytest.mark.slow``) run with ``--run-slow`` or ``TOOLDECK_SLOW=1``."""
    if config.getoption("--run-slow") or os.environ.get("TOOLDECK_SLOW") == "1":
        return
    skip = pytest.mark.skip(reason="slow soak test: run with --run-slow")
    for item in items:
        if "slow" in item.keywords:
            item.add_marker(skip)
