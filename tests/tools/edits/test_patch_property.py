"""Property: one exact chunk lands where a brute-force search says it should."""

from __future__ import annotations

import tempfile
from pathlib import Path

from hypothesis import given, settings
from hypothesis import strategies as st

from tooldeck.tools.edits.engine import apply_patch_text
from tooldeck.workspace.roots import Workspace

LINES = st.lists(st.sampled_from(["a", "b", "", "  c", "d d", "}"]), min_size=1, max_size=30)


def first_index(lines: list[str], block: list[str]) -> int:
    return next(i for i in range(len(lines) - len(block) + 1) if lines[i : i + len(block)] == block)


@settings(max_examples=80, deadline=None)
@given(lines=LINES, data=st.data())
def test_single_chunk_matches_brute_force(lines: list[str], data: st.DataObject) -> None:
    start = data.draw(st.integers(0, len(lines) - 1))
    end = data.draw(st.integers(start + 1, len(lines)))
    target = data.draw(st.integers(start, end - 1))
    block = lines[start:end]
    ops = [(" " if i != target else "-") + line for i, line in enumerate(lines[start:end], start)]
    ops.insert(target - start + 1, "+NEW")
    patch = "\n".join(["*** Begin Patch", "*** Update File: f.txt", "@@", *ops, "*** End Patch"])
    at = first_index(lines, block)
    changed = [x if i != target - start else "NEW" for i, x in enumerate(block)]
    expected = lines[:at] + changed + lines[at + len(block) :]
    with tempfile.TemporaryDirectory() as d:
        path = Path(d) / "f.txt"
        path.write_text("\n".join(lines) + "\n")
        apply_patch_text(Workspace.from_dirs([d]), patch)
        assert path.read_text() == "\n".join(expected) + "\n"
