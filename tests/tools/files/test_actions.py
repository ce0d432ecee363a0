"""file_actions, append_to_file, find_and_replace: small edits, all atomic,
all refusing stale input, and a failed call changes nothing."""

from __future__ import annotations

import os
import re
import stat
from pathlib import Path

import pytest

from tooldeck.workspace.content import content_hash


def snapshot(path: Path) -> dict[str, bytes]:
    """Every file under ``path`` with its bytes (to prove a call changed nothing)."""
    return {str(p.relative_to(path)): p.read_bytes() for p in sorted(path.rglob("*")) if p.is_file()}


def hash_of(text: str) -> str:
    m = re.search(r"\[hash=([0-9a-f]{16})\]", text)
    assert m is not None, text
    return m.group(1)


def test_create_makes_parents_and_refuses_an_existing_file(root: Path, call) -> None:  # type: ignore[no-untyped-def]
    out = call.ok("file_actions", {"action": "create", "path": "a/b/new.txt", "content": "hello\n"})
    assert (root / "a" / "b" / "new.txt").read_text() == "hello\n"
    assert hash_of(out) == content_hash(b"hello\n") and out.startswith("Created a/b/new.txt")
    res = call.err(
        "file_actions", {"action": "create", "path": "a/b/new.txt", "content": "other"}, code="already_exists"
    )
    assert "if_exists" in res.text and (root / "a" / "b" / "new.txt").read_text() == "hello\n"
    out = call.ok(
        "file_actions", {"action": "create", "path": "a/b/new.txt", "content": "replaced", "if_exists": "overwrite"}
    )
    assert out.startswith("Overwrote") and (root / "a" / "b" / "new.txt").read_text() == "replaced"
    call.ok("file_actions", {"action": "create", "path": "empty.txt"})
    assert (root / "empty.txt").read_bytes() == b""


def test_overwrite_keeps_the_mode(root: Path, call) -> None:  # type: ignore[no-untyped-def]
    p = root / "run.sh"
    p.write_text("echo 1\n")
    os.chmod(p, 0o750)
    call.ok("file_actions", {"action": "create", "path": "run.sh", "content": "echo 2\n", "if_exists": "overwrite"})
    assert stat.S_IMODE(p.stat().st_mode) == 0o750 and p.read_text() == "echo 2\n"
    call.ok("find_and_replace", {"path": "run.sh", "find": "2", "replace": "3"})
    call.ok("append_to_file", {"path": "run.sh", "content": "echo 4"})
    assert stat.S_IMODE(p.stat().st_mode) == 0o750 and p.read_text() == "echo 3\n\necho 4"


def test_delete_a_file_only(root: Path, call) -> None:  # type: ignore[no-untyped-def]
    (root / "d").mkdir()
    (root / "d" / "f.txt").write_text("x")
    assert call.ok("file_actions", {"action": "delete", "path": "d/f.txt"}) == "Deleted d/f.txt"
    assert not (root / "d" / "f.txt").exists() and (root / "d").is_dir()
    call.err("file_actions", {"action": "delete", "path": "d/f.txt"}, code="not_found")
    call.err("file_actions", {"action": "delete", "path": "d"}, code="not_a_file")
    assert (root / "d").is_dir()


def test_move(root: Path, call) -> None:  # type: ignore[no-untyped-def]
    src = root / "src.txt"
    src.write_text("data\n")
    os.chmod(src, 0o640)
    out = call.ok("file_actions", {"action": "move", "path": "src.txt", "new_path": "deep/er/dst.txt"})
    dst = root / "deep" / "er" / "dst.txt"
    assert out == "Moved src.txt -> deep/er/dst.txt" and not src.exists() and dst.read_text() == "data\n"
    assert stat.S_IMODE(dst.stat().st_mode) == 0o640
    (root / "other.txt").write_text("other\n")
    before = snapshot(root)
    move = {"action": "move", "path": "other.txt", "new_path": "deep/er/dst.txt"}
    call.err("file_actions", move, code="already_exists")
    assert snapshot(root) == before
    call.ok("file_actions", {**move, "if_exists": "overwrite"})
    assert dst.read_text() == "other\n" and not (root / "other.txt").exists()
    same = {"action": "move", "path": "deep/er/dst.txt", "new_path": "./deep/er/dst.txt"}
    call.err("file_actions", same, code="invalid_arguments")
    call.err("file_actions", {"action": "move", "path": "deep", "new_path": "x"}, code="not_a_file")


