"""Safe reads (regular text files only, never through a link)."""

from __future__ import annotations

import hashlib
import os
from pathlib import Path

import pytest

from tooldeck.core.errors import ToolError
from tooldeck.workspace.content import (
    content_hash,
    decode_text,
    hash_matches,
    open_nofollow,
    read_bytes,
    read_text,
)


def code_of(fn, *args, **kwargs) -> str:  # type: ignore[no-untyped-def]
    with pytest.raises(ToolError) as info:
        fn(*args, **kwargs)
    return info.value.code


def test_read_text_and_hash(tmp_path: Path) -> None:
    p = tmp_path / "a.txt"
    p.write_bytes("héllo\n".encode())
    os.chmod(p, 0o640)
    text, fb = read_text(str(p), "a.txt", root=str(tmp_path))
    assert text == "héllo\n" and fb.size == 7 and fb.mode == 0o640 and not fb.truncated
    assert content_hash(fb.data) == hashlib.sha256(fb.data).hexdigest()[:16]


def test_hash_prefix_rules() -> None:
    data = b"abc"
    full = hashlib.sha256(data).hexdigest()
    assert hash_matches(full[:8], data) and hash_matches(full.upper(), data) and hash_matches(f" {full[:12]} ", data)
    assert not hash_matches(full[:7], data)  # too short to mean anything
    assert not hash_matches("0" * 16, data)


def test_limit_marks_truncation(tmp_path: Path) -> None:
    p = tmp_path / "big.txt"
    p.write_bytes(b"x" * 1000)
    fb = read_bytes(str(p), "big.txt", limit=100, root=str(tmp_path))
    assert len(fb.data) == 100 and fb.truncated and fb.size == 1000


@pytest.mark.timeout(10)
def test_refuses_what_is_not_a_regular_file(tmp_path: Path) -> None:
    os.mkfifo(tmp_path / "fifo")
    (tmp_path / "dir").mkdir()
    (tmp_path / "target.txt").write_text("x")
    (tmp_path / "link.txt").symlink_to(tmp_path / "target.txt")
    assert code_of(read_bytes, str(tmp_path / "fifo"), "fifo", root=str(tmp_path)) == "not_a_file"  # and does not block
    assert code_of(read_bytes, str(tmp_path / "dir"), "dir", root=str(tmp_path)) == "not_a_file"
    assert (
        code_of(read_bytes, str(tmp_path / "link.txt"), "link.txt", root=str(tmp_path)) == "denied"
    )  # a final link is never followed
    assert code_of(read_bytes, str(tmp_path / "missing"), "missing", root=str(tmp_path)) == "not_found"


def test_no_link_below_the_root_is_followed(tmp_path: Path) -> None:
    root, outside = tmp_path / "root", tmp_path / "outside"
    root.mkdir()
    outside.mkdir()
    (outside / "s.txt").write_text("secret")
    (root / "sub").symlink_to(outside)
    # the root is required (no unprotected way to call it), and a path outside it is refused
    with pytest.raises(TypeError):
        read_bytes(str(root / "sub" / "s.txt"), "s")  # type: ignore[call-arg]
    assert code_of(read_bytes, str(outside / "s.txt"), "s", root=str(root)) == "outside_roots"
    assert code_of(read_bytes, str(root) + "-evil/s.txt", "s", root=str(root)) == "outside_roots"
    assert code_of(read_bytes, str(root / "sub" / "s.txt"), "s", root=str(root)) == "denied"
    assert code_of(open_nofollow, str(root / "sub"), "sub", str(root), directory=True) == "denied"
    (root / "real").mkdir()
    (root / "real" / "f.txt").write_text("ok")
    assert read_bytes(str(root / "real" / "f.txt"), "f", root=str(root)).data == b"ok"
    assert code_of(open_nofollow, str(root / "real" / "f.txt"), "f", str(root), directory=True) == "not_a_directory"


def test_binary_detection() -> None:
    assert decode_text(b"plain\n", "a") == "plain\n"
    assert code_of(decode_text, b"a\x00b", "a") == "binary_file"
    assert code_of(decode_text, b"caf\xe9", "a") == "binary_file"
    cut = "é".encode() * 3 + "é".encode()[:1]  # a limit cut the last character in half
    assert decode_text(cut, "a", allow_cut_tail=True) == "ééé"
    assert code_of(decode_text, cut, "a") == "binary_file"
