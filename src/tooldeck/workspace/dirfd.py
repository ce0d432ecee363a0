"""The one way a file or folder beneath a root is opened: from the root down.

Path rules (:mod:`tooldeck.workspace.roots`) check a path when it is resolved;
the file is opened a moment later. If a folder on the path is swapped for a
symbolic link in between, opening the path by name would follow the link out
of the root. So nothing opens a root's file by name: the root is opened as a
directory, then each component with ``O_NOFOLLOW | O_DIRECTORY`` relative to
the previous descriptor (``openat``), and the final component with
``O_NOFOLLOW | O_NONBLOCK`` (a FIFO never blocks the opener, a swapped-in
symlink fails with ``ELOOP``). Readers (:mod:`~tooldeck.workspace.content`,
:mod:`~tooldeck.workspace.walk`) and writers (``open_dir`` / ``open_parent``:
"the directory that holds this path, as a descriptor") share this walker.

Where the kernel has ``openat2`` (Linux ≥ 5.6) a read opens the path in one
call from the root's descriptor, with ``RESOLVE_BENEATH | RESOLVE_NO_SYMLINKS``:
the kernel refuses any link on the way, the final name included, and any way
out of the root, which is what the walk checks one component at a time.
Python's ``os`` does not expose it, so it is called through ``ctypes``; any
failure (a link, a missing file, a kernel or seccomp filter without it) goes
to the component walk, which says precisely what is wrong. The walk works on
every POSIX system.
"""

from __future__ import annotations

import ctypes
import errno
import os
import stat
import sys
from collections.abc import Iterable, Sequence

from tooldeck.core.errors import ErrorCode, ToolError
from tooldeck.workspace.hidden import is_hidden

_CLOEXEC = getattr(os, "O_CLOEXEC", 0)
DIR_FLAGS = os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW | _CLOEXEC
FILE_FLAGS = os.O_RDONLY | os.O_NONBLOCK | os.O_NOFOLLOW | _CLOEXEC


def components(root: str, abs_path: str) -> list[str]:
    """The components of ``abs_path`` below ``root`` (separator-aware).

    Refuses a path that is not beneath ``root`` or that contains ``..``: the
    caller passes the canonical path the path rules resolved."""
    base = root.rstrip(os.sep) or os.sep
    if abs_path == base:
        return []
    prefix = base if base.endswith(os.sep) else base + os.sep
    if not abs_path.startswith(prefix):
        raise ToolError(ErrorCode.OUTSIDE_ROOTS, f"{abs_path!r} is not inside the root {root!r}")
    parts = [p for p in abs_path[len(prefix) :].split(os.sep) if p not in ("", ".")]
    if ".." in parts:
        raise ToolError(ErrorCode.OUTSIDE_ROOTS, f"{abs_path!r} contains '..'")
    return parts


def open_root(root: str) -> int:
    """The root directory itself (a canonical path: no link to follow)."""
    return os.open(root, DIR_FLAGS)


def open_dir(root: str, parts: Sequence[str], *, create: bool = False, created: list[str] | None = None) -> int:
    """A descriptor for ``root/parts...``, never following a symbolic link.

    ``create`` makes missing folders (their root-relative paths are appended
    to ``created`` so a failed write can remove them). A component that is a
    symbolic link or not a directory raises ``denied``; other ``OSError`` pass
    through for the caller to word."""
    fd = open_root(root)
    walked: list[str] = []
    try:
        for comp in parts:
            walked.append(comp)
            try:
                nxt = os.open(comp, DIR_FLAGS, dir_fd=fd)
            except FileNotFoundError:
                if not create:
                    raise
                os.mkdir(comp, 0o777, dir_fd=fd)
                if created is not None:
                    created.append("/".join(walked))
                nxt = os.open(comp, DIR_FLAGS, dir_fd=fd)
            except OSError as exc:
                if exc.errno in (errno.ELOOP, errno.ENOTDIR) and is_link_at(fd, comp):
                    raise ToolError(
                        ErrorCode.DENIED,
                        f"{'/'.join(walked)!r} is a symbolic link (it changed after the path was checked); "
                        "read the path again",
                    ) from exc
                raise
            os.close(fd)
            fd = nxt
    except BaseException:
        os.close(fd)
        raise
    return fd


