"""Files of the state directory (not of a root): lock files, durable writes,
private append-only logs.

What is opened where (docs/architecture.md, "Files opened outside
workspace/", has the list by module): a file of a root that a model may name
is opened only through :mod:`tooldeck.workspace.dirfd` (``O_NOFOLLOW``
beneath the root's descriptor); a file the person named (the config files, a
ChatMD or prompt file and what a file with authority reads outside the roots,
``@FILE`` arguments, the client configurations ``connect`` edits, a token
file, a declared script) is read only through
:mod:`tooldeck.workspace.person_files`; this module holds the state
directory's locks, private files and temp-file-then-rename writes. Opened by
path elsewhere, none named by a model, each a stated exception: the kernel's
own files (``/proc``, ``/sys/fs/cgroup``), tooldeck's package data, git's
metadata files git itself follows (``git/``, ``shell/``), state-directory
files read back by their owners (the index's generations, the context graph,
CLI pages, the shell's audit log), and the stdio handshake cache
(``mcp/handshake_cache.py``: it runs before anything but the standard library
loads, and digests the config files to key the cache).
"""

from __future__ import annotations

import contextlib
import fcntl
import os
import stat
from collections.abc import Iterator

_CLOEXEC = getattr(os, "O_CLOEXEC", 0)
JOURNAL_DIR = "journal"  # under the state directory: one folder per batch write in flight (workspace/journal.py)


def batches_left(state_dir: str | os.PathLike[str]) -> bool:
    """Whether the journal holds a batch folder (a write in flight, or one
    its process left when it died): one listing, so that a clean start does
    not load the journal's code to find nothing to recover."""
    try:
        with os.scandir(os.path.join(os.fspath(state_dir), JOURNAL_DIR)) as entries:
            return next(entries, None) is not None
    except OSError:
        return False


@contextlib.contextmanager
def exclusive_lock(path: str | os.PathLike[str]) -> Iterator[None]:
    """Hold an exclusive ``flock`` on ``path`` (created if missing) across
    processes; a second holder waits."""
    fd = os.open(path, os.O_RDWR | os.O_CREAT | _CLOEXEC, 0o644)
    try:
        fcntl.flock(fd, fcntl.LOCK_EX)
        try:
            yield
        finally:
            fcntl.flock(fd, fcntl.LOCK_UN)
    finally:
        os.close(fd)


def open_state_file(path: str | os.PathLike[str], *, create: bool) -> int:
    """A read-write descriptor of a small state file only its owner may read (0600,
    created with ``create``), for ``flock`` and ``pread``/``pwrite``; a link or a
    file that is not regular is refused (OSError)."""
    flags = os.O_RDWR | os.O_NOFOLLOW | os.O_NONBLOCK | _CLOEXEC | (os.O_CREAT if create else 0)
    fd = os.open(path, flags, 0o600)
    if not stat.S_ISREG(os.fstat(fd).st_mode):
        os.close(fd)
        raise OSError(f"{os.fspath(path)} is not a regular file")
    return fd


def fsync_path(path: str | os.PathLike[str], *, directory: bool = False) -> None:
    """Flush a file (or, with ``directory``, a folder's entries) to disk."""
    fd = os.open(path, os.O_RDONLY | (os.O_DIRECTORY if directory else 0) | _CLOEXEC)
    try:
        os.fsync(fd)
    finally:
        os.close(fd)


def append_private(path: str | os.PathLike[str], data: bytes) -> None:
    """Append ``data`` in one write to a file only its owner may read (0600)."""
    fd = os.open(path, os.O_WRONLY | os.O_APPEND | os.O_CREAT | _CLOEXEC, 0o600)
    try:
        os.write(fd, data)
    finally:
        os.close(fd)


def write_private_atomic(path: str | os.PathLike[str], data: bytes | memoryview, *, durable: bool = True) -> None:
    """Replace ``path`` with ``data`` (mode 0600): written to a temp file in the
    same folder (``.<name>.<pid>.<random>.tmp``), flushed, then renamed over it,
    so a reader (another process) sees the old bytes or the new ones, never a
    half-written file. The one temp-then-rename of the state directory (a
    root's files go through ``workspace/atomic.py``). ``durable=False`` skips
    the fsync, for a file that may be lost in a power cut (a CLI page)."""
    path = os.fspath(path)
    folder, name = os.path.split(path)
    tmp = os.path.join(folder, f".{name}.{os.getpid()}.{os.urandom(4).hex()}.tmp")
    fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL | _CLOEXEC | getattr(os, "O_NOFOLLOW", 0), 0o600)
    try:
        try:
            view = memoryview(data)
            while view:
                view = view[os.write(fd, view) :]
            if durable:
                os.fsync(fd)
        finally:
            os.close(fd)
        os.replace(tmp, path)
    except BaseException:
        with contextlib.suppress(OSError):
            os.unlink(tmp)
        raise


def read_private(path: str | os.PathLike[str], limit: int = 16 * 1024 * 1024) -> bytes | None:
    """The bytes of a state file, or None when it does not exist; a state file
    that is not a regular file (a FIFO, a link planted by someone) is refused
    with OSError instead of blocking or being followed."""
    try:
        fd = os.open(path, os.O_RDONLY | os.O_NONBLOCK | _CLOEXEC | getattr(os, "O_NOFOLLOW", 0))
    except FileNotFoundError:
        return None
    try:
        st = os.fstat(fd)
        if not stat.S_ISREG(st.st_mode):
            raise OSError(f"{os.fspath(path)}: not a regular file")
        chunks: list[bytes] = []
        total = 0
        while total <= limit:
            chunk = os.read(fd, 1 << 16)
            if not chunk:
                break
            chunks.append(chunk)
            total += len(chunk)
        if total > limit:
            raise OSError(f"{os.fspath(path)}: larger than {limit} bytes")
        return b"".join(chunks)
    finally:
        os.close(fd)
