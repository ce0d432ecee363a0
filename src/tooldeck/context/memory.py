"""Handing freed heap back to the system after the builder's large transients."""

from __future__ import annotations

import ctypes
import ctypes.util
import functools
import sys
from collections.abc import Callable


@functools.cache
def _malloc_trim() -> Callable[[int], int] | None:
    if not sys.platform.startswith("linux"):
        return None
    try:
        libc = ctypes.CDLL(ctypes.util.find_library("c") or "libc.so.6")
        return libc.malloc_trim  # type: ignore[no-any-return]
    except (OSError, AttributeError):  # not glibc (musl has no malloc_trim)
        return None


def release_freed_memory() -> None:
    """Give the heap freed by a full index build back to the system.

    Indexing a large tree decodes every file's codemap once; what the index
    keeps is a fraction of that, but glibc keeps the freed pages mapped
    (~120 MB on a 13k-file tree) until asked to trim them."""
    trim = _malloc_trim()
    if trim is not None:
        trim(0)
