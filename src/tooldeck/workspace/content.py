"""Reading file content safely: regular files only, text only, hashed.

Files are opened only through :mod:`tooldeck.workspace.dirfd`: from the root,
one component at a time with ``O_NOFOLLOW`` (the last with ``O_NONBLOCK``, so
a FIFO never blocks the server), so a folder or file swapped for a symlink
after the path check is refused, never followed; ``fstat`` on the open
descriptor then decides (directories, FIFOs, sockets and devices
are refused). Binary-like content (a NUL byte in the first 8 KiB, or invalid
UTF-8) is refused too: it would only pollute a model's context.
"""

from __future__ import annotations

import hashlib
import os
import stat
from collections.abc import Iterator
from dataclasses import dataclass

from tooldeck.core.errors import ErrorCode, ToolError
from tooldeck.workspace.dirfd import open_beneath

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


def open_nofollow(abs_path: str, shown: str, root: str, *, directory: bool = False) -> int:
    """Open ``abs_path`` beneath ``root`` for reading (see
    :func:`tooldeck.workspace.dirfd.open_beneath`: no link below the root is
    followed, a FIFO never blocks)."""
    return open_beneath(root, abs_path, shown, directory=directory)


class OpenFile:
    """A regular file opened through the safe path, read in chunks: lets a
    reader stream a big file (hash, count, show a window) without holding it.
    Use as a context manager; ``size`` and ``mode`` come from ``fstat``."""

    __slots__ = ("fd", "mode", "size")

    def __init__(self, abs_path: str, shown: str, *, root: str) -> None:
        self.fd = open_beneath(root, abs_path, shown)
        try:
            st = os.fstat(self.fd)
            if not stat.S_ISREG(st.st_mode):
                raise ToolError(ErrorCode.NOT_A_FILE, f"{shown!r} is {_kind(st.st_mode)}, not a regular file")
        except BaseException:
            os.close(self.fd)
            raise
        self.size = st.st_size
        self.mode = stat.S_IMODE(st.st_mode)

    def __enter__(self) -> OpenFile:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def close(self) -> None:
        if self.fd >= 0:
            os.close(self.fd)
            self.fd = -1

    def chunks(self, offset: int = 0, limit: int | None = None, size: int = 1 << 20) -> Iterator[bytes]:
        """The bytes from ``offset`` (at most ``limit``), in chunks of ``size``."""
        left = limit
        while left is None or left > 0:
            chunk = os.pread(self.fd, size if left is None else min(size, left), offset)
            if not chunk:
                return
            offset += len(chunk)
            if left is not None:
                left -= len(chunk)
            yield chunk

    def read(self, limit: int | None = None) -> bytes:
        want = self.size if limit is None else min(self.size, limit)
        return b"".join(self.chunks(0, want))


def read_bytes(abs_path: str, shown: str, limit: int | None = None, *, root: str) -> FileBytes:
    """Read a regular file's bytes (at most ``limit``), refusing anything else.

    ``root`` is required: the file is reached from it without following any
    link (a path outside ``root`` is refused), so there is no unsafe way to
    call this."""
    with OpenFile(abs_path, shown, root=root) as f:
        data = f.read(limit)
        return FileBytes(data, f.size, f.mode, len(data) < f.size)


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


def read_text(abs_path: str, shown: str, *, root: str) -> tuple[str, FileBytes]:
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


def read_lines(abs_path: str, shown: str, numbers: set[int], *, root: str) -> dict[int, str]:
    """The lines ``numbers`` (1-based, without their ``\\n``, decoded with
    replacement) of a file read through the safe path, streamed: used to
    check what an outside process (ripgrep) reported before it is shown.
    Each chunk is split in C and the wanted lines picked by index (no
    Python step per line of the file)."""
    out: dict[int, str] = {}
    if not numbers:
        return out
    wanted = sorted(numbers)
    i, number, partial = 0, 1, b""  # next wanted, the number of the chunk's first line
    with OpenFile(abs_path, shown, root=root) as f:
        for chunk in f.chunks(size=1 << 16):
            need = wanted[-1] - number + 1  # lines of this chunk still wanted: split no further
            pieces = (partial + chunk).split(b"\n", need)
            last = len(pieces) > need  # every wanted line is complete here
            partial = pieces.pop()
            end = number + len(pieces)
            while i < len(wanted) and wanted[i] < end:
                if wanted[i] >= number:
                    out[wanted[i]] = pieces[wanted[i] - number].decode("utf-8", "replace")
                i += 1
            number = end
            if last or i == len(wanted):
                return out
    if partial and number in numbers:
        out[number] = partial.decode("utf-8", "replace")
    return out
