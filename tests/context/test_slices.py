"""The lines a slice shows: found by one scan of the text, the same lines a
search of each line finds."""

from __future__ import annotations

import random
import re

from tooldeck.context.query import parse_query
from tooldeck.context.slices import _matching_lines, slice_ranges


def test_matching_lines_equal_a_search_of_each_line():
    rnd = random.Random(3)
    words = ["retry", "Retry", "retries", "x_retry", "pool", "POOL", "spool", "", " ", "\t", "é", "İ", "_", "9"]
    pattern = re.compile(r"\b(retry|pool|İ)\b", re.IGNORECASE)
    for _ in range(300):
        lines = [" ".join(rnd.choice(words) for _ in range(rnd.randint(0, 6))) for _ in range(rnd.randint(0, 30))]
        text = "\n".join(lines) + rnd.choice(["", "\n"])
        expected = [i for i, line in enumerate(text.split("\n"), 1) if pattern.search(line)]
        assert list(_matching_lines(text, pattern)) == expected


def test_slice_ranges_surround_the_lines_naming_the_task():
    text = "\n".join(f"line {i}" for i in range(1, 101)).replace("line 50", "the retry loop")
    ranges = slice_ranges(text, parse_query("fix the retry loop"), None)
    assert [(r.start, r.end) for r in ranges] == [(44, 56)]


def test_the_term_pattern_finds_the_lines_ignorecase_finds():
    """Lowercased text and lowercase terms: the lines an ASCII case-insensitive search finds."""
    from tooldeck.context.slices import term_pattern

    rnd = random.Random(5)
    words = ["Retry", "RETRY", "retry_x", "maxRetries", "max_retries", "Max_Retries", "pool", "Pool.", "é", "x", ""]
    query = parse_query("the retry of max_retries in the Pool")
    reference = re.compile(r"\b(max_retries|retry|max|retries|pool)\b", re.IGNORECASE | re.ASCII)
    pattern = term_pattern(query)
    assert pattern is not None
    for _ in range(200):
        text = "\n".join(" ".join(rnd.choice(words) for _ in range(5)) for _ in range(rnd.randint(1, 20)))
        expected = [i for i, line in enumerate(text.split("\n"), 1) if reference.search(line)]
        assert list(_matching_lines(text.lower(), pattern)) == expected
    assert term_pattern(parse_query("a b")) is None


def test_outline_lists_a_doc_pages_headings_and_nothing_else() -> None:
    from tooldeck.context.slices import outline_ranges, outline_view

    md = "# Title\n\nintro\n\n## Part one\ntext\n```\n# a comment in a fence\n```\nSetext\n------\n#### Deep\n"
    assert [r.start for r in outline_ranges(md, "docs/a.md")] == [1, 5, 10]
    rst = "=====\nTitle\n=====\n\nIntro\n\nSection\n-------\n\ntext\n\nSub\n~~~\n\n.. autofunction:: x\n"
    assert [r.start for r in outline_ranges(rst, "docs/a.rst")] == [2, 7]  # the page's first two levels
    assert outline_ranges(md, "src/a.py") == ()  # code has its codemap
    assert outline_view("docs/a.md", "no headings at all\n") is None
    view = outline_view("docs/a.md", md)
    assert view is not None and "## Part one" in view[1] and "intro" not in view[1]


def _all_ranges(text: str, query: object, cm: object) -> tuple:
    """The slices as they were made before the early stop: every matching
    line searched, then merged, then cut at the budget (the reference)."""
    from tooldeck.context.slices import CONTEXT_LINES, MAX_SLICE_LINES, term_pattern
    from tooldeck.state.selections import LineRange, merge_ranges

    n = text.count("\n") + 1
    names = {t.lower() for t in query.identifiers} | set(query.words)  # type: ignore[attr-defined]
    found = [
        LineRange(s.line, min(s.end_line, s.line + 80), f"{s.kind} {s.name}")
        for s in (cm.symbols if cm is not None else [])  # type: ignore[attr-defined]
        if s.name.lower() in names and s.end_line >= s.line
    ]
    pattern = term_pattern(query)  # type: ignore[arg-type]
    lines = text.lower().split("\n")
    found += [
        LineRange(max(1, i - CONTEXT_LINES), min(n, i + CONTEXT_LINES))
        for i, line in enumerate(lines, 1)
        if pattern is not None and pattern.search(line)
    ]
    out, total = [], 0
    for r in merge_ranges(found):
        if total + r.end - r.start + 1 > MAX_SLICE_LINES:
            break
        out.append(r)
        total += r.end - r.start + 1
    return tuple(out)


def test_slices_of_a_file_naming_the_task_on_many_lines_are_those_of_a_full_search() -> None:
    """The search of a file stops once the lines below cannot change its
    slices (the range where the budget ran out starts no later than the next
    line's range could, so they can only lengthen it): the same
    ranges, and descriptions, as searching every line. Files with matches
    dense, sparse and in bursts, with definitions the task names anywhere."""
    from tooldeck.codemap.model import Codemap, Symbol

    rnd = random.Random(11)
    query = parse_query("fix the retry loop in RetryPolicy")
    for _ in range(150):
        size = rnd.randint(50, 3000)
        density = rnd.choice([0.01, 0.05, 0.2, 0.6, 1.0])
        burst = rnd.randint(1, size)
        lines = [
            "x = retry(y)" if rnd.random() < density or abs(i - burst) < 20 else f"other {i}"
            for i in range(1, size + 1)
        ]
        text = "\n".join(lines)
        symbols = [
            Symbol(rnd.choice(["RetryPolicy", "loop", "x"]), "def", "", line=start, end_line=start + rnd.randint(0, 90))
            for start in sorted(rnd.sample(range(1, size + 1), k=min(size, rnd.randint(0, 6))))
        ]
        cm = Codemap("a.py", "python", [], symbols, set(), "h", size)
        assert slice_ranges(text, query, cm) == _all_ranges(text, query, cm)
        assert slice_ranges(text, query, None) == _all_ranges(text, query, None)
