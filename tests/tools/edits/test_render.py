"""Annotated diffs built from the planner's replacements."""

from __future__ import annotations

from tooldeck.tools.edits.plan import Replacement
from tooldeck.tools.edits.render import diff_of


def test_hunk_headers_follow_earlier_insertions() -> None:
    reps = [
        Replacement(0, ["a"], ["a", "a2", "a3"]),  # +2 lines
        Replacement(9, ["x", "y", "z"], ["x", "Y", "z"]),
    ]
    diff = diff_of(reps)
    assert diff.lines == ["@@ -1,1 +1,3 @@", " a", "+a2", "+a3", "@@ -10,3 +12,3 @@", " x", "-y", "+Y", " z"]
    assert (diff.hunks, diff.ins, diff.dels) == (2, 3, 1)


def test_separate_runs_in_one_chunk_are_split_by_difflib() -> None:
    old = ["h", "one", "k1", "k2", "k3", "two", "t"]
    new = ["h", "ONE", "k1", "k2", "k3", "TWO", "t"]
    diff = diff_of([Replacement(0, old, new)])
    assert (diff.hunks, diff.ins, diff.dels) == (2, 2, 2)
    assert " k2" not in diff.lines  # unchanged middle collapsed to one line of context each side


def test_hunks_past_the_limit_are_counted_not_shown() -> None:
    reps = [Replacement(i * 10, [f"l{i}"], [f"L{i}"]) for i in range(50)]
    diff = diff_of(reps, limit=6)
    assert len(diff.lines) == 6 and diff.hidden == 48
    assert (diff.hunks, diff.ins, diff.dels) == (50, 50, 50)


def test_counted_hunks_add_up_like_shown_ones() -> None:
    """Past the limit a hunk is only counted; its +/- counts match the shown diff's."""
    import random

    rng = random.Random(7)
    for _ in range(300):
        old = [rng.choice("abcde") for _ in range(rng.randint(0, 6))]
        new = [rng.choice("abcde") for _ in range(rng.randint(0, 6))]
        if old == new:
            continue
        shown = diff_of([Replacement(0, old, new)])
        counted = diff_of([Replacement(0, ["pad"], ["PAD"]), Replacement(5, old, new)], limit=0)
        # one changed run, or several that difflib splits: the totals agree either way
        assert (counted.ins - 1, counted.dels - 1) == (shown.ins, shown.dels), (old, new)
        assert counted.hidden == 2 and counted.lines == []


def test_counted_spliced_chunks_match_their_lines() -> None:
    """The bulk path's chunks (old and new lines joined as bytes) are counted
    like the same chunks as lines, pure additions and removals included."""
    import random

    from tooldeck.tools.edits.exact import Spliced

    def joined(lines: list[str], lead: bytes) -> bytes:
        return lead + "\n".join(lines).encode() + b"\n" if lines else b""

    rng = random.Random(11)
    for _ in range(300):
        old = [rng.choice("abcde") for _ in range(rng.randint(0, 5))]
        new = [rng.choice("abcde") for _ in range(rng.randint(0, 5))]
        spliced = Spliced(0, joined(old, b"\n"), joined(new, b""), b"")
        as_bytes = diff_of([Replacement(0, ["pad"], ["PAD"]), spliced], limit=0)
        as_text = diff_of([Replacement(0, ["pad"], ["PAD"]), Replacement(0, old, new)], limit=0)
        assert (as_bytes.hunks, as_bytes.ins, as_bytes.dels) == (as_text.hunks, as_text.ins, as_text.dels), (old, new)
