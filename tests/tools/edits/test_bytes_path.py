"""The exact path on a file's bytes gives what the line-by-line ladder gives.

The planner hands an Update's file to :func:`exact.apply_exact_bytes` as the
bytes read (no decoded copy); the parser builds each chunk's old and new
lines in the loop that reads them. Both can go wrong in ways the text-level
property test cannot see (a multi-byte character, a BOM or CRLF on bytes, an
empty context line dropped from one side only), so these tests apply real
patches to real files and compare the bytes on disk with the ladder's result
on the decoded text, and check the parser's lists against the chunk's lines.
"""

from __future__ import annotations

from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from tooldeck.core.errors import ErrorCode, ToolError
from tooldeck.tools.edits.engine import apply_patch_text
from tooldeck.tools.edits.exact import apply_exact_bytes
from tooldeck.tools.edits.plan import apply_ladder
from tooldeck.tools.edits.v4a_parser import UpdateFile, parse_patch
from tooldeck.workspace.roots import Workspace


def P(*lines: str) -> str:
    return "\n".join(["*** Begin Patch", *lines, "*** End Patch"]) + "\n"


def ladder_bytes(data: bytes, patch: str) -> bytes:
    """What the general path (the whole ladder, on text) makes of ``data``."""
    (op,) = parse_patch(patch).ops
    assert isinstance(op, UpdateFile)
    new, _reps, _notes = apply_ladder(data.decode("utf-8"), op.chunks, "f")
    return new.encode("utf-8")


def applied(tmp_path: Path, data: bytes, patch: str) -> bytes:
    (tmp_path / "f").write_bytes(data)
    apply_patch_text(Workspace.from_dirs([str(tmp_path)]), patch)
    return (tmp_path / "f").read_bytes()


CASES = {
    "non-ASCII lines": (
        "é = 1\nname = 'Zoë'\n# ünïcödé ✓\nx = 2\n".encode(),
        P("*** Update File: f", "@@", " name = 'Zoë'", "-# ünïcödé ✓", "+# plain", " x = 2"),
    ),
    "CRLF": (
        b"a\r\nb\r\nc\r\nd\r\n",
        P("*** Update File: f", "@@", " b", "-c", "+C", " d"),
    ),
    "BOM and CRLF": (
        "\ufeffa\r\nb\r\nc\r\n".encode(),
        P("*** Update File: f", "@@", " a", "-b", "+B"),
    ),
    "no trailing newline": (
        b"a\nb\nc",
        P("*** Update File: f", "@@", " b", "-c", "+C"),
    ),
    "first line": (
        b"a\nb\nc\n",
        P("*** Update File: f", "@@", "-a", "+A", " b"),
    ),
    "anchors, stacked": (
        b"[a]\nk = 1\nv = 1\n[b]\nk = 1\nv = 1\n",
        P("*** Update File: f", "@@ [b]", "@@ k = 1", "-v = 1", "+v = 2"),
    ),
    "an indented anchor (found by the ladder: anchors are stripped)": (
        b"class A:\n    def f(self):\n        return 1\nclass B:\n    def f(self):\n        return 1\n",
        P("*** Update File: f", "@@ class B:", "@@     def f(self):", "-        return 1", "+        return 2"),
    ),
    "ambiguous context: the first after the cursor": (
        b"x\ny\nx\ny\nx\ny\n",
        P("*** Update File: f", "@@", "-x", "+X", "@@", " y", "-x", "+Z"),
    ),
    "chunks out of order": (
        b"a\nb\nc\nd\ne\n",
        P("*** Update File: f", "@@", "-d", "+D", "@@", "-a", "+A"),
    ),
    "pure addition at the end, and after an anchor": (
        b"a\nb\n",
        P("*** Update File: f", "@@ a", "+a2", "@@", "+z"),
    ),
    "empty context line": (
        b"a\n\nb\n",
        P("*** Update File: f", "@@", " a", "", "-b", "+B"),
    ),
    "a line that is only a change of spaces": (
        b"a  \nb\n",
        P("*** Update File: f", "@@", "-a  ", "+a"),
    ),
}


@pytest.mark.parametrize("name", sorted(CASES))
def test_the_file_gets_what_the_ladder_gives(tmp_path: Path, name: str) -> None:
    data, patch = CASES[name]
    assert applied(tmp_path, data, patch) == ladder_bytes(data, patch)


def test_the_bytes_path_answers_exact_patches_on_non_ascii_crlf_and_bom() -> None:
    for name in ("non-ASCII lines", "CRLF", "BOM and CRLF", "no trailing newline", "first line", "anchors, stacked"):
        data, patch = CASES[name]
        (op,) = parse_patch(patch).ops
        assert isinstance(op, UpdateFile)
        quick = apply_exact_bytes(data, op.chunks)
        assert quick is not None, name  # the fast path itself answered, not the ladder
        assert quick[0] == ladder_bytes(data, patch), name


