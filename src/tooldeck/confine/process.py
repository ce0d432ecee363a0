"""Confining a thread, or a whole single-threaded process, to a policy.

:func:`apply` is the sequence every confined thread runs: capabilities
dropped, ``no_new_privs``, the Landlock ruleset enforced. A spawner thread
runs it before it starts helpers (:mod:`tooldeck.confine.spawner`); a
Python worker (codemap parsing, the token worker) runs it through
:func:`confine_self` as the first thing it does, before it starts any
thread, so the whole process is held (a Landlock domain covers the
calling thread and what it starts afterwards, never threads that already
run).

Imports only the standard library and its siblings: the token worker
calls it on a start-up path that must stay cheap.
"""

from __future__ import annotations

import os

from tooldeck.confine import landlock, privileges
from tooldeck.confine.policy import DEVICES, Policy

ENV = "TOOLDECK_HELPER_SANDBOX"  # auto (default) | launcher | landlock | bwrap | none


def apply(policy: Policy, abi: int, top_cap: int) -> None:
    """Confine the calling thread to ``policy``. Raises OSError when any
    step fails (the thread is then not to be used for helpers)."""
    rules = landlock.Ruleset(abi)
    try:
        for path in policy.read:
            rules.allow(path, landlock.READ)
        for path in policy.listing:
            rules.allow(path, landlock.READ_DIR)
        for path in policy.execute:
            rules.allow(path, landlock.READ | landlock.EXECUTE)
        rw = landlock.READ | landlock.WRITE_FILE | landlock.TRUNCATE
        for path in policy.write:
            rules.allow(path, rw | landlock.MAKE_REG | landlock.MAKE_DIR | landlock.REMOVE_FILE | landlock.REMOVE_DIR)
        for dev in DEVICES:
            rules.allow(dev, rw)
        privileges.drop_all(top_cap)
    except BaseException:
        rules.close()
        raise
    rules.restrict_self()


def landlock_wanted() -> int:
    """The Landlock ABI to confine with, 0 when it is missing or the person
    chose another way (``TOOLDECK_HELPER_SANDBOX``)."""
    wanted = os.environ.get(ENV, "auto").strip().lower() or "auto"
    if wanted not in ("auto", "launcher", "landlock"):
        return 0
    return landlock.abi_version()


def confine_self(policy: Policy) -> bool:
    """Confine this process (single-threaded at this point) to ``policy``.
    False when Landlock is not to be used here (the worker then runs as it
    did); raises OSError when confining failed, so the worker stops rather
    than run unconfined."""
    abi = landlock_wanted()
    if abi < 1:
        return False
    apply(policy, abi, privileges.last_cap())
    return True
