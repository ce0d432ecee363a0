"""What a confined helper may touch: an allow-list of paths.

A :class:`Policy` names the folders (and single files) a helper may read
beneath, the programs and system folders it may load and execute, and the
rare places it may write. Everything else is denied by the kernel
(Landlock) or absent (the bubblewrap namespace); the network is closed and,
under Landlock ABI 6, so are signals and abstract Unix sockets towards
processes outside the helper's domain.

Allow-lists only: Landlock cannot carve a sub-path out of an allowed folder,
so a folder inside a root (the state directory, say) is readable by a
helper searching that root. What tooldeck shows of it is the workspace's
business (:mod:`tooldeck.workspace`), not the kernel's.

Policies are frozen and hashable: a spawner thread is kept per policy
(:mod:`tooldeck.confine.spawner`), so a changed set of roots is a new
policy and a new thread, never a widened old one.
"""

from __future__ import annotations

import functools
import os
import sys
from collections.abc import Iterable
from dataclasses import dataclass, field, replace

# what a dynamically linked program needs to load: its libraries and the
# loader's cache; localtime for dates. Never /proc (other processes'
# environments) nor /etc as a whole (secrets readable by root live there).
SYSTEM_DIRS = ("/usr", "/lib", "/lib64", "/lib32", "/libx32", "/bin", "/sbin")
SYSTEM_FILES = ("/etc/ld.so.cache", "/etc/ld.so.preload", "/etc/localtime")
DEVICES = ("/dev/null",)
_LIB_KEYS = ("stdlib", "platstdlib", "purelib", "platlib")  # read and written: a helper's discarded stream


def _existing(paths: Iterable[str]) -> tuple[str, ...]:
    out: list[str] = []
    for p in paths:
        if p and os.path.isabs(p) and os.path.exists(p) and p not in out:
            out.append(p)
    return tuple(out)


@dataclass(frozen=True)
class Policy:
    """Paths a helper may use; each tuple is sorted for a stable key."""

    read: tuple[str, ...] = ()  # read files and list folders beneath
    execute: tuple[str, ...] = ()  # read and execute beneath (a program, system folders)
    write: tuple[str, ...] = ()  # read and write beneath (no helper needs it today)
    # folders whose listings (names, never contents) may be read beneath; under
    # bubblewrap they are not bound at all (the namespace shows only the mounts)
    listing: tuple[str, ...] = ()
    label: str = field(default="helper", compare=False)
    # (device, inode) of every path when the policy was made: a folder removed
    # and made again under the same name is another policy (a Landlock rule
    # holds the inode it was given, not the name)
    ids: tuple[tuple[int, int], ...] = ()

    def paths(self) -> tuple[str, ...]:
        return (*self.read, *self.execute, *self.write, *self.listing)


def make(
    label: str,
    *,
    read: Iterable[str] = (),
    execute: Iterable[str] = (),
    write: Iterable[str] = (),
    listing: Iterable[str] = (),
) -> Policy:
    """A policy over the given paths that exist (a missing one cannot be
    granted: Landlock rules are bound to an open file). Built once per set of
    paths (a helper is started per search); only the identities are fresh."""
    pol = _build(label, tuple(read), tuple(execute), tuple(write), tuple(listing))
    ids: list[tuple[int, int]] = []
    for p in pol.paths():
        if p in SYSTEM_DIRS:  # never made again under the same name
            continue
        try:
            st = os.stat(p)
        except OSError:
            continue
        ids.append((st.st_dev, st.st_ino))
    return replace(pol, ids=tuple(ids))


@functools.lru_cache(maxsize=256)
def _build(
    label: str, read: tuple[str, ...], execute: tuple[str, ...], write: tuple[str, ...], listing: tuple[str, ...]
) -> Policy:
    return Policy(
        read=tuple(sorted(_existing(read))),
        execute=tuple(sorted(_existing(execute))),
        write=tuple(sorted(_existing(write))),
        listing=tuple(sorted(_existing(listing))),
        label=label,
    )


def program(
    label: str, exe: str, *, read: Iterable[str] = (), write: Iterable[str] = (), listing: Iterable[str] = ()
) -> Policy:
    """A native program (ripgrep, git): it may execute itself and the system
    folders' files (its loader and libraries), read ``read``."""
    return make(
        label,
        read=(*read, *SYSTEM_FILES),
        execute=(_real(exe), *SYSTEM_DIRS),
        write=write,
        listing=listing,
    )


@functools.lru_cache(maxsize=16)
def _real(exe: str) -> str:
    return os.path.realpath(exe)


def python_install() -> tuple[str, ...]:
    """The folders a worker imports from: the interpreter's prefixes, its
    standard library and site-packages, and the folder tooldeck itself is
    imported from. Not ``sys.path`` as a whole: run as ``python -m`` from a
    project, it starts with that folder, which may be a root."""
    import site
    import sysconfig

    dirs = [sys.prefix, sys.base_prefix, sys.exec_prefix, sys.base_exec_prefix]
    dirs += [p for key, p in sysconfig.get_paths().items() if key in _LIB_KEYS]
    dirs += site.getsitepackages()
    if site.ENABLE_USER_SITE:
        dirs.append(site.getusersitepackages())
    dirs.append(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))  # the tooldeck package folder
    return tuple(sorted(set(_existing(os.path.realpath(d) for d in dirs))))


def python_worker(label: str) -> Policy:
    """A Python worker that is handed its data (parse workers, the token
    worker): it may import, and read nothing of the person's files. It may
    execute nothing at all."""
    return make(label, read=(*python_install(), *SYSTEM_DIRS, *SYSTEM_FILES))
