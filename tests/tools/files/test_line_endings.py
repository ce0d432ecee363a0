"""find_and_replace and append_to_file keep a file's line endings and BOM,
as apply_edits and apply_patch do: a CRLF file stays CRLF, a BOM stays."""

from __future__ import annotations

from pathlib import Path

BOM = "\ufeff".encode()


def test_find_and_replace_keeps_crlf_and_matches_a_multiline_find(root: Path, call) -> None:  # type: ignore[no-untyped-def]
    (root / "w.txt").write_bytes(b"one\r\ntwo\r\nthree\r\n")
    call.ok("find_and_replace", {"path": "w.txt", "find": "two\nthree", "replace": "2\n3\n3.5"})
    assert (root / "w.txt").read_bytes() == b"one\r\n2\r\n3\r\n3.5\r\n"


def test_find_and_replace_with_crlf_in_the_arguments(root: Path, call) -> None:  # type: ignore[no-untyped-def]
    (root / "w.txt").write_bytes(b"a\r\nb\r\n")
    call.ok("find_and_replace", {"path": "w.txt", "find": "a\r\nb", "replace": "x\r\ny"})
    assert (root / "w.txt").read_bytes() == b"x\r\ny\r\n"


def test_find_and_replace_keeps_the_bom(root: Path, call) -> None:  # type: ignore[no-untyped-def]
    (root / "b.txt").write_bytes(BOM + b"alpha\r\nbeta\r\n")
    call.ok("find_and_replace", {"path": "b.txt", "find": "alpha", "replace": "ALPHA"})
    assert (root / "b.txt").read_bytes() == BOM + b"ALPHA\r\nbeta\r\n"


def test_find_and_replace_leaves_an_lf_file_lf(root: Path, call) -> None:  # type: ignore[no-untyped-def]
    (root / "u.txt").write_bytes(b"a\nb\n")
    call.ok("find_and_replace", {"path": "u.txt", "find": "a\nb", "replace": "c\nd"})
    assert (root / "u.txt").read_bytes() == b"c\nd\n"


def test_append_to_a_crlf_file_writes_crlf(root: Path, call) -> None:  # type: ignore[no-untyped-def]
    (root / "w.txt").write_bytes(BOM + b"one\r\ntwo\r\n")
    call.ok("append_to_file", {"path": "w.txt", "content": "three\nfour"})
    data = (root / "w.txt").read_bytes()
    assert data == BOM + b"one\r\ntwo\r\n\r\nthree\r\nfour"
    assert b"\n" not in data.replace(b"\r\n", b"")  # no bare LF anywhere


def test_append_to_an_lf_file_is_unchanged_behaviour(root: Path, call) -> None:  # type: ignore[no-untyped-def]
    (root / "u.txt").write_text("x\n")
    call.ok("append_to_file", {"path": "u.txt", "content": "y"})
    assert (root / "u.txt").read_bytes() == b"x\n\ny"
