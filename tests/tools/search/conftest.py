"""Fixtures for file_search: the sample tree and both engines (ripgrep and
the pure-Python fallback)."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import pytest

from tests.support.require import require
from tests.tools.search.search_helpers import ENGINES, Search, make_tree
from tooldeck.runtime import Runtime


@pytest.fixture
def tree(root: Path) -> Path:
    make_tree(root)
    return root


@pytest.fixture(params=ENGINES)
def engine(request: pytest.FixtureRequest) -> str:
    if request.param == "ripgrep":
        require("rg")
    return request.param


@pytest.fixture
def make_search(state_dir: Path, engine: str) -> Callable[[list[Path]], Search]:
    def build(roots: list[Path]) -> Search:
        return Search(Runtime.for_dirs(roots, state_dir=state_dir, settings={"search_engine": engine}))

    return build


@pytest.fixture
def search(tree: Path, make_search: Callable[[list[Path]], Search]) -> Search:
    return make_search([tree])
