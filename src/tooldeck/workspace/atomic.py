"""All-or-nothing writes inside a root.

Every write goes to a temp file in the target's directory and is renamed over
the target, so a reader never sees half a file and the mode is kept. The
directory is reached by walking from the root with ``O_NOFOLLOW |
O_DIRECTORY`` one component at a time and every later operation is relative to
that descriptor: if a component is swapped for a symlink between the path
check and the write, the walk fails instead of writing outside the root, and a
final component swapped for a symlink is replaced (``rename`` never follows it),
never written through.

:class:`AtomicBatch` extends this to many files: stage every temp file first,
then rename them in; if any step fails, every file already changed is restored
and every file already added is removed. Data is not fsynced (atomicity
against concurrent readers, not against power loss).
"""

from __future__ import annotations

import errno
import logging
import os
import secrets
import stat
from collections.abc import Callable
from dataclasses import dataclass, field

from tooldeck.core.errors import ErrorCode, ToolError

log = logging.getLogger("tooldeck.atomic")

_DIR_FLAGS = os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW | getattr(os, "O_CLOEXEC", 0)
_TMP_FLAGS = os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW | getattr(os, "O_CLOEXEC", 0)

# Fault injection for tests: called with (step, rel_path) before each step of a
# batch commit ("stage", "apply"); raising there simulates an I/O failure.
FaultHook = Callable[[str, str], None]
fault_hook: FaultHook | None = None


def _umask_mode() -> int:
    mask = os.umask(0)
    os.umask(mask)
    return 0o666 & ~mask


def _split(rel: str) -> tuple[list[str], str]:
    parts = [p for p in rel.replace(os.sep, "/").split("/") if p not in ("", ".")]
    if not parts:
        raise ToolError(ErrorCode.NOT_A_FILE, "the root directory itself cannot be written as a file")
    if any(p == ".." for p in parts):
        raise ToolError(ErrorCode.OUTSIDE_ROOTS, f"{rel!r} contains '..'")
    return parts[:-1], parts[-1]


def open_dir(root_path: str, components: list[str], *, create: bool, created: list[str] | None = None) -> int:
    """A descriptor for ``root/components...``, never following a symlink."""
    fd = os.open(root_path, os.O_RDONLY | os.O_DIRECTORY | getattr(os, "O_CLOEXEC", 0))
    walked: list[str] = []
    try:
        for comp in components:
            walked.append(comp)
            try:
                nxt = os.open(comp, _DIR_FLAGS, dir_fd=fd)
            except FileNotFoundError:
                if not create:
                    raise
                os.mkdir(comp, 0o777, dir_fd=fd)
                if created is not None:
                    created.append("/".join(walked))
                nxt = os.open(comp, _DIR_FLAGS, dir_fd=fd)
            except OSError as exc:
                if exc.errno in (errno.ELOOP, errno.ENOTDIR):
                    raise ToolError(
                        ErrorCode.DENIED,
                        f"{'/'.join(walked)!r} is a symbolic link or not a directory; nothing was written",
                    ) from exc
                raise
            os.close(fd)
            fd = nxt
    except BaseException:
        os.close(fd)
        raise
    return fd


def _lstat_at(dfd: int, name: str) -> os.stat_result | None:
    try:
        return os.stat(name, dir_fd=dfd, follow_symlinks=False)
    except FileNotFoundError:
        return None


def _check_target(st: os.stat_result | None, rel: str) -> None:
    if st is None:
        return
    if stat.S_ISLNK(st.st_mode):
        raise ToolError(ErrorCode.DENIED, f"{rel!r} is a symbolic link; tooldeck never writes through a link")
    if not stat.S_ISREG(st.st_mode):
        raise ToolError(ErrorCode.NOT_A_FILE, f"{rel!r} exists and is not a regular file")


