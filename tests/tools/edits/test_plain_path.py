"""The bulk parse of the usual patch gives what the line-by-line parser gives.

:func:`plain.plain_sections` must answer only for patches the line parser
reads the same way: its chunks (anchors, old lines as the exact path's
needle, new lines) equal the parser's, the lazily parsed ``chunks`` of its
Updates equal the parser's, and where the line parser refuses a patch the
bulk parse does not answer. Applied to files, the bulk-parsed path writes
the same bytes and renders the same reply as the general path.
"""

from __future__ import annotations

from pathlib import Path

from hypothesis import given, settings
from hypothesis import strategies as st

from tooldeck.core.errors import ToolError
from tooldeck.tools.edits import engine
from tooldeck.tools.edits.exact import Replacement, apply_exact_bytes, apply_plain_bytes, as_lines
from tooldeck.tools.edits.plain import PlainChunks, plain_sections
from tooldeck.tools.edits.render import diff_of, render_outcome
from tooldeck.tools.edits.v4a_parser import Chunk, Patch, UpdateFile, parse_patch
from tooldeck.workspace.roots import Workspace

TRICKY = [
    " a", "-b", "+c", " ", "-", "+", "", "@@", "@@ a", "@@ b", "@@ -1,2 +1,2 @@ a", "@@   ", " @@ x", "  @@ y",
    "-@@ z", "+@@", " *** Update File: q", "  *** Add File: r", "+*** x", "\tt", "\\ No newline", " x ***",
    "*** End of File", "*** Update File: g", "*** Update File: h [hash=0123abcd]", "*** Move to: m", " \u00e9",
    "-\u201cq\u201d", "+ \u3000@@",
]
USUAL = [" a", " b", "-b", "+B", "+c", " c", "@@", "@@ a", "@@ b", "-", " ", "*** Update File: g"]


def text_of(lines: list[str], eol: str = "\n") -> str:
    return eol.join(["*** Begin Patch", "*** Update File: f", *lines, "*** End Patch"]) + eol


def as_plain(chunks: tuple[Chunk, ...]) -> PlainChunks:
    """What the bulk parse should make of the line parser's chunks."""
    return PlainChunks(
        ["\n".join(c.anchors) for c in chunks],
        [("\n" + "\n".join(c.old) + "\n").encode() if c.old else b"" for c in chunks],
        [("\n".join(c.new) + "\n").encode() if c.new else b"" for c in chunks],
    )


def check_same(text: str) -> bool:
    """True when the bulk parse answered (and agreed with the line parser)."""
    try:
        slow: Patch | ToolError = parse_patch(text, bulk=False)
    except ToolError as exc:
        slow = exc
    sections = plain_sections(text.replace("\r\n", "\n"))
    if sections is None:
        return False
    assert isinstance(slow, Patch), f"the bulk parse accepted what the parser refuses: {slow}"
    quick = parse_patch(text)
    assert len(quick.ops) == len(slow.ops)
    for q, s in zip(quick.ops, slow.ops, strict=True):
        assert isinstance(q, UpdateFile) and isinstance(s, UpdateFile)
        assert (q.path, q.move_to, q.line, q.expected_hash) == (s.path, s.move_to, s.line, s.expected_hash)
        assert q.plain == as_plain(s.chunks)
        assert q.chunks == s.chunks  # parsed lazily from the section's text
    return True


@settings(max_examples=600, deadline=None)
@given(lines=st.lists(st.sampled_from(TRICKY), min_size=1, max_size=14), crlf=st.booleans())
def test_the_bulk_parse_equals_the_line_parser_or_steps_aside(lines: list[str], crlf: bool) -> None:
    check_same(text_of(lines, "\r\n" if crlf else "\n"))


@settings(max_examples=300, deadline=None)
@given(lines=st.lists(st.sampled_from(USUAL), min_size=1, max_size=14))
def test_the_bulk_parse_answers_usual_patches_the_same(lines: list[str]) -> None:
    check_same(text_of(lines))


