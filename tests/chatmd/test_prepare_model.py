"""``prepare(model=...)``: a model the person names for a run (``tooldeck chat
--model``) wins over the file's ``<config model>``; the file's other
``<config>`` values still apply."""

from __future__ import annotations

from pathlib import Path

import pytest

from tooldeck.chatmd.document import loads
from tooldeck.chatmd.session import prepare
from tooldeck.runtime import Runtime

FILE = '<config model="from-file" temperature="0.25"/>\n<user>hi</user>\n'


@pytest.fixture
def rt(root: Path, state_dir: Path, monkeypatch: pytest.MonkeyPatch) -> Runtime:
    monkeypatch.setenv("TOOLDECK_CONFIG", str(root.parent / "no-config.toml"))
    monkeypatch.setenv("OPENAI_BASE_URL", "http://127.0.0.1:9/v1")
    return Runtime.for_dirs([root], state_dir=state_dir)


def test_the_named_model_wins_over_config_model(rt: Runtime, root: Path) -> None:
    session = prepare(loads(FILE, root / "c.chatmd"), rt, model="from-flag")
    assert session.model.model == "from-flag"
    assert session.model.temperature == 0.25  # the file's other settings still hold


def test_without_a_named_model_the_file_decides(rt: Runtime, root: Path) -> None:
    assert prepare(loads(FILE, root / "c.chatmd"), rt).model.model == "from-file"


def test_a_named_model_is_enough_when_the_file_names_none(rt: Runtime, root: Path) -> None:
    session = prepare(loads("<user>hi</user>\n", root / "c.chatmd"), rt, model="from-flag")
    assert session.model.model == "from-flag"
