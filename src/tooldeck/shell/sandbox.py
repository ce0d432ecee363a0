"""The bubblewrap command line for one process: what it sees, writes and reaches.

Privileges, whoever runs tooldeck (bwrap run by real root otherwise leaves the
command every capability in its user namespace, enough to remount a read-only
bind): ``--cap-drop ALL``, ``--disable-userns`` (no nested user namespace) and
``--seccomp FD`` (:mod:`tooldeck.shell.seccomp_filter`; the argv carries
:data:`~tooldeck.shell.seccomp_filter.FD_SLOT` until spawn time). bwrap always
sets no-new-privileges.

Layout inside the sandbox (later mounts shadow earlier ones):

* system directories (``/usr``, ``/etc``...) read-only, a fresh ``/dev``, ``/proc``;
* a private ``/tmp`` (tmpfs) that is also ``HOME``;
* every read root read-only, every write root read-write, and every git
  directory of a write root read-only again (``ro_binds``, planned by
  :mod:`tooldeck.shell.gitguard`), so hooks and config cannot be planted;
* the state directory covered by an empty tmpfs (audit log, database, secrets
  of other tools are invisible even when the state dir sits inside a root);
* new user, pid, ipc, uts (and cgroup) namespaces, a new session (no TIOCSTI
  into the caller's terminal), ``--die-with-parent``; no network namespace
  entries unless the runtime allows the network (``--unshare-net`` leaves only
  a loopback of its own).

Why refuse when bwrap is missing or broken: a runtime that asks for a sandbox
must never run without one silently; :func:`probe` says why it cannot.
"""

from __future__ import annotations

import os
import shutil
import subprocess
from dataclasses import dataclass, field

from tooldeck.shell.seccomp_filter import FD_SLOT, SeccompUnavailable, fill_slot, program

_probe_cache: dict[str, str | None] = {}
PRLIMIT = "/usr/bin/prlimit"  # util-linux: sets RLIMIT_NPROC inside the sandbox when no pids cgroup holds a run


class SandboxUnavailable(RuntimeError):
    """bubblewrap is missing or cannot create a sandbox on this machine."""


@dataclass(frozen=True, slots=True)
class SandboxPlan:
    read: tuple[str, ...]
    write: tuple[str, ...]
    network: bool
    cwd: str
    env: dict[str, str]
    hide: tuple[str, ...] = ()  # directories covered by an empty tmpfs (the state dir)
    system_paths: tuple[str, ...] = ()
    extra_ro: tuple[str, ...] = field(default=())  # files that must be visible (a script tool's file)
    ro_binds: tuple[tuple[str, str], ...] = ()  # (source, destination) bound read-only after the write binds
    # Without a pids cgroup the process count is held by RLIMIT_NPROC, set by ``prlimit``
    # inside the sandbox: there the count is of the sandbox's own user namespace only
    # (set outside, it would count every process of the user on the machine). Root is
    # exempt from RLIMIT_NPROC: for root only the cgroup holds.
    nproc: int | None = None
    nproc_tool: str = PRLIMIT


def bwrap_path() -> str | None:
    return shutil.which("bwrap") or (os.path.exists("/usr/bin/bwrap") and "/usr/bin/bwrap") or None


def probe() -> str:
    """The bwrap executable after a one-time trial run; raises SandboxUnavailable with the reason."""
    exe = bwrap_path()
    if exe is None:
        raise SandboxUnavailable(
            "bubblewrap (bwrap) is not installed; run scripts/setup.sh (it installs the Debian package "
            "bubblewrap), or use a runtime with sandbox mode=off declared in your user config"
        )
    try:
        seccomp = program()
    except SeccompUnavailable as exc:
        raise SandboxUnavailable(f"{exc}; refusing to run without it") from exc
    if exe not in _probe_cache:
        _probe_cache[exe] = _trial(exe, seccomp)
    err = _probe_cache[exe]
    if err is not None:
        raise SandboxUnavailable(f"bubblewrap cannot create a sandbox here ({err}); refusing to run unsandboxed")
    return exe


def _trial(exe: str, seccomp: bytes) -> str | None:
    """Run ``true`` with the privilege options every command gets; the error, or None."""
    argv, fd = fill_slot([exe, "--cap-drop", "ALL", "--unshare-user", "--disable-userns", "--seccomp", FD_SLOT,
                          "--unshare-all", "--die-with-parent", "--ro-bind", "/", "/", "--proc", "/proc",
                          "--", "true"], seccomp)  # fmt: skip
    try:
        proc = subprocess.run(argv, capture_output=True, timeout=10, pass_fds=(fd,) if fd is not None else ())
    except (OSError, subprocess.TimeoutExpired) as exc:
        return str(exc)
    finally:
        if fd is not None:
            os.close(fd)
    if proc.returncode != 0:
        return proc.stderr.decode(errors="replace").strip() or f"exit {proc.returncode}"
    return None


def bwrap_argv(exe: str, plan: SandboxPlan, command: list[str]) -> list[str]:
    # Privileges first: no capability (bwrap run by real root keeps them all in its user
    # namespace otherwise), no user namespace inside, the seccomp filter (its fd at spawn).
    argv = [exe, "--cap-drop", "ALL", "--disable-userns", "--seccomp", FD_SLOT]
    argv += ["--die-with-parent", "--new-session", "--unshare-user", "--unshare-pid", "--unshare-ipc"]
    argv += ["--unshare-uts", "--unshare-cgroup-try", "--hostname", "sandbox"]
    if not plan.network:
        argv.append("--unshare-net")
    for p in plan.system_paths:
        if os.path.islink(p):  # merged /usr: /bin -> usr/bin is a link, not a second mount
            argv += ["--symlink", os.readlink(p), p]
        else:
            argv += ["--ro-bind-try", p, p]
    argv += ["--dev", "/dev", "--proc", "/proc", "--tmpfs", "/tmp", "--tmpfs", "/var/tmp", "--tmpfs", "/run"]
    for p in plan.read:
        argv += ["--ro-bind", p, p]
    for p in plan.extra_ro:
        argv += ["--ro-bind", p, p]
    for p in plan.write:
        argv += ["--bind", p, p]
    for src, dest in plan.ro_binds:  # after the write binds: every git directory read-only again
        argv += ["--ro-bind", src, dest]
    for h in plan.hide:
        argv += ["--tmpfs", h]
        for p in (*plan.read, *plan.write):  # a root inside the hidden directory stays visible
            if p != h and p.startswith(h.rstrip("/") + "/"):
                argv += ["--bind" if p in plan.write else "--ro-bind", p, p]
    argv += ["--chdir", plan.cwd, "--clearenv"]
    for key, value in plan.env.items():
        argv += ["--setenv", key, value]
    if plan.nproc is not None:  # no pids cgroup: RLIMIT_NPROC, set inside the user namespace (see SandboxPlan)
        command = [plan.nproc_tool, f"--nproc={plan.nproc}:{plan.nproc}", "--", *command]
    return [*argv, "--", *command]
