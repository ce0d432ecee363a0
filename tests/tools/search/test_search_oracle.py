"""file_search content results equal ripgrep's, run directly as the oracle, for
both engines: the ripgrep engine and the pure-Python fallback."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.tools.search.search_helpers import Search, parse_content, rg_oracle

pytestmark = pytest.mark.requires("rg")

# (file_search arguments, the same query as rg flags)
QUERIES: list[tuple[dict, tuple[str, ...]]] = [
    ({"pattern": "foo"}, ()),
    ({"pattern": r"def \w+\("}, ()),
    ({"pattern": "Foo"}, ()),
    ({"pattern": "^import"}, ()),
    ({"pattern": "foo$"}, ()),
    ({"pattern": "a.b"}, ()),
    ({"pattern": "a.b", "regex": False}, ("--fixed-strings",)),
    ({"pattern": "foo", "whole_word": True}, ("--word-regexp",)),
    ({"pattern": "café"}, ()),
    ({"pattern": r"\d{3,}"}, ()),
    ({"pattern": "(?i)FOO"}, ()),
    ({"pattern": "foo|bar"}, ()),
    ({"pattern": r"\bfoo_?\w*"}, ()),
    ({"pattern": "foo", "filter": {"extensions": ["py"]}}, ("--type-add", "x:*.py", "-t", "x")),
    ({"pattern": "foo", "filter": {"exclude": ["docs/", "*.md"]}}, ("-g", "!docs/", "-g", "!*.md")),
    ({"pattern": "o", "filter": {"paths": ["src/web", "docs"]}}, ()),
    ({"pattern": "foo", "context_lines": 1}, ("--context", "1")),
    ({"pattern": "return", "context_lines": 2}, ("--context", "2")),
]


@pytest.mark.parametrize(("args", "flags"), QUERIES, ids=[str(a) for a, _ in QUERIES])
def test_content_results_equal_ripgrep(tree: Path, search: Search, args: dict, flags: tuple[str, ...]) -> None:
    paths = tuple((args.get("filter") or {}).get("paths") or ())
    expected = rg_oracle(tree, args["pattern"], *flags, paths=paths)
    assert any(h.is_match for h in expected), "the query must match something"
    text = search.ok({**args, "mode": "content", "max_results": 500})
    got = parse_content(text)
    if args.get("context_lines"):
        assert got == expected
    else:
        assert got == [h for h in expected if h.is_match]
    n_files = len({h.path for h in expected if h.is_match})
    n_lines = sum(h.is_match for h in expected)
    assert f"— {n_lines:,} matching line{'s' if n_lines != 1 else ''} in {n_files} file" in text


def test_count_only_equals_rg_count(tree: Path, search: Search) -> None:
    expected = {h.path for h in rg_oracle(tree, "foo")}
    text = search.ok({"pattern": "foo", "mode": "content", "count_only": True, "max_results": 500})
    rows = [ln.split() for ln in text.splitlines() if ln.startswith("  ")]
    got = {path: int(count) for count, path in rows}
    assert set(got) == expected
    for path, count in got.items():
        assert count == sum(1 for h in rg_oracle(tree, "foo") if h.path == path)
    counts = [int(c) for c, _ in rows]
    assert counts == sorted(counts, reverse=True)  # most matches first
