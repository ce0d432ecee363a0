"""Landlock through its three system calls, with ``ctypes`` (stdlib only).

Why not the PyPI ``landlock`` package: its only release is a pre-release
(1.0.0.dev5) that knows file-system rights only (no network rules, ABI 4, no
scoping, ABI 6), leaves its ruleset descriptor open and cannot lower a
request to what an older kernel offers. The kernel's ABI is small and
stable (``include/uapi/linux/landlock.h``, ``landlock(7)``): three system
calls whose numbers are the same on every architecture, two structures.

What this module does: :func:`abi_version` asks the kernel which ABI it
offers (0: none); :class:`Ruleset` handles every right that ABI knows
(best effort: rights a newer kernel adds are simply not requested on an
older one), takes path rules, and :meth:`Ruleset.restrict_self` sets
``no_new_privs`` and enforces the ruleset on the **calling thread** and
the processes and threads it starts afterwards. Threads that already exist
are not affected: that is what lets one thread of a server be confined
while the others are not (:mod:`tooldeck.confine.spawner`).

Nothing here imports the rest of tooldeck: the token worker (whose start-up
must stay cheap) uses it too.
"""

from __future__ import annotations

import ctypes
import os
import stat
from collections.abc import Iterable

SYS_CREATE_RULESET = 444
SYS_ADD_RULE = 445
SYS_RESTRICT_SELF = 446
CREATE_RULESET_VERSION = 1 << 0
RULE_PATH_BENEATH = 1
PR_SET_NO_NEW_PRIVS = 38

# file-system rights (landlock(7)); the ABI that introduced each
EXECUTE = 1 << 0
WRITE_FILE = 1 << 1
READ_FILE = 1 << 2
READ_DIR = 1 << 3
REMOVE_DIR = 1 << 4
REMOVE_FILE = 1 << 5
MAKE_CHAR = 1 << 6
MAKE_DIR = 1 << 7
MAKE_REG = 1 << 8
MAKE_SOCK = 1 << 9
MAKE_FIFO = 1 << 10
MAKE_BLOCK = 1 << 11
MAKE_SYM = 1 << 12
REFER = 1 << 13  # ABI 2
TRUNCATE = 1 << 14  # ABI 3
IOCTL_DEV = 1 << 15  # ABI 5

# network rights (ABI 4) and scopes (ABI 6)
NET_BIND_TCP = 1 << 0
NET_CONNECT_TCP = 1 << 1
SCOPE_ABSTRACT_UNIX_SOCKET = 1 << 0
SCOPE_SIGNAL = 1 << 1

READ = READ_FILE | READ_DIR
FILE_RIGHTS = EXECUTE | WRITE_FILE | READ_FILE | TRUNCATE | IOCTL_DEV  # the rights a rule on a file may hold


def fs_rights(abi: int) -> int:
    """Every file-system right the kernel of ``abi`` knows."""
    rights = (1 << 13) - 1
    if abi >= 2:
        rights |= REFER
    if abi >= 3:
        rights |= TRUNCATE
    if abi >= 5:
        rights |= IOCTL_DEV
    return rights


class _RulesetAttr(ctypes.Structure):
    _fields_ = [
        ("handled_access_fs", ctypes.c_uint64),
        ("handled_access_net", ctypes.c_uint64),
        ("scoped", ctypes.c_uint64),
    ]


class _PathBeneath(ctypes.Structure):
    _pack_ = 1  # the kernel's struct is packed: 12 bytes
    _fields_ = [("allowed_access", ctypes.c_uint64), ("parent_fd", ctypes.c_int32)]


_libc: ctypes.CDLL | None = None


def _syscall() -> ctypes._CFuncPtr:  # type: ignore[name-defined]
    global _libc
    if _libc is None:
        _libc = ctypes.CDLL(None, use_errno=True)
    fn = _libc.syscall
    fn.restype = ctypes.c_long
    return fn


def _check(result: int, what: str) -> int:
    if result < 0:
        err = ctypes.get_errno()
        raise OSError(err, f"{what}: {os.strerror(err)}")
    return result


def abi_version() -> int:
    """The Landlock ABI the running kernel offers; 0 when it has none (too
    old, not built in, or not enabled at boot)."""
    try:
        sc = _syscall()
        v = sc(ctypes.c_long(SYS_CREATE_RULESET), None, ctypes.c_size_t(0), ctypes.c_uint32(CREATE_RULESET_VERSION))
    except (OSError, AttributeError):
        return 0
    return int(v) if v > 0 else 0


class Ruleset:
    """A ruleset being built. ``fs``/``net``/``scoped`` default to every
    right the ABI knows: what no rule allows is denied."""

    def __init__(self, abi: int, *, net: bool = True, scoped: bool = True) -> None:
        if abi < 1:
            raise OSError(95, "Landlock is not available in this kernel")
        self.abi = abi
        self.fs = fs_rights(abi)
        attr = _RulesetAttr(self.fs, NET_BIND_TCP | NET_CONNECT_TCP if net and abi >= 4 else 0, 0)
        if scoped and abi >= 6:
            attr.scoped = SCOPE_ABSTRACT_UNIX_SOCKET | SCOPE_SIGNAL
        # an older kernel accepts the larger structure as long as the fields it lacks are zero
        size = ctypes.c_size_t(ctypes.sizeof(_RulesetAttr))
        fd = _syscall()(ctypes.c_long(SYS_CREATE_RULESET), ctypes.byref(attr), size, ctypes.c_uint32(0))
        self.fd = _check(int(fd), "landlock_create_ruleset")

    def allow(self, path: str, rights: int) -> bool:
        """Allow ``rights`` beneath ``path`` (a folder) or on it (a file: only
        file rights are kept). False when the path does not exist."""
        try:
            pfd = os.open(path, os.O_PATH | os.O_CLOEXEC)
        except OSError:
            return False
        try:
            if not stat.S_ISDIR(os.fstat(pfd).st_mode):
                rights &= FILE_RIGHTS
            rights &= self.fs
            if not rights:
                return False
            rule = _PathBeneath(rights, pfd)
            res = _syscall()(
                ctypes.c_long(SYS_ADD_RULE),
                ctypes.c_int(self.fd),
                ctypes.c_int(RULE_PATH_BENEATH),
                ctypes.byref(rule),
                ctypes.c_uint32(0),
            )
            _check(int(res), f"landlock_add_rule({path})")
            return True
        finally:
            os.close(pfd)

    def allow_all(self, paths: Iterable[str], rights: int) -> None:
        for p in paths:
            self.allow(p, rights)

    def restrict_self(self) -> None:
        """Enforce on the calling thread (and what it starts from now on);
        closes the ruleset. Sets ``no_new_privs`` first, as the kernel asks
        of an unprivileged caller (and tooldeck wants of every helper)."""
        try:
            libc = _libc or ctypes.CDLL(None, use_errno=True)
            _check(libc.prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0), "prctl(PR_SET_NO_NEW_PRIVS)")
            res = _syscall()(ctypes.c_long(SYS_RESTRICT_SELF), ctypes.c_int(self.fd), ctypes.c_uint32(0))
            _check(int(res), "landlock_restrict_self")
        finally:
            self.close()

    def close(self) -> None:
        if self.fd >= 0:
            os.close(self.fd)
            self.fd = -1
