"""Reading file content safely: regular files only, text only, hashed.

Opening uses ``O_NOFOLLOW | O_NONBLOCK`` so a FIFO never blocks the server and
a final component swapped for a symlink after resolution is refused; ``fstat``
on the open descriptor then decides (directories, FIFOs, sockets and devices
are refused). Binary-like content (a NUL byte in the first 8 KiB, or invalid
UTF-8) is refused too: it would only pollute a model's context.
"""

from __future__ import annotations

import errno
import hashlib
import os
import stat
from dataclasses import dataclass

from tooldeck.core.errors import ErrorCode, ToolError

SNIFF_BYTES = 8192
HASH_CHARS = 16


def content_hash(data: bytes) -> str:
    """The staleness hash shown to models and accepted by edit tools."""
    return hashlib.sha256(data).hexdigest()[:HASH_CHARS]


def hash_matches(expected: str, data: bytes) -> bool:
    """``expected`` may be any prefix of at least 8 hex chars of the full hash."""
    exp = expected.strip().lower()
    full = hashlib.sha256(data).hexdigest()
    return len(exp) >= 8 and full.startswith(exp)


def looks_binary(head: bytes) -> bool:
    return b"\x00" in head[:SNIFF_BYTES]


@dataclass(frozen=True, slots=True)
class FileBytes:
    data: bytes
    size: int  # full size on disk (data may be shorter when capped)
    mode: int
    truncated: bool


def read_bytes(abs_path: str, shown: str, limit: int | None = None) -> FileBytes:
    """Read a regular file's bytes (at most ``limit``), refusing anything else."""
    flags = os.O_RDONLY | os.O_NONBLOCK | os.O_NOFOLLOW | getattr(os, "O_CLOEXEC", 0)
    try:
        fd = os.open(abs_path, flags)
    except OSError as exc:
        raise _open_error(exc, shown) from exc
    try:
        st = os.fstat(fd)
        if not stat.S_ISREG(st.st_mode):
            raise ToolError(ErrorCode.NOT_A_FILE, f"{shown!r} is {_kind(st.st_mode)}, not a regular file")
        chunks: list[bytes] = []
        want = st.st_size if limit is None else min(st.st_size, limit)
        got = 0
        while got < want:
            chunk = os.read(fd, min(1 << 20, want - got))
            if not chunk:
                break
            chunks.append(chunk)
            got += len(chunk)
        data = b"".join(chunks)
        return FileBytes(data, st.st_size, stat.S_IMODE(st.st_mode), got < st.st_size)
    finally:
        os.close(fd)


def decode_text(data: bytes, shown: str, *, allow_cut_tail: bool = False) -> str:
    """UTF-8 text or a ``binary_file`` error. ``allow_cut_tail`` tolerates a
    multi-byte character cut by a read limit."""
    if looks_binary(data):
        raise ToolError(ErrorCode.BINARY_FILE, f"{shown!r} looks binary (contains NUL bytes); it was not read")
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError as exc:
        if allow_cut_tail and exc.start >= len(data) - 3:
            return data[: exc.start].decode("utf-8")
        raise ToolError(
            ErrorCode.BINARY_FILE, f"{shown!r} is not valid UTF-8 text (byte {exc.start}); it was not read"
        ) from exc


def read_text(abs_path: str, shown: str) -> tuple[str, FileBytes]:
    fb = read_bytes(abs_path, shown)
    return decode_text(fb.data, shown), fb


def _kind(mode: int) -> str:
    if stat.S_ISDIR(mode):
        return "a directory"
    if stat.S_ISFIFO(mode):
        return "a FIFO"
    if stat.S_ISSOCK(mode):
        return "a socket"
    if stat.S_ISCHR(mode) or stat.S_ISBLK(mode):
        return "a device"
    if stat.S_ISLNK(mode):
        return "a symbolic link"
    return "not a regular file"


def _open_error(exc: OSError, shown: str) -> ToolError:
    if exc.errno == errno.ENOENT:
        return ToolError(ErrorCode.NOT_FOUND, f"{shown!r} does not exist")
    if exc.errno == errno.ELOOP:
        return ToolError(ErrorCode.DENIED, f"{shown!r} changed into a symbolic link; read it again")
    if exc.errno == errno.EISDIR:
        return ToolError(ErrorCode.NOT_A_FILE, f"{shown!r} is a directory; use read_directory")
    if exc.errno in (errno.EACCES, errno.EPERM):
        return ToolError(ErrorCode.DENIED, f"permission denied reading {shown!r}")
    if exc.errno == errno.ENXIO:
        return ToolError(ErrorCode.NOT_A_FILE, f"{shown!r} is a socket or device, not a regular file")
    return ToolError(ErrorCode.IO_ERROR, f"cannot open {shown!r}: {exc.strerror}")