def _write_temp(dfd: int, name: str, data: bytes, mode: int) -> str:
    tmp = f".{name[:100]}.tdk-{secrets.token_hex(4)}.tmp"
    fd = os.open(tmp, _TMP_FLAGS, 0o600, dir_fd=dfd)
    try:
        view = memoryview(data)
        while view:
            n = os.write(fd, view)
            view = view[n:]
        os.fchmod(fd, mode)
    except BaseException:
        os.close(fd)
        _unlink_quiet(dfd, tmp)
        raise
    os.close(fd)
    return tmp


def _read_at(dfd: int, name: str) -> bytes:
    fd = os.open(name, os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK | getattr(os, "O_CLOEXEC", 0), dir_fd=dfd)
    try:
        chunks: list[bytes] = []
        while chunk := os.read(fd, 1 << 20):
            chunks.append(chunk)
        return b"".join(chunks)
    finally:
        os.close(fd)


def _unlink_quiet(dfd: int, name: str) -> None:
    try:
        os.unlink(name, dir_fd=dfd)
    except OSError:
        pass


def write_file(root_path: str, rel: str, data: bytes, *, mode: int | None = None, create_parents: bool = True) -> None:
    """Atomically replace (or create) ``root/rel`` with ``data``, keeping its mode."""
    dirs, name = _split(rel)
    dfd = open_dir(root_path, dirs, create=create_parents)
    try:
        st = _lstat_at(dfd, name)
        _check_target(st, rel)
        file_mode = mode if mode is not None else (stat.S_IMODE(st.st_mode) if st else _umask_mode())
        tmp = _write_temp(dfd, name, data, file_mode)
        try:
            os.rename(tmp, name, src_dir_fd=dfd, dst_dir_fd=dfd)
        except BaseException:
            _unlink_quiet(dfd, tmp)
            raise
    finally:
        os.close(dfd)


def remove_file(root_path: str, rel: str) -> None:
    dirs, name = _split(rel)
    dfd = open_dir(root_path, dirs, create=False)
    try:
        st = _lstat_at(dfd, name)
        if st is None:
            raise ToolError(ErrorCode.NOT_FOUND, f"{rel!r} does not exist")
        if stat.S_ISDIR(st.st_mode):
            raise ToolError(ErrorCode.NOT_A_FILE, f"{rel!r} is a directory; only files can be deleted")
        os.unlink(name, dir_fd=dfd)
    finally:
        os.close(dfd)


# --------------------------------------------------------------------------
# many files, all or nothing


@dataclass
class _Op:
    root: str
    rel: str
    data: bytes | None  # None = delete
    mode: int | None = None
    expect: bytes | None = None  # the target must still hold these bytes when staged
    expect_absent: bool = False  # the target must still not exist when staged
    dfd: int = -1
    name: str = ""
    tmp: str | None = None
    backup: str | None = None
    existed: bool = False
    applied: bool = False
    created_dirs: list[str] = field(default_factory=list)


