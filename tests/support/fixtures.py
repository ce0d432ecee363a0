"""Pytest fixtures over the helpers here; a folder's conftest imports the ones it needs:

    from tests.support.fixtures import server  # noqa: F401
"""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from tests.support.openai_server import ScriptedOpenAI


@pytest.fixture
def server() -> Iterator[ScriptedOpenAI]:
    """A scripted OpenAI-compatible server on 127.0.0.1 (``server.url`` is the base URL)."""
    with ScriptedOpenAI() as s:
        yield s
