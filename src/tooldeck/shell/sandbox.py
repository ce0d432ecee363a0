"""The bubblewrap command line for one process: what it sees, writes and reaches.

Layout inside the sandbox (later mounts shadow earlier ones):

* system directories (``/usr``, ``/etc``...) read-only, a fresh ``/dev``, ``/proc``;
* a private ``/tmp`` (tmpfs) that is also ``HOME``;
* every read root read-only, every write root read-write, and the ``.git``
  of a write root (with a worktree's git directory) read-only again, so hooks
  and config cannot be planted;
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

_probe_cache: dict[str, str | None] = {}


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
    if exe not in _probe_cache:
        try:
            proc = subprocess.run(
                [exe, "--unshare-all", "--die-with-parent", "--ro-bind", "/", "/", "--proc", "/proc", "--", "true"],
                capture_output=True,
                timeout=10,
            )
            err = None
            if proc.returncode != 0:
                err = proc.stderr.decode(errors="replace").strip() or f"exit {proc.returncode}"
        except (OSError, subprocess.TimeoutExpired) as exc:
            err = str(exc)
        _probe_cache[exe] = err
    err = _probe_cache[exe]
    if err is not None:
        raise SandboxUnavailable(f"bubblewrap cannot create a sandbox here ({err}); refusing to run unsandboxed")
    return exe


def _git_dirs(write_root: str) -> list[str]:
    """The ``.git`` of a write root; for a worktree (``.git`` is a file) also its git dirs."""
    dot = os.path.join(write_root, ".git")
    out = [dot] if os.path.lexists(dot) else []
    if os.path.isfile(dot):
        try:
            with open(dot, encoding="utf-8") as fh:  # the root's own git pointer, not a model path
                line = fh.readline().strip()
        except OSError:
            line = ""
        if line.startswith("gitdir:"):
            gitdir = os.path.realpath(os.path.join(write_root, line[7:].strip()))
            out.append(gitdir)
            common = os.path.realpath(os.path.join(gitdir, "..", ".."))
            if os.path.basename(os.path.dirname(gitdir)) == "worktrees" and os.path.isdir(common):
                out.append(common)
    return out


def bwrap_argv(exe: str, plan: SandboxPlan, command: list[str]) -> list[str]:
    argv = [exe, "--die-with-parent", "--new-session", "--unshare-user", "--unshare-pid", "--unshare-ipc"]
    argv += ["--unshare-uts", "--unshare-cgroup-try", "--hostname", "sandbox"]
    if not plan.network:
        argv.append("--unshare-net")
    for p in plan.system_paths:
        if os.path.islink(p):  # merged /usr: /bin -> usr/bin is a link, not a second mount
            argv += ["--symlink", os.readlink(p), p]
        else:
            argv += ["--ro-bind-try", p, p]
    argv += ["--dev", "/dev", "--proc", "/proc", "--tmpfs", "/tmp", "--tmpfs", "/var/tmp", "--tmpfs", "/run"]
    git_dirs: list[str] = []
    for p in plan.read:
        argv += ["--ro-bind", p, p]
        git_dirs += _git_dirs(p)
    for p in plan.extra_ro:
        argv += ["--ro-bind", p, p]
    for p in plan.write:
        argv += ["--bind", p, p]
        git_dirs += _git_dirs(p)
    for g in dict.fromkeys(git_dirs):  # after the write binds: read-only again (a worktree's too)
        argv += ["--ro-bind", g, g]
    for h in plan.hide:
        argv += ["--tmpfs", h]
        for p in (*plan.read, *plan.write):  # a root inside the hidden directory stays visible
            if p != h and p.startswith(h.rstrip("/") + "/"):
                argv += ["--bind" if p in plan.write else "--ro-bind", p, p]
    argv += ["--chdir", plan.cwd, "--clearenv"]
    for key, value in plan.env.items():
        argv += ["--setenv", key, value]
    return [*argv, "--", *command]