class AtomicBatch:
    """Stage writes and deletes across files, then commit them all or none.

    ``write(root, rel, data)`` creates or replaces; ``delete(root, rel)``
    removes. A move is a write of the destination plus a delete of the source.

    ``expect`` (the bytes the caller read) or ``expect_absent`` make staging
    refuse with ``conflict`` when another writer changed the file between the
    caller's read and this commit, so a concurrent update is never lost.
    """

    def __init__(self) -> None:
        self._ops: list[_Op] = []
        self._keys: set[tuple[str, ...]] = set()
        self._dirs: dict[tuple[str, ...], int] = {}
        self.failed_rel: str | None = None

    def write(
        self,
        root_path: str,
        rel: str,
        data: bytes,
        mode: int | None = None,
        *,
        expect: bytes | None = None,
        expect_absent: bool = False,
    ) -> None:
        self._add(_Op(root_path, rel, data, mode, expect, expect_absent))

    def delete(self, root_path: str, rel: str, *, expect: bytes | None = None) -> None:
        self._add(_Op(root_path, rel, None, expect=expect))

    def _add(self, op: _Op) -> None:
        dirs, name = _split(op.rel)  # "./a" and "a" are one file
        key = (op.root, *dirs, name)
        if key in self._keys:
            raise ValueError(f"{op.rel!r} appears twice in one batch; merge its changes first")
        self._keys.add(key)
        self._ops.append(op)

    def __len__(self) -> int:
        return len(self._ops)

    def commit(self) -> None:
        """Write everything or nothing. On failure ``failed_rel`` names the
        file whose step failed and the exception is re-raised after rollback."""
        self.failed_rel = None
        try:
            for op in self._ops:
                self.failed_rel = op.rel
                self._stage(op)
            for op in self._ops:
                self.failed_rel = op.rel
                self._apply(op)
            self.failed_rel = None
            for op in self._ops:
                if op.backup:
                    _unlink_quiet(op.dfd, op.backup)
                    op.backup = None
        except BaseException:
            self._rollback()
            raise
        finally:
            self._close()

    # internals ----------------------------------------------------------------
    def _stage(self, op: _Op) -> None:
        if fault_hook:
            fault_hook("stage", op.rel)
        dirs, op.name = _split(op.rel)
        where = (op.root, *dirs)
        if where not in self._dirs:  # one descriptor per directory, not per file
            self._dirs[where] = open_dir(op.root, dirs, create=op.data is not None, created=op.created_dirs)
        op.dfd = self._dirs[where]
        st = _lstat_at(op.dfd, op.name)
        _check_target(st, op.rel)
        op.existed = st is not None
        if op.expect_absent and st is not None:
            raise ToolError(ErrorCode.CONFLICT, f"{op.rel!r} was created meanwhile by another writer; nothing changed")
        if op.expect is not None and (st is None or _read_at(op.dfd, op.name) != op.expect):
            raise ToolError(
                ErrorCode.CONFLICT,
                f"{op.rel!r} changed while the edit was being prepared; read it again and redo the edit. "
                "Nothing was changed",
            )
        if op.data is None:
            if st is None:
                raise ToolError(ErrorCode.NOT_FOUND, f"{op.rel!r} does not exist; nothing was changed")
            return
        mode = op.mode if op.mode is not None else (stat.S_IMODE(st.st_mode) if st else _umask_mode())
        op.tmp = _write_temp(op.dfd, op.name, op.data, mode)

    def _apply(self, op: _Op) -> None:
        if fault_hook:
            fault_hook("apply", op.rel)
        if op.existed:
            op.backup = f".{op.name[:100]}.tdk-{secrets.token_hex(4)}.bak"
            os.rename(op.name, op.backup, src_dir_fd=op.dfd, dst_dir_fd=op.dfd)
        op.applied = True
        if op.tmp is not None:
            os.rename(op.tmp, op.name, src_dir_fd=op.dfd, dst_dir_fd=op.dfd)
            op.tmp = None

    def _rollback(self) -> None:
        # best effort for every op: one failed restore must not stop the others
        for op in reversed(self._ops):
            if op.dfd < 0:
                continue
            if op.tmp:
                _unlink_quiet(op.dfd, op.tmp)
                op.tmp = None
            if op.applied:
                if op.backup:
                    try:
                        os.rename(op.backup, op.name, src_dir_fd=op.dfd, dst_dir_fd=op.dfd)
                        op.backup = None
                    except OSError:
                        log.error("could not restore %s from its backup %s", op.rel, op.backup)
                elif op.data is not None:
                    _unlink_quiet(op.dfd, op.name)
            for d in reversed(op.created_dirs):
                try:
                    os.rmdir(os.path.join(op.root, d))
                except OSError:
                    pass

    def _close(self) -> None:
        for fd in self._dirs.values():
            os.close(fd)
        self._dirs.clear()
        for op in self._ops:
            op.dfd = -1