def test_out_of_order_or_fuzzy_chunks_step_aside() -> None:
    for name in ("chunks out of order", "an indented anchor (found by the ladder: anchors are stripped)"):
        data, patch = CASES[name]
        (op,) = parse_patch(patch).ops
        assert isinstance(op, UpdateFile)
        assert apply_exact_bytes(data, op.chunks) is None
    (op,) = parse_patch(P("*** Update File: f", "@@", "-a", "+A")).ops
    assert isinstance(op, UpdateFile)
    assert apply_exact_bytes(b"a  \n", op.chunks) is None  # only the trailing-whitespace level matches


def test_overlapping_chunks_are_refused_and_nothing_changes(tmp_path: Path) -> None:
    data = b"a\nb\nc\n"
    patch = P("*** Update File: f", "@@", " a", "-b", "+B", "@@", "-a", "+A", " b")
    (tmp_path / "f").write_bytes(data)
    with pytest.raises(ToolError) as err:
        apply_patch_text(Workspace.from_dirs([str(tmp_path)]), patch)
    assert err.value.code == ErrorCode.CONTEXT_MISMATCH
    assert (tmp_path / "f").read_bytes() == data


@pytest.mark.parametrize("data", [b"a\x00b\nc\n", b"a\nb\xff\n"])
def test_a_binary_file_is_refused_unchanged(tmp_path: Path, data: bytes) -> None:
    (tmp_path / "f").write_bytes(data)
    with pytest.raises(ToolError) as err:
        apply_patch_text(Workspace.from_dirs([str(tmp_path)]), P("*** Update File: f", "@@", " c", "+d"))
    assert err.value.code == ErrorCode.BINARY_FILE
    assert (tmp_path / "f").read_bytes() == data


def test_text_and_bytes_mix_in_one_patch(tmp_path: Path) -> None:
    """Add then Update of one file, Update + Move then Update of the
    destination, and an Add over a binary file: later operations see the
    content earlier ones made, whichever form it has."""
    (tmp_path / "src.txt").write_bytes("α\nβ\n".encode())
    (tmp_path / "bin").write_bytes(b"\x00\xff\r\n")
    patch = P(
        "*** Add File: new.txt",
        "+one",
        "+two",
        "*** Update File: new.txt",
        "@@",
        "-two",
        "+2",
        "*** Update File: src.txt",
        "*** Move to: dst.txt",
        "@@",
        "-β",
        "+b",
        "*** Update File: dst.txt",
        "@@",
        " α",
        "+c",
        "*** Add File: bin",
        "+text",
    )
    apply_patch_text(Workspace.from_dirs([str(tmp_path)]), patch)
    assert (tmp_path / "new.txt").read_bytes() == b"one\n2\n"
    assert (tmp_path / "dst.txt").read_bytes() == "α\nc\nb\n".encode()
    assert not (tmp_path / "src.txt").exists()
    assert (tmp_path / "bin").read_bytes() == b"text\r\n"  # the replaced file's line ending is kept


def test_a_patch_that_changes_nothing_writes_nothing(tmp_path: Path) -> None:
    path = tmp_path / "f"
    path.write_bytes(b"a\nb\n")
    before = path.stat()
    outcome = apply_patch_text(Workspace.from_dirs([str(tmp_path)]), P("*** Update File: f", "@@", "-a", "+a"))
    after = path.stat()
    assert (after.st_ino, after.st_mtime_ns) == (before.st_ino, before.st_mtime_ns)
    assert [w.event.kind for w in outcome.files] == ["M"]


# --- the parser's old/new lists --------------------------------------------------

BODY_LINES = st.lists(
    st.sampled_from([" a", "-b", "+c", "", " ", "\tt", " *** not a marker", "  *** padded", "\\ No newline", "+", "-"]),
    min_size=1,
    max_size=12,
)


@settings(max_examples=300, deadline=None)
@given(body=BODY_LINES, anchor=st.booleans())
def test_old_and_new_are_the_chunk_lines_without_their_op(body: list[str], anchor: bool) -> None:
    head = ["@@ a"] if anchor else []
    try:
        patch = parse_patch(P("*** Update File: f", *head, *body))
    except ToolError:
        return  # not a patch; the parser said why
    for op in patch.ops:
        assert isinstance(op, UpdateFile)
        for chunk in op.chunks:
            assert chunk.old == tuple(x[1:] for x in chunk.lines if x[0] != "+")
            assert chunk.new == tuple(x[1:] for x in chunk.lines if x[0] != "-")
