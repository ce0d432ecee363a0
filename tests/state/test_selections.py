"""Line-range algebra of slices entries, and the auto → manual switch."""

from __future__ import annotations

from tooldeck.state.selections import LineRange, SelectedFile, Selection, merge_ranges, subtract_ranges


def spans(ranges: tuple[LineRange, ...]) -> list[tuple[int, int]]:
    return [(r.start, r.end) for r in ranges]


def test_merge_joins_overlapping_and_adjacent_ranges_keeping_descriptions():
    merged = merge_ranges([LineRange(10, 20, "parser"), LineRange(1, 3), LineRange(21, 25, "lexer"), LineRange(4, 4)])
    assert spans(merged) == [(1, 4), (10, 25)]
    assert merged[1].description == "parser; lexer"
    assert spans(merge_ranges([LineRange(5, 9), LineRange(11, 12)])) == [(5, 9), (11, 12)]
    assert merge_ranges([LineRange(1, 5, "a"), LineRange(2, 3, "a")])[0].description == "a"


def test_subtract_splits_trims_and_drops():
    base = (LineRange(1, 10, "d"), LineRange(20, 30))
    assert spans(subtract_ranges(base, [LineRange(4, 6)])) == [(1, 3), (7, 10), (20, 30)]
    assert subtract_ranges(base, [LineRange(4, 6)])[1].description == "d"
    assert spans(subtract_ranges(base, [LineRange(1, 10)])) == [(20, 30)]
    assert spans(subtract_ranges(base, [LineRange(8, 25)])) == [(1, 7), (26, 30)]
    assert subtract_ranges(base, [LineRange(1, 100)]) == ()


def test_manual_off_keeps_auto_entries_as_manual():
    sel = Selection(
        {"/r/a.py": SelectedFile("/r/a.py", "full"), "/r/b.py": SelectedFile("/r/b.py", "codemap", auto=True)}
    )
    sel.manual_off()
    assert not sel.auto_codemaps
    assert sel.files["/r/b.py"] == SelectedFile("/r/b.py", "codemap", auto=False)
