"""Per-file write locks that hold across threads and processes.

Every write is a compare-and-swap: under the lock of each file it changes, the
writer re-reads the file, compares it with what its edit was computed from,
and only then renames its new content in. For that to mean anything, two
writers of one file (two threads of a server, a server and a ``tooldeck call``)
must exclude each other for that short moment.

Across processes: POSIX record locks (``fcntl.lockf``) on one byte of a single
lock file, ``<state_dir>/locks/files.lock``, at an offset derived from the
file's canonical path (a hash). One descriptor serves any number of files: a
3,000-file patch holds 3,000 byte locks, where a lock file per path would need
3,000 descriptors at once. POSIX locks belong to the *process*, so two threads
of one process do not exclude each other through them: a fixed table of
threading locks (striped by the same hash) does that, taken first.

Two rules keep this sound: the lock file is opened by this module only, once
per process and state directory, and never closed (closing *any* descriptor of
it would drop every lock the process holds on it); locks are taken in sorted
order (thread stripes, then bytes), so two batches never wait on each other in
a cycle. Requests are non-blocking with a short back-off, so the kernel's
process-level deadlock detection (which cannot see threads) never reports a
false cycle, and a stuck holder ends in a clear error instead of a hang.
"""

from __future__ import annotations

import errno
import fcntl
import functools
import hashlib
import os
import threading
import time
from collections.abc import Iterable, Iterator
from contextlib import contextmanager

from tooldeck.core.errors import ErrorCode, ToolError

STRIPES = 1024
WAIT_SECONDS = 60.0
_KEY_BITS = 62  # a byte offset must fit a signed 64-bit off_t

_thread_locks = [threading.Lock() for _ in range(STRIPES)]
_fds: dict[str, int] = {}
_fds_lock = threading.Lock()


def _reinit_after_fork() -> None:
    # a forked child inherits locks held by threads that do not exist in it
    global _thread_locks, _fds_lock
    _thread_locks = [threading.Lock() for _ in range(STRIPES)]
    _fds_lock = threading.Lock()


os.register_at_fork(after_in_child=_reinit_after_fork)


@functools.lru_cache(maxsize=512)
def _canonical_root(root_path: str) -> str:
    return os.path.realpath(root_path)


def lock_keys(files: Iterable[tuple[str, Iterable[str]]]) -> list[int]:
    """The lock of each file ``root_path/parts...``: a hash of its canonical
    path, each root made canonical once (a realpath per file was 12 ms of an
    800-file batch)."""
    roots: dict[str, str] = {}
    keys = []
    for root_path, parts in files:
        canonical = roots.get(root_path)
        if canonical is None:
            canonical = roots[root_path] = _canonical_root(root_path)
        keys.append(_key_in(canonical, parts))
    return keys


def _key_in(canonical_root: str, parts: Iterable[str]) -> int:
    digest = hashlib.blake2b(os.fsencode(os.path.join(canonical_root, *parts)), digest_size=8).digest()
    return int.from_bytes(digest, "big") >> (64 - _KEY_BITS)


def _lock_fd(state_dir: str) -> int:
    fd = _fds.get(state_dir)  # an absolute name seen before: no realpath per write
    if fd is not None:
        return fd
    where = os.path.realpath(state_dir)
    fd = _fds.get(where)
    if fd is not None:
        if os.path.isabs(state_dir):
            with _fds_lock:
                _fds[state_dir] = fd
        return fd
    with _fds_lock:
        fd = _fds.get(where)
        if fd is None:
            folder = os.path.join(where, "locks")
            os.makedirs(folder, mode=0o700, exist_ok=True)
            fd = os.open(os.path.join(folder, "files.lock"), os.O_RDWR | os.O_CREAT | os.O_CLOEXEC, 0o600)
            _fds[where] = fd
        if os.path.isabs(state_dir):  # a relative name would change meaning with the working directory
            _fds[state_dir] = fd
    return fd


def _too_long(what: str) -> ToolError:
    return ToolError(
        ErrorCode.TIMEOUT,
        f"another writer has held the lock of {what} for {WAIT_SECONDS:g} s; nothing was changed, try again",
    )


def _lock_byte(fd: int, key: int, deadline: float, what: str) -> None:
    pause = 0.0002
    while True:
        try:
            fcntl.lockf(fd, fcntl.LOCK_EX | fcntl.LOCK_NB, 1, key)
            return
        except OSError as exc:
            if exc.errno not in (errno.EACCES, errno.EAGAIN, errno.EDEADLK):
                raise
        if time.monotonic() > deadline:
            raise _too_long(what)
        time.sleep(pause)
        pause = min(pause * 2, 0.01)


@contextmanager
def hold(state_dir: str | os.PathLike[str], keys: Iterable[int], what: str = "a file") -> Iterator[None]:
    """Hold the write locks of ``keys`` (from :func:`lock_keys`) for the block."""
    ordered = sorted(set(keys))
    stripes = sorted({k % STRIPES for k in ordered})
    fd = _lock_fd(os.fspath(state_dir))
    deadline = time.monotonic() + WAIT_SECONDS
    thread_locks = _thread_locks
    taken_stripes: list[int] = []
    taken_keys: list[int] = []
    try:
        for s in stripes:
            if not thread_locks[s].acquire(timeout=max(0.0, deadline - time.monotonic())):
                raise _too_long(what)
            taken_stripes.append(s)
        for k in ordered:
            _lock_byte(fd, k, deadline, what)
            taken_keys.append(k)
        yield
    finally:
        for k in reversed(taken_keys):
            fcntl.lockf(fd, fcntl.LOCK_UN, 1, k)
        for s in reversed(taken_stripes):
            thread_locks[s].release()
