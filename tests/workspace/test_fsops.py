"""The primitives under every write, on their own: what each refuses even when
the layers above it (path resolution, the batch's checks) were skipped or raced.
Each test here was written to kill a mutant that the end-to-end tests let
survive (scripts/mutation.py)."""

from __future__ import annotations

import hashlib
import os
from collections.abc import Iterator
from pathlib import Path

import pytest

from tooldeck.core.errors import ToolError
from tooldeck.workspace.fsops import check_target, same_content, split_rel, write_new


@pytest.fixture
def dfd(tmp_path: Path) -> Iterator[int]:
    fd = os.open(tmp_path, os.O_RDONLY | os.O_DIRECTORY)
    yield fd
    os.close(fd)


def test_write_new_never_writes_into_a_file_already_there(tmp_path: Path, dfd: int) -> None:
    """A temp name planted by someone else (a file, or a link to outside) is an error, never written into."""
    (tmp_path / "planted").write_bytes(b"theirs")
    outside = tmp_path / "outside.txt"
    outside.write_bytes(b"secret")
    (tmp_path / "link").symlink_to(outside)
    for name in ("planted", "link"):
        with pytest.raises(FileExistsError):
            write_new(dfd, name, b"ours", None)
    assert (tmp_path / "planted").read_bytes() == b"theirs" and outside.read_bytes() == b"secret"
    write_new(dfd, "fresh", b"ours", 0o640)
    assert (tmp_path / "fresh").read_bytes() == b"ours" and (tmp_path / "fresh").stat().st_mode & 0o777 == 0o640


def test_same_content_compares_every_byte_and_never_follows_a_link(tmp_path: Path, dfd: int) -> None:
    (tmp_path / "f").write_bytes(b"abc" * 50_000)
    assert same_content(dfd, "f", b"abc" * 50_000, None)
    assert not same_content(dfd, "f", b"abc" * 49_999 + b"abd", None)  # same size, last byte differs
    assert not same_content(dfd, "f", b"xbc" + b"abc" * 49_999, None)  # same size, first byte differs
    assert same_content(dfd, "f", None, hashlib.sha256(b"abc" * 50_000).digest())
    assert not same_content(dfd, "f", None, hashlib.sha256(b"other").digest())
    (tmp_path / "l").symlink_to(tmp_path / "f")  # a target swapped for a link to a file with the expected bytes
    assert not same_content(dfd, "l", b"abc" * 50_000, None)


def test_check_target_refuses_links_and_non_files(tmp_path: Path) -> None:
    (tmp_path / "f").write_text("x")
    (tmp_path / "l").symlink_to(tmp_path / "f")
    check_target(None, "new")  # nothing there: fine
    check_target(os.lstat(tmp_path / "f"), "f")
    with pytest.raises(ToolError) as err:
        check_target(os.lstat(tmp_path / "l"), "l")
    assert err.value.code == "denied"
    with pytest.raises(ToolError) as err:
        check_target(os.lstat(tmp_path), "dir")
    assert err.value.code == "not_a_file"


@pytest.mark.parametrize("rel", ["../x", "a/../../x", "a/..", ".."])
def test_split_rel_refuses_parent_components(rel: str) -> None:
    with pytest.raises(ToolError):
        split_rel(rel)


def test_split_rel_splits_plain_paths() -> None:
    assert split_rel("a/./b//c.txt") == (["a", "b"], "c.txt")
