"""Is this executable a copy of one a deny rule names? (``cp /usr/bin/rm x; ./x``)

A rule that denies ``rm`` names an executable: the one ``rm`` resolves to on
the runtime's PATH (or the literal path a ``path``/``program`` rule gives).
A command whose resolved file is the same inode, or has the same size and
SHA-256, is that program under another name, and the rule matches it.
Hashes are cached by (device, inode, size, mtime), so a file is read once
until it changes; only files whose size equals a named executable's are read.

This is a convenience, not a boundary: a copy with one byte changed is
another program. The sandbox is what holds.
"""

from __future__ import annotations

import glob
import hashlib
import os
import stat
import threading
import time
from collections.abc import Callable, Iterable
from dataclasses import dataclass

from tooldeck.shell.profiles import Rule

_CACHE_MAX = 512
_cache: dict[tuple[int, int, int, int], str] = {}
_lock = threading.Lock()

Resolver = Callable[[str], str | None]  # program name -> real path on the runtime's PATH


def _sha256(path: str, st: os.stat_result) -> str | None:
    key = (st.st_dev, st.st_ino, st.st_size, st.st_mtime_ns)
    with _lock:
        hit = _cache.get(key)
    if hit is not None:
        return hit
    h = hashlib.sha256()
    try:  # no link followed, never blocks on a FIFO swapped in, and must still be the file that was judged
        fd = os.open(path, os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK | os.O_CLOEXEC)
    except OSError:
        return None
    try:
        now = os.fstat(fd)
        if not stat.S_ISREG(now.st_mode) or (now.st_dev, now.st_ino, now.st_size) != key[:3]:
            return None
        with os.fdopen(fd, "rb", closefd=False) as fh:
            for block in iter(lambda: fh.read(1 << 16), b""):
                h.update(block)
    except OSError:
        return None
    finally:
        os.close(fd)
    digest = h.hexdigest()
    with _lock:
        if len(_cache) >= _CACHE_MAX:
            _cache.pop(next(iter(_cache)))
        _cache[key] = digest
    return digest


@dataclass(frozen=True, slots=True)
class Target:
    real: str
    st: os.stat_result


def named_executables(rules: Iterable[Rule], resolve: Resolver) -> list[Target]:
    """The executables the deny and ask rules name (what a copy would be a copy of)."""
    paths: set[str] = set()
    for r in rules:
        if r.action == "allow":
            continue
        for name in (r.basename, r.program, r.prefix[0] if r.prefix else None):
            if name:
                real = resolve(name)
                if real:
                    paths.add(real)
        if r.path and not glob.has_magic(r.path) and os.path.isfile(r.path):
            paths.add(os.path.realpath(r.path))
    out: list[Target] = []
    for p in sorted(paths):
        try:
            out.append(Target(p, os.stat(p)))
        except OSError:
            continue
    return out


_known: dict[tuple[str, frozenset[str]], tuple[float, list[Target]]] = {}
_KNOWN_TTL = 10.0  # seconds: a package upgrade is noticed this late


def executables_named(names: frozenset[str], path_env: str, resolve: Resolver) -> list[Target]:
    """The executables ``names`` resolve to on ``path_env`` (cached briefly: the
    wrappers tooldeck looks inside, so a copy of one is looked inside too)."""
    key = (path_env, names)
    now = time.monotonic()
    with _lock:
        hit = _known.get(key)
    if hit is not None and now - hit[0] < _KNOWN_TTL:
        return hit[1]
    out: dict[str, Target] = {}
    for name in sorted(names):
        real = resolve(name)
        if real and real not in out:
            try:
                out[real] = Target(real, os.stat(real))
            except OSError:
                continue
    targets = list(out.values())
    with _lock:
        _known[key] = (now, targets)
    return targets


def copies_of(real: str | None, targets: list[Target]) -> tuple[str, ...]:
    """The named executables ``real`` is (same inode, or same size and content)."""
    if real is None or not targets:
        return ()
    try:
        st = os.stat(real)
    except OSError:
        return ()
    out: list[str] = []
    for t in targets:
        if t.real == real:
            continue
        if (st.st_dev, st.st_ino) == (t.st.st_dev, t.st.st_ino):
            out.append(t.real)
        elif st.st_size == t.st.st_size:
            mine, theirs = _sha256(real, st), _sha256(t.real, t.st)
            if mine is not None and mine == theirs:
                out.append(t.real)
    return tuple(out)