def test_action_fields_are_checked(root: Path, call) -> None:  # type: ignore[no-untyped-def]
    (root / "f.txt").write_text("x")
    before = snapshot(root)
    for args, field in [
        ({"action": "move", "path": "f.txt"}, "new_path"),
        ({"action": "delete", "path": "f.txt", "content": "x"}, "content"),
        ({"action": "create", "path": "g.txt", "new_path": "h.txt"}, "new_path"),
        ({"action": "rename", "path": "f.txt"}, "action"),
        ({"action": "create", "path": "g.txt", "if_exists": "replace"}, "if_exists"),
        ({"action": "create"}, "path"),
        ({"action": "create", "path": "newdir/"}, "path"),
        ({"action": "move", "path": "f.txt", "new_path": "into/"}, "new_path"),
    ]:
        res = call.err("file_actions", args, code="invalid_arguments")
        assert f"`{field}`" in res.text, res.text
        assert res.error is not None and field in res.error.details["fields"]
    assert snapshot(root) == before


def test_append_inserts_a_newline_and_never_deduplicates(root: Path, call) -> None:  # type: ignore[no-untyped-def]
    p = root / "log.txt"
    p.write_text("first")
    call.ok("append_to_file", {"path": "log.txt", "content": "second"})
    call.ok("append_to_file", {"path": "log.txt", "content": "second"})
    assert p.read_text() == "first\nsecond\nsecond"
    call.ok("append_to_file", {"path": "new/notes.md", "content": "hello"})
    assert (root / "new" / "notes.md").read_text() == "hello"


def test_find_and_replace(root: Path, call) -> None:  # type: ignore[no-untyped-def]
    p = root / "code.py"
    p.write_text("a = 1\nb = 1\nc = 2\n")
    out = call.ok("find_and_replace", {"path": "code.py", "find": "c = 2", "replace": "c = 3"})
    assert "Replaced 1 occurrence" in out and p.read_text() == "a = 1\nb = 1\nc = 3\n"
    before = p.read_bytes()
    res = call.err("find_and_replace", {"path": "code.py", "find": "= 1", "replace": "= 9"}, code="ambiguous")
    assert "apply_patch" in res.text and "lines 1, 2" in res.text and p.read_bytes() == before
    out = call.ok("find_and_replace", {"path": "code.py", "find": "= 1", "replace": "= 9", "all": True})
    assert "Replaced 2" in out and p.read_text() == "a = 9\nb = 9\nc = 3\n"
    res = call.err("find_and_replace", {"path": "code.py", "find": "zzz", "replace": "y"}, code="no_match")
    assert "exact text" in res.text
    call.err("find_and_replace", {"path": "code.py", "find": "", "replace": "y"}, code="invalid_arguments")
    call.err("find_and_replace", {"path": "missing.py", "find": "a", "replace": "b"}, code="not_found")


@pytest.mark.parametrize(
    ("name", "args"),
    [
        ("find_and_replace", {"path": "s.txt", "find": "one", "replace": "two"}),
        ("append_to_file", {"path": "s.txt", "content": "more"}),
        ("file_actions", {"action": "create", "path": "s.txt", "content": "x", "if_exists": "overwrite"}),
        ("file_actions", {"action": "delete", "path": "s.txt"}),
        ("file_actions", {"action": "move", "path": "s.txt", "new_path": "t.txt"}),
    ],
)
def test_stale_hash_is_a_conflict_that_changes_nothing(root: Path, call, name: str, args: dict) -> None:  # type: ignore[no-untyped-def]
    p = root / "s.txt"
    p.write_text("one\n")
    read = call.ok("read_file", {"file": "s.txt"})
    good = hash_of(read)
    p.write_text("one\nchanged by another writer\n")
    before = snapshot(root)
    res = call.err(name, {**args, "expected_hash": good}, code="conflict")
    assert "read it again" in res.text or "read the" in res.text
    assert snapshot(root) == before
    fresh = hash_of(call.ok("read_file", {"file": "s.txt"}))
    assert not call(name, {**args, "expected_hash": fresh}).is_error


def test_annotations(box) -> None:  # type: ignore[no-untyped-def]
    fa, app, far = box.get("file_actions"), box.get("append_to_file"), box.get("find_and_replace")
    assert fa.annotations.destructive and not fa.annotations.read_only
    assert not app.annotations.read_only and far.annotations.destructive
    for name in ("read_file", "read_directory", "get_file_tree"):
        assert box.get(name).annotations.read_only
