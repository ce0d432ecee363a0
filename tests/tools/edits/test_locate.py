"""The fuzz ladder: exact, then trailing whitespace, then surrounding
whitespace, then Unicode punctuation; first position after the cursor."""

from __future__ import annotations

from tooldeck.tools.edits.locate import LEVELS, LineIndex, nearest


def test_levels_are_tried_in_order() -> None:
    index = LineIndex(["x = 1   ", "    y = 2", "say \u201chi\u201d \u2014 ok"])
    assert index.seek(["x = 1   "], 0).level == 0
    assert index.seek(["x = 1"], 0).level == 1
    assert index.seek(["y = 2"], 0).level == 2
    found = index.seek(['say "hi" - ok'], 0)
    assert found is not None and (found.start, LEVELS[found.level]) == (2, "unicode punctuation normalised")
    assert index.seek(["z"], 0) is None


def test_an_exact_match_later_wins_over_a_fuzzy_match_earlier() -> None:
    index = LineIndex(["  a", "b", "a", "b"])
    found = index.seek(["a", "b"], 0)
    assert found is not None and (found.start, found.level) == (2, 0)


def test_search_starts_at_the_cursor() -> None:
    index = LineIndex(["a", "b", "a", "b"])
    assert index.seek(["a", "b"], 1).start == 2
    assert index.seek(["a", "b"], 3) is None


def test_rare_line_probe_still_finds_patterns_starting_with_common_lines() -> None:
    lines = ["}"] * 500 + ["}", "unique()", "}"] + ["}"] * 500
    found = LineIndex(lines).seek(["}", "unique()", "}"], 0)
    assert found is not None and found.start == 500


def test_end_of_file_prefers_the_last_lines() -> None:
    index = LineIndex(["x", "end", "x", "end"])
    assert index.seek(["x", "end"], 0).start == 0
    assert index.seek(["x", "end"], 0, end_of_file=True).start == 2


def test_pattern_longer_than_the_file_is_not_found() -> None:
    assert LineIndex(["one"]).seek(["one", "two"], 0) is None


def test_nearest_window_is_the_one_sharing_most_lines() -> None:
    lines = ["def a():", "    return 1", "", "def b():", "    x = 2", "    return x"]
    cand = nearest(LineIndex(lines), ["def b():", "    x = 3", "    return x"])
    assert cand is not None and (cand.start, cand.equal) == (3, 2)
