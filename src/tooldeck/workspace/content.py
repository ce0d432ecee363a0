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


_FILE_FLAGS = os.O_RDONLY | os.O_NONBLOCK | os.O_NOFOLLOW | getattr(os, "O_CLOEXEC", 0)
_DIR_FLAGS = os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW | getattr(os, "O_CLOEXEC", 0)


def open_nofollow(abs_path: str, shown: str, root: str | None = None, *, directory: bool = False) -> int:
    """Open ``abs_path`` without following any symlink below ``root``.

    Path checks happen before the open; if a directory component is swapped
    for a symlink in between, a plain ``open(abs_path)`` would follow it out of
    the root. Walking from ``root`` one component at a time with
    ``O_NOFOLLOW`` (``openat``) makes such a swap fail instead. Without
    ``root`` only the final component is protected.
    """
    flags = _DIR_FLAGS if directory else _FILE_FLAGS
    if root is None or not (abs_path == root or abs_path.startswith(root.rstrip(os.sep) + os.sep)):
        try:
            return os.open(abs_path, flags)
        except OSError as exc:
            raise _open_error(exc, shown) from exc
    parts = [p for p in abs_path[len(root) :].split(os.sep) if p]
    try:
        fd = os.open(root, _DIR_FLAGS)
    except OSError as exc:
        raise _open_error(exc, shown) from exc
    try:
        for i, part in enumerate(parts):
            last = i == len(parts) - 1
            try:
                nxt = os.open(part, flags if last else _DIR_FLAGS, dir_fd=fd)
            except OSError as exc:
                if (not last or directory) and exc.errno in (errno.ELOOP, errno.ENOTDIR) and _is_link_at(fd, part):
                    raise ToolError(
                        ErrorCode.DENIED, f"{shown!r}: a folder on its path changed into a symbolic link; read it again"
                    ) from exc
                raise _open_error(exc, shown) from exc
            os.close(fd)
            fd = nxt
    except BaseException:
        os.close(fd)
        raise
    return fd


def _is_link_at(dir_fd: int, name: str) -> bool:
    try:
        return stat.S_ISLNK(os.stat(name, dir_fd=dir_fd, follow_symlinks=False).st_mode)
    except OSError:
        return False


def read_bytes(abs_path: str, shown: str, limit: int | None = None, *, root: str | None = None) -> FileBytes:
    """Read a regular file's bytes (at most ``limit``), refusing anything else.
    Pass the containing root's path so no component below it is followed."""
    fd = open_nofollow(abs_path, shown, root)
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


def read_text(abs_path: str, shown: str, *, root: str | None = None) -> tuple[str, FileBytes]:
    fb = read_bytes(abs_path, shown, root=root)
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
    if exc.errno == errno.ENOTDIR:
        return ToolError(ErrorCode.NOT_A_DIRECTORY, f"{shown!r}: not a directory (or a folder on its path is not)")
    if exc.errno == errno.EISDIR:
        return ToolError(ErrorCode.NOT_A_FILE, f"{shown!r} is a directory; use read_directory")
    if exc.errno in (errno.EACCES, errno.EPERM):
        return ToolError(ErrorCode.DENIED, f"permission denied reading {shown!r}")
    if exc.errno == errno.ENXIO:
        return ToolError(ErrorCode.NOT_A_FILE, f"{shown!r} is a socket or device, not a regular file")
    return ToolError(ErrorCode.IO_ERROR, f"cannot open {shown!r}: {exc.strerror}")
