"""Parser goldens: every fixture under tests/fixtures/chatmd/parse parses to its ``.json``
(or, for ``err_*``, fails with its ``.err`` text: ``file:line:col: message``).

Regenerate after an intended change with ``TOOLDECK_UPDATE_GOLDENS=1`` and
review the diff: a golden is only as good as the reading it got.
"""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

import pytest

from tooldeck.markup.element import ChatmdError, Element
from tooldeck.markup.parser import parse

FIXTURES = Path(__file__).resolve().parents[1] / "fixtures" / "chatmd" / "parse"
CASES = sorted(FIXTURES.glob("*.chatmd"))
UPDATE = os.environ.get("TOOLDECK_UPDATE_GOLDENS") == "1"


def dump(node: Element | str) -> Any:
    if isinstance(node, str):
        return node
    out: dict[str, Any] = {"tag": node.tag, "at": f"{node.pos.line}:{node.pos.col}"}
    if node.attrs:
        out["attrs"] = node.attrs
    if node.children:
        out["children"] = [dump(c) for c in node.children]
    return out


def outcome(path: Path) -> tuple[str, str]:
    try:
        nodes = parse(path.read_text(encoding="utf-8"), Path(path.name))
    except ChatmdError as exc:
        return ".err", str(exc) + "\n"
    return ".json", json.dumps([dump(n) for n in nodes], indent=1, ensure_ascii=False) + "\n"


def test_at_least_thirty_inputs() -> None:
    assert len(CASES) >= 30
    seeds = [c for c in CASES if c.name.startswith("seed_")]
    assert len(seeds) >= 11  # every ChatMD example of seed 000


@pytest.mark.parametrize("case", CASES, ids=[c.stem for c in CASES])
def test_golden(case: Path) -> None:
    suffix, got = outcome(case)
    assert (suffix == ".err") == case.name.startswith("err_"), got
    golden = case.with_suffix(suffix)
    if UPDATE:
        golden.write_text(got, encoding="utf-8")
    assert golden.exists(), f"no golden {golden.name}; run with TOOLDECK_UPDATE_GOLDENS=1 and review it"
    assert got == golden.read_text(encoding="utf-8")
