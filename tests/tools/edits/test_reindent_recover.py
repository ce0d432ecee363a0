"""Units of apply_edits: re-indentation and argument recovery."""

from __future__ import annotations

import pytest

from tooldeck.core.errors import ToolError
from tooldeck.tools.edits.recover import recover
from tooldeck.tools.edits.reindent import reindent


def test_reindent_rebases_relative_depth_on_the_matched_block() -> None:
    search = ["if x:", "    y()"]
    matched = ["        if x:", "            y()"]
    assert reindent(["if x:", "    z()", "w()"], search, matched) == ["        if x:", "            z()", "        w()"]


def test_reindent_uses_tabs_when_the_file_does() -> None:
    assert reindent(["a()", "    b()"], ["a()"], ["\t\ta()"]) == ["\t\ta()", "\t\t\tb()"]


def test_reindent_scales_a_different_indent_step() -> None:
    search = ["def f():", "    return 1"]  # the model wrote 4-space steps
    matched = ["def f():", "  return 1"]  # the file uses 2
    assert reindent(["def f():", "    if x:", "        return 2"], search, matched) == [
        "def f():",
        "  if x:",
        "    return 2",
    ]


def test_reindent_leaves_an_already_right_replacement_alone() -> None:
    lines = ["    a = 1", "", "    b = 2"]
    assert reindent(lines, ["    a = 0"], ["    a = 0"]) == lines


def test_recover_aliases_wrappers_and_json_strings() -> None:
    assert recover({"file_path": "a", "old_string": "x", "new_string": "y", "replace_all": True}) == {
        "path": "a",
        "search": "x",
        "replace": "y",
        "all": True,
    }
    assert recover({"apply_edits": {"path": "a", "edits": '[{"old_string": "x", "new_string": "y"}]'}}) == {
        "path": "a",
        "edits": [{"search": "x", "replace": "y"}],
    }
    assert recover(
        '{"arguments": "{\\"path\\": \\"a\\", \\"edits\\": {\\"search\\": \\"x\\", \\"replace\\": \\"y\\"}}"}'
    ) == {
        "path": "a",
        "edits": [{"search": "x", "replace": "y"}],
    }
    assert recover('{"path": "a", "search": "line1\nline2\tx", "replace": ""}')["search"] == "line1\nline2\tx"


def test_recover_refuses_conflicting_spellings_and_bad_json() -> None:
    with pytest.raises(ToolError) as info:
        recover({"path": "a", "file_path": "b"})
    assert info.value.code == "invalid_arguments"
    with pytest.raises(ToolError):
        recover({"path": "a", "edits": "[{not json"})
    with pytest.raises(ToolError):
        recover("[1, 2]")
