"""Agent sessions, chats and models against a scripted OpenAI-compatible server on 127.0.0.1."""

from __future__ import annotations

import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))  # the repo root, for ``tests.support``

from tests.support.fixtures import server  # noqa: F401
from tests.support.openai_server import ScriptedOpenAI
from tooldeck.agents.manager import session_manager
from tooldeck.runtime import Runtime

CONFIG = """
[models]
default_model = "scripted-default"

[models.presets.fast]
model = "scripted-fast"
name = "Fast"
description = "A quick model for exploring."
modes = ["chat", "plan"]
roles = ["explore"]

[models.presets.smart]
model = "scripted-smart"
name = "Smart"
description = "The careful one."
roles = ["engineer", "pair"]
"""


@pytest.fixture
def model_env(server: ScriptedOpenAI, root: Path, monkeypatch: pytest.MonkeyPatch) -> ScriptedOpenAI:  # noqa: F811
    """The scripted server as the endpoint, and presets in the project's .tooldeck.toml."""
    monkeypatch.setenv("OPENAI_BASE_URL", server.url)
    monkeypatch.setenv("OPENAI_API_KEY", "test")
    monkeypatch.delenv("TOOLDECK_MODEL", raising=False)
    monkeypatch.setenv("TOOLDECK_CONFIG", str(root.parent / "no-user-config.toml"))
    (root / ".tooldeck.toml").write_text(CONFIG)
    return server


@pytest.fixture
def runtime(root: Path, state_dir: Path, model_env: ScriptedOpenAI) -> Iterator[Runtime]:
    rt = Runtime.for_dirs([root], state_dir=state_dir)
    yield rt
    mgr = rt._services.get("agents.sessions")
    if mgr is not None:
        mgr.close()
    if rt._store is not None:
        rt.store.close()


def data(res) -> dict:  # type: ignore[no-untyped-def]
    assert not res.is_error, res.text
    assert res.output is not None and res.output.structured is not None
    return res.output.structured


__all__ = ["data", "session_manager"]
