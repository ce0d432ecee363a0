"""Dropping every capability from the calling thread (stdlib only).

Capabilities, like Landlock domains and ``no_new_privs``, belong to a
thread: ``capset`` and ``PR_CAPBSET_DROP`` change the caller only. A
spawner thread that drops them starts helpers with none, even when the
server runs as root: with an empty bounding set and inheritable set, an
``execve`` by uid 0 computes an empty permitted set (capabilities(7),
"Transformation of capabilities during execve").

For a non-root server there is nothing to drop (its sets are empty); the
calls that need ``CAP_SETPCAP`` then fail with EPERM and are ignored.
"""

from __future__ import annotations

import ctypes
import os

PR_CAPBSET_READ = 23
PR_CAPBSET_DROP = 24
PR_CAP_AMBIENT = 47
PR_CAP_AMBIENT_CLEAR_ALL = 4
_CAPABILITY_VERSION_3 = 0x20080522


class _Header(ctypes.Structure):
    _fields_ = [("version", ctypes.c_uint32), ("pid", ctypes.c_int)]


class _Data(ctypes.Structure):
    _fields_ = [("effective", ctypes.c_uint32), ("permitted", ctypes.c_uint32), ("inheritable", ctypes.c_uint32)]


def last_cap() -> int:
    """The highest capability number this kernel knows (read before any
    Landlock ruleset hides /proc)."""
    try:
        with open("/proc/sys/kernel/cap_last_cap", encoding="ascii") as fh:
            return int(fh.read().strip())
    except (OSError, ValueError):
        return 63


def drop_all(top: int) -> None:
    """Empty the ambient, bounding, effective, permitted and inheritable sets
    of the calling thread. ``top`` is :func:`last_cap` (read beforehand).
    Raises OSError only when the thread still holds a capability after."""
    libc = ctypes.CDLL(None, use_errno=True)
    libc.prctl(PR_CAP_AMBIENT, PR_CAP_AMBIENT_CLEAR_ALL, 0, 0, 0)
    for cap in range(top + 1):
        libc.prctl(PR_CAPBSET_DROP, cap, 0, 0, 0)  # EPERM without CAP_SETPCAP: nothing to drop then
    header = _Header(_CAPABILITY_VERSION_3, 0)
    data = (_Data * 2)()
    if libc.capset(ctypes.byref(header), data) != 0:
        err = ctypes.get_errno()
        raise OSError(err, "capset: cannot drop capabilities")
    check = (_Data * 2)()
    if libc.capget(ctypes.byref(_Header(_CAPABILITY_VERSION_3, 0)), check) != 0:
        raise OSError(ctypes.get_errno(), "capget failed")
    if any(d.effective or d.permitted or d.inheritable for d in check):
        raise OSError(1, "capabilities remain after capset")
    # uid 0 regains its bounding set at execve: it must be empty too
    if os.geteuid() == 0 and any(libc.prctl(PR_CAPBSET_READ, cap, 0, 0, 0) == 1 for cap in range(top + 1)):
        raise OSError(1, "the capability bounding set could not be emptied")