def open_parent(root: str, abs_path: str, *, create: bool = False) -> tuple[int, str]:
    """For a writer: the descriptor of the folder holding ``abs_path`` and the
    final name to use relative to it (``openat``/``renameat``/``unlinkat``)."""
    parts = components(root, abs_path)
    if not parts:
        raise ToolError(ErrorCode.NOT_A_FILE, "the root directory itself cannot be written as a file")
    return open_dir(root, parts[:-1], create=create), parts[-1]


def is_link_at(dir_fd: int, name: str) -> bool:
    try:
        return stat.S_ISLNK(os.stat(name, dir_fd=dir_fd, follow_symlinks=False).st_mode)
    except OSError:
        return False


def _loops_at(dir_fd: int, name: str) -> bool:
    try:
        os.stat(name, dir_fd=dir_fd)
    except OSError as exc:
        return exc.errno == errno.ELOOP
    return False


def loop_error(shown: str) -> ToolError:
    """A symbolic link that leads back to itself: said as such (``details.loop``)."""
    return ToolError(
        ErrorCode.INVALID_ARGUMENTS,
        f"{shown!r} is a symbolic link loop (it points back to itself through other links); it has no content to read",
        {"loop": True},
    )


_SYS_OPENAT2 = 437  # the same number on every architecture (a system call added after the unification)
_RESOLVE = 0x02 | 0x04 | 0x08  # RESOLVE_NO_MAGICLINKS | RESOLVE_NO_SYMLINKS | RESOLVE_BENEATH


class _OpenHow(ctypes.Structure):
    _fields_ = [("flags", ctypes.c_uint64), ("mode", ctypes.c_uint64), ("resolve", ctypes.c_uint64)]


class _Openat2:
    """``openat2`` through libc's ``syscall``, while the kernel takes it."""

    def __init__(self) -> None:
        self.call = None
        if sys.platform.startswith("linux"):
            try:
                self.call = ctypes.CDLL(None, use_errno=True).syscall
            except (OSError, AttributeError):
                self.call = None

    def open(self, dir_fd: int, rel: str, flags: int) -> int | None:
        """A descriptor, or None: the caller walks the path instead."""
        call = self.call
        if call is None:
            return None
        how = _OpenHow(flags, 0, _RESOLVE)
        fd = call(ctypes.c_long(_SYS_OPENAT2), ctypes.c_long(dir_fd), os.fsencode(rel), ctypes.byref(how),
                  ctypes.c_size_t(ctypes.sizeof(how)))  # fmt: skip
        if fd >= 0:
            return int(fd)
        if ctypes.get_errno() in (errno.ENOSYS, errno.EPERM, errno.EINVAL, errno.E2BIG):
            self.call = None  # not on this kernel, or refused by a seccomp filter: the walk from now on
        return None


_OPENAT2 = _Openat2()


def open_beneath(root: str, abs_path: str, shown: str, *, directory: bool = False) -> int:
    """Open ``abs_path`` (a file, or a folder with ``directory``) for reading,
    walking from ``root`` without following any symbolic link. Errors are
    :class:`ToolError` worded for the model (``shown`` names the path). The
    state directory is never opened here, whatever the root (:mod:`.hidden`)."""
    if is_hidden(abs_path):
        raise ToolError(ErrorCode.OUTSIDE_ROOTS, f"{shown!r} is outside the workspace roots")
    parts = components(root, abs_path)
    if not parts:
        try:
            return open_root(root)
        except OSError as exc:
            raise open_error(exc, shown) from exc
    if _OPENAT2.call is not None:
        try:
            rfd = open_root(root)
        except OSError as exc:
            raise open_error(exc, shown) from exc
        try:
            fd = _OPENAT2.open(rfd, "/".join(parts), DIR_FLAGS if directory else FILE_FLAGS)
        finally:
            os.close(rfd)
        if fd is not None:
            return fd
    try:
        dfd = open_dir(root, parts[:-1])
    except OSError as exc:
        raise open_error(exc, shown) from exc
    try:
        name = parts[-1]
        try:
            return os.open(name, DIR_FLAGS if directory else FILE_FLAGS, dir_fd=dfd)
        except OSError as exc:
            if exc.errno in (errno.ELOOP, errno.ENOTDIR) and is_link_at(dfd, name):
                if _loops_at(dfd, name):
                    raise loop_error(shown) from exc
                raise ToolError(
                    ErrorCode.DENIED, f"{shown!r} is a symbolic link now (it changed after the path was checked)"
                ) from exc
            raise open_error(exc, shown) from exc
    finally:
        os.close(dfd)


