"""file_search path mode, auto mode, bad input, engine choice and registration."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tests.support.require import require
from tests.tools.search.search_helpers import Search, cursor_of, parse_content, snapshot, write
from tooldeck.catalog import build_toolbox
from tooldeck.runtime import Runtime
from tooldeck.tools.search import file_search as fs_module
from tooldeck.workspace.ripgrep import find_rg


def path_results(text: str) -> list[str]:
    lines = text.splitlines()
    start = next(i for i, ln in enumerate(lines) if ln.startswith("path matches for"))
    out = []
    for ln in lines[start + 1 :]:
        if ln == "" or ln.startswith("content matches"):
            break
        if not ln.startswith("["):
            out.append(ln)
    return out


def test_path_mode_ranks_exact_names_first(tree: Path, search: Search) -> None:
    write(tree, "lib/app_helpers.py", "x\n")
    write(tree, "zz/mapper.py", "x\n")
    got = path_results(search.ok({"pattern": "app", "mode": "path"}))
    # exact stem before name prefix before substring; ignored files never appear
    assert got[:2] == ["src/app.py", "src/web/app.js"]
    assert got.index("lib/app_helpers.py") < got.index("zz/mapper.py")
    assert "app.log" not in got and all("node_modules" not in p for p in got)


def test_path_mode_fuzzy_glob_regex_and_folders(search: Search) -> None:
    fuzzy = path_results(search.ok({"pattern": "dpnstmod", "mode": "path"}))
    assert fuzzy == ["src/deep/nested/mod.py"]
    glob = search.ok({"pattern": "src/**/*.py", "mode": "path"})
    assert "(glob)" in glob
    assert path_results(glob) == ["src/app.py", "src/deep/nested/mod.py", "src/util.py"]
    regex = search.ok({"pattern": r"\.(md|yml)$", "mode": "path"})
    assert "(regex)" in regex
    assert path_results(regex) == [".github/workflows/ci.yml", "README.md", "docs/api/ref.md", "docs/guide.md"]
    folders = path_results(search.ok({"pattern": "nested", "mode": "path"}))
    assert folders[0] == "src/deep/nested/"


def test_path_mode_pages_with_a_cursor(tree: Path, search: Search) -> None:
    for i in range(12):
        write(tree, f"pages/item_{i:02d}.txt", "")
    first = search.ok({"pattern": "item_", "mode": "path", "max_results": 5})
    assert "12 paths; showing 1-5" in first and "[7 more paths not shown" in first
    seen, text = path_results(first), first
    while (cur := cursor_of(text)) is not None:
        text = search.ok({"cursor": cur})
        seen += path_results(text)
    assert seen == [f"pages/item_{i:02d}.txt" for i in range(12)]


def test_path_filters_apply(search: Search) -> None:
    got = path_results(search.ok({"pattern": "app", "mode": "path", "filter": {"extensions": ["js"]}}))
    assert got == ["src/web/app.js"]
    got = path_results(search.ok({"pattern": "app", "mode": "path", "filter": {"exclude": ["src/web/"]}}))
    assert "src/web/app.js" not in got and "src/app.py" in got


def test_auto_mode_says_what_it_chose(search: Search) -> None:
    glob = search.ok({"pattern": "*.md"})
    assert glob.splitlines()[0].startswith("[mode auto → path")
    assert "docs/guide.md" in path_results(glob) and "content matches" not in glob
    text = search.ok({"pattern": "def foo"})
    assert text.splitlines()[0].startswith("[mode auto → content")
    assert [(h.path, h.line) for h in parse_content(text)] == [("src/app.py", 3)]
    both = search.ok({"pattern": "src/util.py"})
    assert both.splitlines()[0].startswith("[mode auto → both")
    assert path_results(both) == ["src/util.py"]
    assert "content matches for" in both


def test_both_mode_lists_paths_then_content(search: Search) -> None:
    text = search.ok({"pattern": "ref", "mode": "both"})
    assert text.index("path matches") < text.index("content matches")
    assert path_results(text) == ["docs/api/ref.md"]
    assert [(h.path, h.line) for h in parse_content(text)] == [("docs/api/ref.md", 1)]
    count = search.ok({"pattern": "foo", "mode": "both", "count_only": True})
    assert "path matches" in count and "matching lines in" in count


@pytest.mark.parametrize(
    ("args", "field"),
    [
        ({}, "pattern"),
        ({"pattern": ""}, "pattern"),
        ({"pattern": "a\nb"}, "pattern"),
        ({"pattern": "x", "mode": "everything"}, "mode"),
        ({"pattern": "x", "context_lines": -1}, "context_lines"),
        ({"pattern": "x", "max_results": 0}, "max_results"),
        ({"pattern": "x", "max_results": 100_000}, "max_results"),
        ({"pattern": "x", "filter": {"extensions": ["*/x"]}}, "filter.extensions"),
        ({"pattern": "x", "filter": {"exclude": ["!keep"]}}, "filter.exclude"),
        ({"pattern": "x", "filter": {"exclude": ["[z-a]"]}}, "filter.exclude"),
        ({"pattern": "x", "filter": {"exclude": ["src/a["]}}, "filter.exclude"),
        ({"pattern": "x", "filter": {"paths": [""]}}, "filter.paths"),
        ({"pattern": "x", "filter": {"colour": "red"}}, "filter.colour"),
        ({"pattern": "x", "whole_words": True}, "whole_words"),
        ({"cursor": "nonsense"}, "cursor"),
    ],
)
def test_bad_input_is_invalid_arguments_naming_the_field(search: Search, args: dict, field: str) -> None:
    res = search.err(args, "invalid_arguments")
    assert f"`{field}" in res.text, res.text


def test_bad_paths_name_the_field_and_change_nothing(tree: Path, search: Search) -> None:
    before = snapshot(tree)
    res = search.err({"pattern": "x", "filter": {"paths": ["src", "../../etc"]}}, "outside_roots")
    assert "filter.paths.1" in res.text
    res = search.err({"pattern": "x", "filter": {"paths": ["missing_dir"]}}, "not_found")
    assert "filter.paths.0" in res.text
    search.err('{"pattern": ', "invalid_arguments")
    assert snapshot(tree) == before


def test_python_engine_is_used_when_rg_is_missing(tree: Path, state_dir: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("TOOLDECK_RG", str(tree / "no-such-rg"))
    find_rg.cache_clear()
    try:
        assert find_rg() is None
        rt = Runtime.for_dirs([tree], state_dir=state_dir)
        engine = fs_module.pick_engine(rt)
        assert engine.name == "python"
        text = Search(rt).ok({"pattern": "deep_foo", "mode": "content"})
        assert "[engine: python]" in text and "src/deep/nested/mod.py" in text
    finally:
        monkeypatch.delenv("TOOLDECK_RG")
        find_rg.cache_clear()
    require("rg")
    assert find_rg() is not None


def test_registered_in_the_catalog_with_its_schema(tree: Path, state_dir: Path) -> None:
    box = build_toolbox(Runtime.for_dirs([tree], state_dir=state_dir))
    t = box.get("file_search")
    assert t is not None and t.annotations.read_only
    props = t.parameters["properties"]
    for name in ("pattern", "mode", "regex", "context_lines", "filter", "max_results", "whole_word", "count_only"):
        assert name in props, name
    assert props["max_results"]["default"] == 50 and props["regex"]["default"] is True
    res = box.call_sync("file_search", json.dumps({"pattern": "deep_foo"}))
    assert not res.is_error and "src/deep/nested/mod.py" in res.text
