"""The fallback where the kernel has no Landlock: each helper runs inside a
bubblewrap namespace that holds only its policy's paths.

The namespace's file system is built from read-only binds of the policy's
folders and files (symbolic links such as ``/lib -> usr/lib`` are recreated
as links), a minimal ``/dev``, no ``/proc``; the network, IPC, PID and user
namespaces are new (``--unshare-all``: only ``lo``); capabilities are
dropped and bubblewrap sets ``no_new_privs``. A link inside a root that
points out of it leads to a path that does not exist in the namespace.

Costlier than Landlock (a namespace per helper: measured in
``bench/spawn_cost.py``), so used only where Landlock is missing.
"""

from __future__ import annotations

import functools
import os
import shutil
import subprocess
from collections.abc import Sequence

from tooldeck.confine.policy import DEVICES, Policy


@functools.cache
def bwrap_path() -> str | None:
    """bubblewrap, if it is installed and can build a namespace here (it
    cannot where user namespaces are off for an unprivileged user)."""
    exe = shutil.which("bwrap")
    if exe is None:
        return None
    try:
        probe = subprocess.run(
            [exe, "--unshare-all", "--die-with-parent", "--ro-bind", "/", "/", "--", "true"],
            stdin=subprocess.DEVNULL,
            capture_output=True,
            timeout=10,
            check=False,
        )
    except (OSError, subprocess.TimeoutExpired):
        return None
    return exe if probe.returncode == 0 else None


def _bind(path: str, flag: str) -> list[str]:
    if os.path.islink(path):
        return ["--symlink", os.readlink(path), path]
    return [flag, path, path]


def wrap(exe: str, policy: Policy, argv: Sequence[str], cwd: str | None) -> list[str]:
    """``argv`` run by bubblewrap in a namespace holding ``policy``'s paths."""
    out = [exe, "--unshare-all", "--die-with-parent", "--new-session", "--cap-drop", "ALL", "--dev", "/dev"]
    ro = sorted({*policy.execute, *policy.read}, key=lambda p: (p.count("/"), p))
    for path in ro:
        out += _bind(path, "--ro-bind")
    for path in sorted(policy.write, key=lambda p: (p.count("/"), p)):
        out += _bind(path, "--bind")
    for dev in DEVICES:
        out += ["--dev-bind-try", dev, dev]
    if cwd is not None:
        out += ["--chdir", cwd]
    # every bound folder is a mount point in the namespace: git would stop
    # looking for its repository at the first one (a root inside a checkout)
    out += ["--setenv", "GIT_DISCOVERY_ACROSS_FILESYSTEM", "1"]
    return [*out, "--", *argv]
