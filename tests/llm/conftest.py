"""Model tests: a scripted OpenAI-compatible server on 127.0.0.1 per test."""

from __future__ import annotations

import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))  # the repo root: ``tests.support``

from tests.support.openai_server import ScriptedOpenAI


@pytest.fixture
def server() -> Iterator[ScriptedOpenAI]:
    with ScriptedOpenAI() as s:
        yield s
