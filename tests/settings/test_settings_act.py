"""Settings that are stored act: app_settings changes what the tools do."""

from __future__ import annotations

from pathlib import Path

from tests.conftest import Caller


def test_editing_verbose_default_adds_the_diff(root: Path, call: Caller) -> None:
    (root / "a.py").write_text("x = 1\n")
    plain = call.ok("apply_edits", {"path": "a.py", "search": "x = 1", "replace": "x = 2"})
    assert "@@" not in plain
    call.ok("app_settings", {"op": "set", "key": "editing.verbose", "value": True})
    verbose = call.ok("apply_edits", {"path": "a.py", "search": "x = 2", "replace": "x = 3"})
    assert "@@" in verbose and "+x = 3" in verbose
    quiet = call.ok("apply_edits", {"path": "a.py", "search": "x = 3", "replace": "x = 4", "verbose": False})
    assert "@@" not in quiet  # the call's own choice wins


def test_fuzzy_threshold_setting_decides_a_fuzzy_match(root: Path, call: Caller) -> None:
    body = "def f():\n    total = compute(alpha, beta)\n    return total\n"
    (root / "m.py").write_text(body)
    near = "def f():\n    total = compute(alpha, betaa)\n    return total\n"  # one character off
    call.ok("app_settings", {"op": "set", "key": "editing.fuzzy_threshold", "value": 1.0})
    call.err("apply_edits", {"path": "m.py", "search": near, "replace": "pass\n"}, code="no_match")
    call.ok("app_settings", {"op": "set", "key": "editing.fuzzy_threshold", "value": 0.9})
    call.ok("apply_edits", {"path": "m.py", "search": near, "replace": "def f():\n    return 0\n"})
    assert (root / "m.py").read_text() == "def f():\n    return 0\n"


def test_tree_default_mode_setting_applies_when_the_call_gives_none(root: Path, call: Caller) -> None:
    (root / "pkg").mkdir()
    (root / "pkg" / "mod.py").write_text("pass\n")
    assert "mod.py" in call.ok("get_file_tree", {})
    call.ok("app_settings", {"op": "set", "key": "tree.default_mode", "value": "folders"})
    folders = call.ok("get_file_tree", {})
    assert "pkg" in folders and "mod.py" not in folders
    assert "mod.py" in call.ok("get_file_tree", {"mode": "full"})


def test_token_encoding_setting_drives_the_runtime_count(runtime, call: Caller) -> None:  # type: ignore[no-untyped-def]
    from tooldeck.tokens import count_with

    text = "こんにちは世界、これはテストです。" * 10  # o200k 80 tokens, cl100k 110
    assert count_with("o200k_base", text) != count_with("cl100k_base", text)
    assert runtime.count_tokens(text) == count_with("o200k_base", text)
    call.ok("app_settings", {"op": "set", "key": "tokens.encoding", "value": "cl100k_base"})
    assert runtime.count_tokens(text) == count_with("cl100k_base", text)