def regular_files(root: str, rels: Iterable[str]) -> set[str]:
    """Which of ``rels`` (root-relative, "/"-separated) are regular files
    reached from ``root`` without following a link: names an outside
    process (ripgrep) reported, checked before they are shown.

    Folders are visited in tree order, each opened once from its parent's
    descriptor (``O_NOFOLLOW``), the open ones along the current path kept
    for the next folder; in a folder, a few names are checked with one
    ``fstatat`` each, more by one listing of it (the entry types come with
    the names). 4,494 names in 642 folders: 23 → 11.5 ms."""
    by_dir: dict[str, list[str]] = {}
    for rel in rels:
        head, _, name = rel.rpartition("/")
        by_dir.setdefault(head, []).append(name)
    ok: set[str] = set()
    try:
        root_fd = open_root(root)
    except OSError:
        return ok
    stack: list[tuple[str, int]] = []  # (component, descriptor) of the folders open below the root
    try:
        for head in sorted(by_dir, key=lambda h: h.replace("/", "\0")):
            parts = [p for p in head.split("/") if p]
            if ".." in parts:
                continue
            dfd = _descend(root_fd, stack, parts)
            if dfd >= 0:
                _regular_in(dfd, head, by_dir[head], ok)
    finally:
        for _, fd in stack:
            os.close(fd)
        os.close(root_fd)
    return ok


_LIST_FROM = 6  # names in one folder from which one listing is cheaper than a stat each


def _descend(root_fd: int, stack: list[tuple[str, int]], parts: list[str]) -> int:
    """The descriptor of ``parts`` below the root (-1: cannot be reached
    without a link), reusing and updating the open path ``stack``."""
    keep = 0
    while keep < len(stack) and keep < len(parts) and stack[keep][0] == parts[keep]:
        keep += 1
    while len(stack) > keep:
        os.close(stack.pop()[1])
    fd = stack[-1][1] if stack else root_fd
    for comp in parts[keep:]:
        try:
            fd = os.open(comp, DIR_FLAGS, dir_fd=fd)
        except OSError:
            return -1
        stack.append((comp, fd))
    return fd


def _regular_in(dfd: int, head: str, names: list[str], ok: set[str]) -> None:
    prefix = f"{head}/" if head else ""
    if len(names) >= _LIST_FROM:
        wanted = set(names)
        try:
            with os.scandir(dfd) as entries:
                for entry in entries:
                    if entry.name in wanted and entry.is_file(follow_symlinks=False):
                        ok.add(prefix + entry.name)
        except OSError:
            pass
        return
    for name in names:
        try:
            st = os.stat(name, dir_fd=dfd, follow_symlinks=False)
        except OSError:
            continue
        if stat.S_ISREG(st.st_mode):
            ok.add(prefix + name)


def open_error(exc: OSError, shown: str) -> ToolError:
    """An ``OSError`` from opening ``shown`` as a model-facing error."""
    if exc.errno == errno.ENOENT:
        return ToolError(ErrorCode.NOT_FOUND, f"{shown!r} does not exist")
    if exc.errno == errno.ELOOP:
        return ToolError(
            ErrorCode.DENIED, f"{shown!r}: a symbolic link on its path changed or loops; read the path again"
        )
    if exc.errno == errno.ENOTDIR:
        return ToolError(ErrorCode.NOT_A_DIRECTORY, f"{shown!r}: not a directory (or a folder on its path is not)")
    if exc.errno == errno.EISDIR:
        return ToolError(ErrorCode.NOT_A_FILE, f"{shown!r} is a directory; use read_directory")
    if exc.errno in (errno.EACCES, errno.EPERM):
        return ToolError(ErrorCode.DENIED, f"permission denied reading {shown!r}")
    if exc.errno == errno.ENXIO:
        return ToolError(ErrorCode.NOT_A_FILE, f"{shown!r} is a socket or device, not a regular file")
    return ToolError(ErrorCode.IO_ERROR, f"cannot open {shown!r}: {exc.strerror}")
