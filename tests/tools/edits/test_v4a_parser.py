"""The V4A parser: the Codex dialect plus the leniencies models need."""

from __future__ import annotations

import json

import pytest

from tooldeck.core.errors import ToolError
from tooldeck.tools.edits.v4a_parser import AddFile, DeleteFile, UpdateFile, parse_patch, unwrap_input


def P(*lines: str) -> str:
    return "\n".join(["*** Begin Patch", *lines, "*** End Patch"]) + "\n"


def syntax_error(text: str) -> ToolError:
    with pytest.raises(ToolError) as info:
        parse_patch(text)
    assert info.value.code == "patch_syntax"
    return info.value


def test_all_three_operations_and_a_move() -> None:
    patch = parse_patch(
        P(
            "*** Add File: a/new.txt",
            "+one",
            "+two",
            "*** Delete File: old.txt",
            "*** Update File: src/app.py",
            "*** Move to: src/main.py",
            "@@ def f():",
            "-    pass",
            "+    return 1",
        )
    )
    add, delete, update = patch.ops
    assert add == AddFile("a/new.txt", ("one", "two"), 2)
    assert isinstance(delete, DeleteFile) and delete.path == "old.txt"
    assert isinstance(update, UpdateFile)
    assert (update.path, update.move_to) == ("src/app.py", "src/main.py")
    (chunk,) = update.chunks
    assert chunk.anchors == ("def f():",)
    assert chunk.old_lines == ["    pass"] and chunk.new_lines == ["    return 1"]


def test_context_lines_keep_their_order_with_changes() -> None:
    (update,) = parse_patch(P("*** Update File: f", "@@", " a", "-b", "+B", " c")).ops
    assert update.chunks[0].ops == ((" ", "a"), ("-", "b"), ("+", "B"), (" ", "c"))


def test_first_chunk_may_omit_its_header_but_later_ones_may_not() -> None:
    (update,) = parse_patch(P("*** Update File: f", " import os", "+import sys")).ops
    assert update.chunks[0].anchors == ()
    err = syntax_error(P("*** Update File: f", "@@", "-a", "+b", "junk line"))
    assert "patch line 6" in err.message


def test_stacked_anchors_are_kept_in_order() -> None:
    (update,) = parse_patch(P("*** Update File: f", "@@ class A", "@@     def run(self):", "-x", "+y")).ops
    assert update.chunks[0].anchors == ("class A", "def run(self):")


def test_unified_diff_range_header_becomes_its_trailing_anchor() -> None:
    (update,) = parse_patch(P("*** Update File: f", "@@ -10,3 +10,4 @@ def main():", "-a", "+b")).ops
    assert update.chunks[0].anchors == ("def main():",)
    (update,) = parse_patch(P("*** Update File: f", "@@ -1 +1 @@", "-a", "+b")).ops
    assert update.chunks[0].anchors == ()


def test_end_of_file_marker() -> None:
    (update,) = parse_patch(P("*** Update File: f", "@@", " last", "+after", "*** End of File")).ops
    assert update.chunks[0].end_of_file


def test_whitespace_padded_markers_are_recognised() -> None:
    text = " *** Begin Patch \n  *** Update File: f.txt  \n@@\n-one\n+two\n *** End Patch \n"
    (update,) = parse_patch(text).ops
    assert update.path == "f.txt" and update.chunks[0].new_lines == ["two"]


def test_single_space_marker_lookalike_inside_a_chunk_is_context() -> None:
    # a file that itself contains a patch (a test, a doc) stays patchable
    (update,) = parse_patch(P("*** Update File: t.py", "@@", " *** Update File: x", "-old", "+new")).ops
    assert update.chunks[0].old_lines == ["*** Update File: x", "old"]


def test_heredoc_and_fence_wrappers_are_tolerated() -> None:
    inner = P("*** Add File: x", "+hi").strip()
    for wrapped in (
        f"<<'EOF'\n{inner}\nEOF\n",
        f'<<"PATCH"\n{inner}\nPATCH',
        f"apply_patch <<'EOF'\n{inner}\nEOF",
        f"```\n{inner}\n```",
    ):
        (add,) = parse_patch(wrapped).ops
        assert add == AddFile("x", ("hi",), add.line)


def test_crlf_patch_text_is_read_as_lines() -> None:
    (add,) = parse_patch(P("*** Add File: x", "+a", "+b").replace("\n", "\r\n")).ops
    assert add.lines == ("a", "b")


def test_empty_patch_is_an_error() -> None:
    assert "empty" in syntax_error("*** Begin Patch\n*** End Patch\n").message
    assert "empty" in syntax_error("   \n").message


def test_missing_end_marker_is_an_error_naming_the_line() -> None:
    err = syntax_error("*** Begin Patch\n*** Add File: x\n+a\n")
    assert "*** End Patch" in err.message and err.details["line"] == 3


def test_missing_begin_marker_is_an_error() -> None:
    assert "*** Begin Patch" in syntax_error("*** Add File: x\n+a\n*** End Patch").message


def test_unknown_operation_is_an_error_with_its_line() -> None:
    err = syntax_error(P("*** Rename File: a"))
    assert err.details["line"] == 2 and "Rename File" in err.message


def test_added_file_lines_need_a_plus_but_blank_lines_inside_are_kept() -> None:
    (add,) = parse_patch(P("*** Add File: x", "+a", "", "+b")).ops
    assert add.lines == ("a", "", "b")
    assert "'+'" in syntax_error(P("*** Add File: x", "+a", "b")).message


def test_update_without_changes_is_an_error_but_a_bare_move_is_a_rename() -> None:
    assert "no changes" in syntax_error(P("*** Update File: a")).message
    (update,) = parse_patch(P("*** Update File: a", "*** Move to: b")).ops
    assert update.move_to == "b" and update.chunks == ()


def test_blank_separator_lines_are_not_context() -> None:
    (update, add) = parse_patch(P("*** Update File: a", "@@", "-x", "+y", "", "*** Add File: b", "+z")).ops
    assert update.chunks[0].ops == (("-", "x"), ("+", "y"))
    assert add.lines == ("z",)


def test_hash_suffix_on_a_path_is_the_expected_hash() -> None:
    (update,) = parse_patch(P("*** Update File: src/a.py [hash=0123abcd4567ef89]", "@@", "-a", "+b")).ops
    assert update.path == "src/a.py" and update.expected_hash == "0123abcd4567ef89"


def test_chunk_with_only_a_header_is_an_error() -> None:
    assert "no lines" in syntax_error(P("*** Update File: a", "@@ def f():", "*** Delete File: b")).message


def test_unwrap_input_accepts_raw_json_string_and_objects() -> None:
    text = P("*** Add File: x", "+a")
    assert unwrap_input(text) == (text, {})
    assert unwrap_input(json.dumps(text)) == (text, {})
    assert unwrap_input({"input": text}) == (text, {})
    assert unwrap_input(json.dumps({"patch": text, "expected_hashes": {"x": "abcd1234"}})) == (
        text,
        {"x": "abcd1234"},
    )
    with pytest.raises(ToolError) as info:
        unwrap_input({"diff": text})
    assert info.value.code == "invalid_arguments"
