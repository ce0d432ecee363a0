"""Files of the state directory (not of a root): lock files, durable writes,
private append-only logs.

Why in ``workspace/``: every descriptor tooldeck opens by hand is opened in
this package, so one place answers "what does tooldeck open, and how". These
paths are tooldeck's own (under the state directory), never model-supplied;
files of a root go through :mod:`tooldeck.workspace.dirfd` instead.
"""

from __future__ import annotations

import contextlib
import fcntl
import os
from collections.abc import Iterator

_CLOEXEC = getattr(os, "O_CLOEXEC", 0)


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
