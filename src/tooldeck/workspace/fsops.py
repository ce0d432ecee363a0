"""Descriptor-relative file primitives shared by the atomic writer and its
crash recovery: reach a folder from a root without following any symlink,
look at, create, compare and remove entries relative to that folder.

Everything after :func:`open_dir` is relative to the folder's descriptor: if
a component is swapped for a symlink between the path check and the write,
the walk fails instead of writing outside the root.
"""

from __future__ import annotations

import errno
import hashlib
import os
import stat

from tooldeck.core.errors import ErrorCode, ToolError
from tooldeck.workspace import dirfd

CLOEXEC = getattr(os, "O_CLOEXEC", 0)
TMP_FLAGS = os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW | CLOEXEC
READ_FLAGS = os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK | CLOEXEC
CHUNK = 1 << 20
COMPARE_CHUNK = 1 << 16


def split_rel(rel: str) -> tuple[list[str], str]:
    """``rel`` as (folder components, file name); refuses ``..`` and the root."""
    parts = [p for p in rel.replace(os.sep, "/").split("/") if p not in ("", ".")]
    if not parts:
        raise ToolError(ErrorCode.NOT_A_FILE, "the root directory itself cannot be written as a file")
    if any(p == ".." for p in parts):
        raise ToolError(ErrorCode.OUTSIDE_ROOTS, f"{rel!r} contains '..'")
    return parts[:-1], parts[-1]


def open_dir(root_path: str, components: list[str], *, create: bool, created: list[str] | None = None) -> int:
    """A descriptor for ``root/components...`` for a writer: the one walker of
    :mod:`tooldeck.workspace.dirfd` (never following a symlink), with missing
    folders made when ``create`` (their paths go to ``created``). A component
    that is a link or not a folder refuses the write."""
    try:
        return dirfd.open_dir(root_path, components, create=create, created=created)
    except ToolError:
        raise
    except OSError as exc:
        if exc.errno in (errno.ELOOP, errno.ENOTDIR):
            raise ToolError(
                ErrorCode.DENIED,
                f"{'/'.join(components)!r} has a part that is a symbolic link or not a directory; nothing was written",
            ) from exc
        raise


def lstat_at(dfd: int, name: str) -> os.stat_result | None:
    try:
        return os.stat(name, dir_fd=dfd, follow_symlinks=False)
    except FileNotFoundError:
        return None


def check_target(st: os.stat_result | None, rel: str) -> None:
    """Refuse to replace a symlink or anything that is not a regular file."""
    if st is None:
        return
    if stat.S_ISLNK(st.st_mode):
        raise ToolError(ErrorCode.DENIED, f"{rel!r} is a symbolic link; tooldeck never writes through a link")
    if not stat.S_ISREG(st.st_mode):
        raise ToolError(ErrorCode.NOT_A_FILE, f"{rel!r} exists and is not a regular file")


def write_new(dfd: int, name: str, data: bytes, mode: int | None) -> None:
    """Create ``name`` (it must not exist) holding ``data`` with ``mode``;
    without a mode the process umask applies, as for any new file (the kernel
    applies it to 0o666: the umask is never read or changed here)."""
    fd = os.open(name, TMP_FLAGS, 0o600 if mode is not None else 0o666, dir_fd=dfd)
    try:
        view = memoryview(data)
        while view:
            n = os.write(fd, view)
            view = view[n:]
        if mode is not None:
            os.fchmod(fd, mode)
    except BaseException:
        os.close(fd)
        unlink_quiet(dfd, name)
        raise
    os.close(fd)


def same_content(dfd: int, name: str, expect: bytes | None, digest: bytes | None) -> bool:
    """Whether ``name`` still holds ``expect`` (or content whose SHA-256 is
    ``digest``), read in chunks so a big file is never held twice. The chunks
    are read into one small buffer: a fresh megabyte per read would cost a
    page fault per 4 KiB touched, more than the read itself."""
    try:
        fd = os.open(name, READ_FLAGS, dir_fd=dfd)
    except OSError:
        return False
    try:
        st = os.fstat(fd)
        if not stat.S_ISREG(st.st_mode) or (expect is not None and st.st_size != len(expect)):
            return False
        hasher = hashlib.sha256() if expect is None else None
        view = memoryview(bytearray(COMPARE_CHUNK))
        pos = 0
        while n := os.readv(fd, [view]):
            if expect is not None:
                if not expect.startswith(view[:n], pos):  # a memcmp in place, no slice copied
                    return False
            elif hasher is not None:
                hasher.update(view[:n])
            pos += n
        if expect is not None:
            return pos == len(expect)
        return hasher is not None and hasher.digest() == digest
    finally:
        os.close(fd)


def unlink_quiet(dfd: int, name: str) -> None:
    try:
        os.unlink(name, dir_fd=dfd)
    except OSError:
        pass


def rmdirs_quiet(root_path: str, rels: list[str]) -> None:
    """Remove folders a failed write created (deepest first), if still empty."""
    for rel in reversed(rels):
        *parents, name = rel.split("/")
        try:
            pfd = open_dir(root_path, parents, create=False)
        except (OSError, ToolError):
            continue
        try:
            os.rmdir(name, dir_fd=pfd)
        except OSError:
            pass
        finally:
            os.close(pfd)


def fsync_quiet(fd: int) -> None:
    try:
        os.fsync(fd)
    except OSError:
        pass
