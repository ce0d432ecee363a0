"""The exact fast path gives what the line-by-line ladder gives, or steps aside.

:func:`exact.apply_exact` must be the first level of the ladder, nothing
more: on every file and patch where it answers, its text and replacements
equal :func:`plan.apply_ladder`'s; where the ladder would need a fuzzier
level, an out-of-order chunk or an end-of-file pin, it returns None.
"""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st

from tooldeck.core.errors import ToolError
from tooldeck.tools.edits.exact import apply_exact
from tooldeck.tools.edits.plan import Replacement, apply_chunks, apply_ladder
from tooldeck.tools.edits.v4a_parser import Chunk, UpdateFile, parse_patch

ALPHABET = ["a", "b", "", "  c", "c", "d d", "}", "x = 1  ", "\u201cq\u201d"]
LINES = st.lists(st.sampled_from(ALPHABET), min_size=1, max_size=25)


def chunks_of(patch_lines: list[str]) -> tuple[Chunk, ...]:
    (op,) = parse_patch("\n".join(["*** Begin Patch", "*** Update File: f", *patch_lines, "*** End Patch"])).ops
    assert isinstance(op, UpdateFile)
    return op.chunks


def ladder(text: str, chunks: tuple[Chunk, ...]) -> tuple[str, list[Replacement]] | str:
    try:
        new, reps, _notes = apply_ladder(text, chunks, "f")
    except ToolError as exc:
        return exc.code
    return new, reps


@st.composite
def file_and_patch(draw: st.DrawFn) -> tuple[str, list[str]]:
    lines = draw(LINES)
    eol = draw(st.sampled_from(["\n", "\r\n"]))
    text = draw(st.sampled_from(["", "\ufeff"])) + eol.join(lines) + draw(st.sampled_from([eol, ""]))
    body: list[str] = []
    for _ in range(draw(st.integers(1, 3))):
        start = draw(st.integers(0, len(lines) - 1))
        size = draw(st.integers(0, min(4, len(lines) - start)))
        block = lines[start : start + size]
        if draw(st.booleans()) and start > 0:
            body.append("@@ " + lines[draw(st.integers(0, start - 1))])
        else:
            body.append("@@")
        for j, line in enumerate(block):
            kind = draw(st.sampled_from([" ", " ", "-", "fuzz"]))
            if kind == "fuzz":  # a line the ladder can only match fuzzily
                body.append(" " + line.strip() + " ")
            else:
                body.append(kind + line)
            if draw(st.booleans()):
                body.append(f"+new {j}")
        if not block:
            body.append("+added")
        if draw(st.integers(0, 9)) == 0:
            body.append("*** End of File")
    return text, body


@settings(max_examples=400, deadline=None)
@given(case=file_and_patch())
def test_the_fast_path_equals_the_ladder_or_steps_aside(case: tuple[str, list[str]]) -> None:
    text, body = case
    chunks = chunks_of(body)
    quick = apply_exact(text, chunks)
    if quick is None:
        return
    new, spans = quick
    assert ladder(text, chunks) == (new, spans)


def test_the_fast_path_answers_the_usual_patch() -> None:
    text = "".join(f"def f{i}():\n    return {i}\n\n" for i in range(50))
    chunks = chunks_of(
        ["@@ def f3():", "-    return 3", "+    return 33", "@@", " def f9():", "-    return 9", "+    pass"]
    )
    quick = apply_exact(text, chunks)
    assert quick is not None
    assert quick[0] == text.replace("return 3\n", "return 33\n").replace("return 9\n", "pass\n")
    assert [s[0] for s in quick[1]] == [10, 27]  # 0-based lines of the replaced blocks


def test_crlf_bom_and_a_missing_last_newline_are_kept_as_the_ladder_keeps_them() -> None:
    text = "\ufeffa\r\nb\r\nc"
    chunks = chunks_of(["@@", " a", "-b", "+B"])
    quick = apply_exact(text, chunks)
    assert quick is not None and quick[0] == "\ufeffa\r\nB\r\nc\r\n"
    assert apply_chunks(text, chunks, "f")[0] == apply_ladder(text, chunks, "f")[0] == quick[0]


def test_a_fuzzy_chunk_or_an_end_of_file_pin_goes_to_the_ladder() -> None:
    text = "x = 1   \ny\n"
    assert apply_exact(text, chunks_of(["@@", "-x = 1", "+x = 2"])) is None
    assert apply_exact(text, chunks_of(["@@", "-y", "+z", "*** End of File"])) is None
    new, _reps, notes = apply_chunks(text, chunks_of(["@@", "-x = 1", "+x = 2"]), "f")
    assert new == "x = 2\ny\n" and notes  # the ladder matched it, and said how
