"""file_search content mode, on both engines: ignore rules, binary and minified
files, pagination, literal fallback, whole words, counts, filters, context,
multi-root workspaces."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

from tests.tools.search.search_helpers import Search, cursor_of, parse_content, write
from tooldeck.runtime import Runtime


def paths_of(text: str) -> set[str]:
    return {h.path for h in parse_content(text)}


def test_ignore_rules_and_deny_list_are_honoured(search: Search) -> None:
    found = paths_of(search.ok({"pattern": "foo", "mode": "content", "max_results": 500}))
    # searched: sources, hidden .github/, a re-included log, odd but textual files
    for rel in ("src/app.py", ".github/workflows/ci.yml", "keep.log", "crlf.txt", "no_newline.txt", "latin1.txt"):
        assert rel in found, rel
    # left out: .gitignore (root and nested), .git/info/exclude, .tooldeckignore, deny list, symlinks
    for rel in (
        "app.log",
        "secret/token.py",
        "src/generated.py",
        "excluded.txt",
        "private/notes.txt",
        "node_modules/pkg/index.js",
        "build/out.py",
        ".git/HEAD",
        "link_to_util.py",
    ):
        assert rel not in found, rel


def test_binary_files_are_skipped(search: Search) -> None:
    text = search.ok({"pattern": "binary foo", "mode": "content"})
    assert "— none" in text and "bin.dat" not in text


def test_minified_lines_are_cut_around_the_match(tree: Path, search: Search) -> None:
    line = "var a=1;" * 20_000 + "needle()" + ";b=2" * 20_000
    write(tree, "dist_min/app.min.js", line + "\nshort needle line\n")
    text = search.ok({"pattern": "needle", "mode": "content"})
    hits = parse_content(text)
    assert [h.line for h in hits] == [1, 2]
    long_hit = hits[0]
    assert "needle()" in long_hit.text
    assert len(long_hit.text) < 400 and f"[line of {len(line):,} chars cut]" in long_hit.text
    assert hits[1].text == "short needle line"
    assert len(text) < 1500  # the 320 KB line was not dumped


def test_pagination_cursor_continues_until_all_lines_were_seen(tree: Path, search: Search) -> None:
    for i in range(7):
        write(tree, f"many/f{i}.txt", "".join(f"hit {i}.{k}\n" for k in range(5)))
    full = parse_content(search.ok({"pattern": "hit", "mode": "content", "max_results": 500}))
    assert len(full) == 35
    first = search.ok({"pattern": "hit", "mode": "content", "max_results": 8})
    assert "— 35 matching lines in 7 files; showing 1-8" in first
    assert "[27 more matching lines in 6 files not shown" in first
    pages, text = [first], first
    while (cur := cursor_of(text)) is not None:
        text = search.ok({"cursor": cur})
        pages.append(text)
    assert len(pages) == 5
    assert "showing 33-35" in pages[-1] and "more matching" not in pages[-1]
    seen = [h for p in pages for h in parse_content(p)]
    assert seen == full
    # a page that starts inside a file names that file again
    assert parse_content(pages[1])[0].path == "many/f1.txt"


def test_cursor_may_change_page_size_but_not_the_query(search: Search) -> None:
    first = search.ok({"pattern": "foo", "mode": "content", "max_results": 2})
    cur = cursor_of(first)
    assert cur is not None
    bigger = search.ok({"cursor": cur, "max_results": 4})
    assert "showing 3-6" in bigger
    res = search.err({"cursor": cur, "pattern": "bar"}, "invalid_arguments")
    assert "`cursor`" in res.text and "`pattern`" in res.text
    search.err({"cursor": "fs:not-base64!"}, "invalid_arguments")
    search.err({"cursor": "p:abc"}, "not_found")  # the Toolbox pager's cursors are its own


def test_invalid_regex_falls_back_to_literal_and_says_so(tree: Path, search: Search) -> None:
    write(tree, "calls.py", "x = foo(1\ny = foo\n")
    text = search.ok({"pattern": "foo(1", "mode": "content"})
    assert "is not a valid regex" in text and "searched for the literal text" in text
    assert '"foo(1" (literal)' in text
    assert [(h.path, h.line) for h in parse_content(text)] == [("calls.py", 1)]


def test_literal_mode_does_not_interpret_regex(tree: Path, search: Search) -> None:
    write(tree, "dots.txt", "a.b\naxb\n")
    regex = parse_content(search.ok({"pattern": "a.b", "mode": "content", "filter": {"paths": ["dots.txt"]}}))
    literal = parse_content(
        search.ok({"pattern": "a.b", "regex": False, "mode": "content", "filter": {"paths": ["dots.txt"]}})
    )
    assert [h.line for h in regex] == [1, 2]
    assert [h.line for h in literal] == [1]


def test_whole_word(tree: Path, search: Search) -> None:
    write(tree, "words.txt", "foo\nfood\nbar_foo\nfoo-bar\n(foo)\nfoofoo\n")
    args = {"pattern": "foo", "mode": "content", "filter": {"paths": ["words.txt"]}}
    assert [h.line for h in parse_content(search.ok(args))] == [1, 2, 3, 4, 5, 6]
    assert [h.line for h in parse_content(search.ok({**args, "whole_word": True}))] == [1, 4, 5]


def test_count_only_lists_files_by_count_and_pages(tree: Path, search: Search) -> None:
    write(tree, "counts/a.txt", "x\n" * 3)
    write(tree, "counts/b.txt", "x\n" * 5)
    write(tree, "counts/c.txt", "x\n")
    args = {"pattern": "^x$", "mode": "content", "count_only": True, "max_results": 2}
    text = search.ok(args)
    head = text.splitlines()[0]
    assert head.startswith("content matches for /^x$/ (regex)") and "— 9 matching lines in 3 files" in head
    assert [ln.split() for ln in text.splitlines()[1:3]] == [["5", "counts/b.txt"], ["3", "counts/a.txt"]]
    cur = cursor_of(text)
    assert cur is not None and "[1 more file not shown" in text
    rest = search.ok({"cursor": cur})
    assert [ln.split() for ln in rest.splitlines() if ln.startswith("  ")] == [["1", "counts/c.txt"]]


def test_filters_extensions_exclude_paths(search: Search) -> None:
    base = {"pattern": "foo", "mode": "content", "max_results": 500}
    py = paths_of(search.ok({**base, "filter": {"extensions": ".py, js"}}))
    assert py == {"src/app.py", "src/util.py", "src/deep/nested/mod.py", "src/web/app.js"}
    no_docs = paths_of(search.ok({**base, "filter": {"exclude": ["docs/", "*.md", "src/deep"]}}))
    assert "docs/guide.md" not in no_docs and "README.md" not in no_docs
    assert "src/deep/nested/mod.py" not in no_docs and "src/app.py" in no_docs
    only = paths_of(search.ok({**base, "filter": {"paths": ["src/web", "docs/guide.md"]}}))
    assert only == {"src/web/app.js", "src/web/style.css", "docs/guide.md"}


def test_context_lines_show_neighbours_and_gaps(tree: Path, search: Search) -> None:
    write(tree, "ctx.txt", "".join(f"line {i}\n" for i in range(1, 21)).replace("line 5\n", "target 5\n"))
    text = search.ok({"pattern": "target|line 15", "mode": "content", "context_lines": 2})
    hits = parse_content(text)
    assert [(h.line, h.is_match) for h in hits] == [
        (3, False),
        (4, False),
        (5, True),
        (6, False),
        (7, False),
        (13, False),
        (14, False),
        (15, True),
        (16, False),
        (17, False),
    ]
    assert "  --" in text  # the gap between 7 and 13
    assert "  4- line 4" in text and "  5: target 5" in text


def test_multi_root_workspace(tmp_path: Path, make_search: Callable[[list[Path]], Search]) -> None:
    one, two = tmp_path / "one", tmp_path / "two"
    write(one, "a.py", "shared_name = 1\n")
    write(two, "b.py", "shared_name = 2\n")
    write(two, ".gitignore", "ignored.py\n")
    write(two, "ignored.py", "shared_name = 3\n")
    search = make_search([one, two])
    text = search.ok({"pattern": "shared_name", "mode": "content"})
    assert [(h.path, h.line) for h in parse_content(text)] == [("a.py", 1), (str(two / "b.py"), 1)]
    assert "2 matching lines in 2 files" in text
    only_two = search.ok({"pattern": "shared_name", "mode": "content", "filter": {"paths": [str(two)]}})
    assert [h.path for h in parse_content(only_two)] == [str(two / "b.py")]


def test_no_match_says_what_is_not_searched(search: Search) -> None:
    text = search.ok({"pattern": "zzz_absent_zzz", "mode": "content"})
    assert "— none" in text and ".gitignore" in text


def test_page_stops_at_the_output_budget_and_the_cursor_loses_nothing(
    tree: Path, state_dir: Path, engine: str, search: Search
) -> None:
    write(tree, "wide.txt", "".join(f"hit {i:03d} " + "x" * 150 + "\n" for i in range(100)))
    args = {"pattern": "^hit", "mode": "content", "max_results": 100}
    full = parse_content(search.ok(args))
    assert len(full) == 100
    rt = Runtime.for_dirs([tree], state_dir=state_dir, budget_tokens=1000, settings={"search_engine": engine})
    small = Search(rt)
    text = small.ok(args)
    first = parse_content(text)
    assert 5 < len(first) < 100 and len(text) < 4500
    pages = [first]
    while (cur := cursor_of(text)) is not None:
        text = small.ok({"cursor": cur})
        pages.append(parse_content(text))
    assert [h for p in pages for h in p] == full
