"""Files the person named: read by the path they gave, never one a model gave.

The person's configuration files (``config.toml``, a project's
``.tooldeck.toml``, a file ``tooldeck trust allow`` approves), the ChatMD file
``tooldeck run`` or ``tooldeck chat`` works on and the prompts of
``serve --prompts`` outside the roots (with what a file with authority
imports, documents or mounts as an agent from outside them), the ``@FILE`` of
``tooldeck call``, the client configurations ``tooldeck connect`` edits, a
chat's ``--token-file``, a declared shell script. They lie outside the roots
(a root's files are opened beneath its descriptor: :mod:`dirfd`), so they are
opened by path; every such read goes through :func:`read_named`, which
guards them alike:

* a FIFO, a device or a directory never blocks or streams forever
  (``O_NONBLOCK``; regular files only);
* a size cap (``limit``): a larger file is refused, not read into memory;
* an error that names the file and says why (``OSError`` with ``filename``
  and ``strerror``; ``FileNotFoundError`` when there is none);
* links are followed when the person's path is one (a dotfiles folder), and
  refused with ``follow_links=False`` for a path the caller already resolved
  (a link swapped in since is not read).

Standard library only: the configuration is read on every command's start.
"""

from __future__ import annotations

import errno
import os
import stat

MAX_NAMED_BYTES = 16 * 1024 * 1024
_CLOEXEC = getattr(os, "O_CLOEXEC", 0)


def read_named(path: str | os.PathLike[str], limit: int = MAX_NAMED_BYTES, *, follow_links: bool = True) -> bytes:
    """The bytes of the file the person named at ``path`` (at most ``limit``).

    Raises ``FileNotFoundError`` when it does not exist, and ``OSError`` whose
    ``strerror`` says why for one that is not a regular file, is larger than
    ``limit`` or cannot be read."""
    flags = os.O_RDONLY | os.O_NONBLOCK | _CLOEXEC | (0 if follow_links else getattr(os, "O_NOFOLLOW", 0))
    try:
        fd = os.open(path, flags)
    except OSError as exc:
        if exc.errno == errno.ELOOP and not follow_links:
            raise OSError(errno.ELOOP, "a link, not the file itself", os.fspath(path)) from exc
        raise
    try:
        mode = os.fstat(fd).st_mode
        if not stat.S_ISREG(mode):
            what = "a directory" if stat.S_ISDIR(mode) else "not a regular file"
            raise OSError(errno.EISDIR if stat.S_ISDIR(mode) else errno.EINVAL, what, os.fspath(path))
        chunks: list[bytes] = []
        total = 0
        while total <= limit:
            chunk = os.read(fd, min(1 << 16, limit + 1 - total))
            if not chunk:
                return b"".join(chunks)
            chunks.append(chunk)
            total += len(chunk)
        raise OSError(errno.EFBIG, f"larger than {limit} bytes", os.fspath(path))
    finally:
        os.close(fd)


def read_named_text(path: str | os.PathLike[str], limit: int = MAX_NAMED_BYTES, *, follow_links: bool = True) -> str:
    """:func:`read_named` decoded as UTF-8; text that is not UTF-8 is an
    ``OSError`` naming the file and the first bad byte."""
    data = read_named(path, limit, follow_links=follow_links)
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise OSError(errno.EILSEQ, f"not UTF-8 text (byte {exc.start})", os.fspath(path)) from exc
