"""tooldeck's own temp files (``.tooldeck-tmp-*``: a write in progress, or
the leftovers of a crash before recovery) are never listed by any tool."""

from __future__ import annotations

from pathlib import Path

import pytest

from tooldeck.catalog import build_toolbox
from tooldeck.runtime import Runtime
from tooldeck.workspace.ignore import IgnoreRules
from tooldeck.workspace.walk import walk

TEMP = ".tooldeck-tmp-4242-abcdef0123-0"


@pytest.fixture
def seeded(root: Path) -> Path:
    (root / "pkg").mkdir()
    (root / "pkg" / "real.txt").write_text("needle here\n")
    (root / "pkg" / TEMP).write_text("needle in a temp file\n")
    (root / (TEMP + ".bak")).write_text("needle in a backup\n")
    return root


@pytest.mark.parametrize("engine", ["ripgrep", "python"])
def test_no_listing_shows_a_temp_file(seeded: Path, state_dir: Path, engine: str) -> None:
    rt = Runtime.for_dirs([seeded], state_dir=state_dir, settings={"search_engine": engine})
    box = build_toolbox(rt)
    outputs = {
        "tree": box.call_sync("get_file_tree", '{"type": "files", "mode": "full"}').text,
        "dir": box.call_sync("read_directory", '{"path": "pkg"}').text,
        "top": box.call_sync("read_directory", '{"path": "."}').text,
        "content": box.call_sync("file_search", '{"pattern": "needle", "mode": "content"}').text,
        "paths": box.call_sync("file_search", '{"pattern": "4242", "mode": "path"}').text,
    }
    assert "real.txt" in outputs["tree"] and "real.txt" in outputs["dir"] and "real.txt" in outputs["content"]
    for what, text in outputs.items():
        assert "tooldeck-tmp" not in text and "abcdef0123" not in text, f"{what} lists a temp file:\n{text}"


def test_the_walker_hides_temp_files_even_without_ignore_rules(seeded: Path) -> None:
    rels = [e.rel for e in walk(IgnoreRules(str(seeded)), respect_ignore=False)]
    assert "pkg/real.txt" in rels and not [r for r in rels if "tooldeck-tmp" in r]
