"""workspace/person_files.py: the one read of a file the person named (config
files, a ChatMD or prompt file, ``@FILE``, a client's configuration): regular
files only, never blocking on a FIFO, capped, and an error naming the file.
Its callers' side: tests/chatmd/test_document.py and tests/test_cli_args_file.py
(a FIFO named as a ChatMD file or as ``@FILE``)."""

from __future__ import annotations

import errno
import os
from pathlib import Path

import pytest

from tooldeck.workspace.person_files import read_named, read_named_text

pytestmark = pytest.mark.timeout(60)  # a read that blocked on a FIFO would hang here


def test_a_regular_file_is_read_whole(tmp_path: Path) -> None:
    f = tmp_path / "config.toml"
    f.write_bytes(b"x = 1\n" * 50_000)  # several reads' worth
    assert read_named(f) == b"x = 1\n" * 50_000
    assert read_named_text(f).count("\n") == 50_000


def test_a_missing_file_is_file_not_found_with_its_name(tmp_path: Path) -> None:
    with pytest.raises(FileNotFoundError) as info:
        read_named(tmp_path / "nope.toml")
    assert info.value.filename == str(tmp_path / "nope.toml")


def test_a_fifo_is_refused_at_once_not_waited_on(tmp_path: Path) -> None:
    fifo = tmp_path / "pipe.chatmd"
    os.mkfifo(fifo)
    with pytest.raises(OSError) as info:
        read_named(fifo)  # no writer: a blocking open or read would never return
    assert info.value.strerror == "not a regular file" and info.value.filename == str(fifo)


def test_a_directory_is_refused(tmp_path: Path) -> None:
    with pytest.raises(OSError) as info:
        read_named(tmp_path)
    assert info.value.errno == errno.EISDIR and info.value.strerror == "a directory"


def test_the_cap_refuses_one_byte_more_and_takes_the_cap_itself(tmp_path: Path) -> None:
    f = tmp_path / "big.json"
    f.write_bytes(b"a" * 1001)
    with pytest.raises(OSError) as info:
        read_named(f, limit=1000)
    assert info.value.errno == errno.EFBIG and info.value.strerror == "larger than 1000 bytes"
    assert read_named(f, limit=1001) == b"a" * 1001


def test_a_link_is_followed_unless_the_caller_resolved_the_path(tmp_path: Path) -> None:
    target = tmp_path / "dotfiles" / "config.toml"
    target.parent.mkdir()
    target.write_text("a = 1\n")
    link = tmp_path / "config.toml"
    link.symlink_to(target)
    assert read_named(link) == b"a = 1\n"  # the person's path may be a link (a dotfiles folder)
    with pytest.raises(OSError) as info:
        read_named(link, follow_links=False)  # a path already resolved: a link here was swapped in since
    assert info.value.errno == errno.ELOOP and info.value.filename == str(link)


def test_text_that_is_not_utf8_names_the_file_and_the_byte(tmp_path: Path) -> None:
    f = tmp_path / "args.json"
    f.write_bytes(b'{"a": "\xff"}')
    with pytest.raises(OSError) as info:
        read_named_text(f)
    assert info.value.strerror == "not UTF-8 text (byte 7)" and info.value.filename == str(f)