def test_the_bulk_parse_answers_the_usual_patch() -> None:
    second = ["*** Update File: g [hash=0123abcd]", "+x"]
    text = text_of(["@@ def f():", " a", "-b", "+B", " c", "@@", " d", "-e", *second])
    assert check_same(text)
    assert check_same(text_of(["@@ class A", "@@ def run(self):", " a", "-b", "+c"]))  # stacked anchors
    assert check_same(text_of(["@@ -1,2 +1,2 @@ def f():", "-a", "+b"]))  # a unified-diff range header


def test_the_bulk_parse_steps_aside_for_what_it_cannot_read() -> None:
    for lines in (
        ["@@", " a", "", " b"],  # an empty line
        ["@@", " a", "*** End of File"],  # another marker
        ["@@", "  @@ padded", "-a"],  # a padded header
        ["@@", " *** Update File: x", "-a"],  # an op line that reads as a marker once stripped
        ["@@", "-@@ a", "+b"],  # ... or as a header
        ["@@", " a", "@@"],  # a header with no lines (the parser's error)
        [" ", "-a"],  # a blank line the parser skips before the first chunk
    ):
        assert plain_sections(text_of(lines)) is None, lines
    assert plain_sections("\n" + text_of([" a", "-b"])) is None  # not starting with the Begin marker
    assert plain_sections(text_of(["-a", "+b"]).replace("*** End Patch", "*** End Patch\n\n  ")) is not None


# --- applied -----------------------------------------------------------------------

FILE_LINES = st.lists(st.sampled_from(["a", "b", "", "  c", "c", "d d", "}", "é ✓", "x = 1  "]), min_size=1, max_size=9)


@st.composite
def file_and_patch(draw: st.DrawFn) -> tuple[bytes, list[str]]:
    lines = draw(FILE_LINES)
    eol = draw(st.sampled_from(["\n", "\r\n"]))
    data = (draw(st.sampled_from(["", "\ufeff"])) + eol.join(lines) + draw(st.sampled_from([eol, ""]))).encode()
    body: list[str] = []
    for _ in range(draw(st.integers(1, 3))):
        start = draw(st.integers(0, len(lines) - 1))
        block = lines[start : start + draw(st.integers(0, min(4, len(lines) - start)))]
        body.append("@@ " + lines[draw(st.integers(0, start - 1))] if start and draw(st.booleans()) else "@@")
        for j, line in enumerate(block):
            body.append(draw(st.sampled_from([" ", " ", "-"])) + line)
            if draw(st.booleans()):
                body.append(f"+new {j}")
        if not block:
            body.append("+added")
    return data, body


@settings(max_examples=400, deadline=None)
@given(case=file_and_patch())
def test_the_bulk_parsed_splice_equals_the_exact_path(case: tuple[bytes, list[str]]) -> None:
    data, body = case
    text = text_of(body)
    (slow,) = parse_patch(text, bulk=False).ops
    (quick,) = parse_patch(text).ops
    assert isinstance(slow, UpdateFile) and isinstance(quick, UpdateFile) and quick.plain is not None
    general = apply_exact_bytes(data, slow.chunks)
    bulk = apply_plain_bytes(data, quick.plain)
    if general is None:
        assert bulk is None
        return
    assert bulk is not None
    assert bulk[0] == general[0]
    assert [as_lines(r) for r in bulk[1]] == [Replacement(*r) for r in general[1]]
    for limit in (None, 0, 3):  # shown and merely counted hunks alike
        assert diff_of(bulk[1], limit) == diff_of(general[1], limit)


@settings(max_examples=60, deadline=None)
@given(case=file_and_patch())
def test_the_reply_and_the_file_are_the_general_paths(tmp_path_factory: object, case: tuple[bytes, list[str]]) -> None:
    data, body = case
    text = text_of(body)
    results = []
    for bulk in (True, False):
        root = Path(tmp_path_factory.mktemp("plain"))  # type: ignore[attr-defined]
        (root / "f").write_bytes(data)
        engine.parse_patch = lambda t, bulk=bulk: parse_patch(t, bulk=bulk)  # type: ignore[misc]
        try:
            reply = render_outcome(engine.apply_patch_text(Workspace.from_dirs([str(root)]), text))
        except ToolError as exc:
            reply = f"{exc.code}: {exc.message}"
        finally:
            engine.parse_patch = parse_patch
        results.append((reply, (root / "f").read_bytes()))
    assert results[0] == results[1]
