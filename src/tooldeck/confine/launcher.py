"""A persistent launcher per policy: one bubblewrap namespace, set up once,
in which every ripgrep of that root is started.

Why: Landlock checks every file a helper opens (its walk up to ``/``, ~1 µs
a file here), so a search over 16,000 files paid ~+15 ms of CPU under it,
and a fresh bubblewrap namespace per process costs ~20 ms. A namespace costs
nothing per file: a path that is not bound does not exist there. Built once
per set of roots and kept, it costs only the hop to the launcher per helper.

The namespace holds the policy's paths read-only at their real paths (the
root, the program, the system folders), a minimal ``/dev``, no ``/proc``;
new user, PID, network, IPC, UTS and cgroup namespaces; no capability
(``--cap-drop ALL``), no nested user namespace (``--disable-userns``),
``no_new_privs``, a new session (no controlling terminal). A folder of a
root swapped for a link out of it leads to a path that does not exist there.

No seccomp filter (the shell sandbox's one): any filter puts every system
call of ripgrep on the kernel's slow entry path, measured at ~+9 ms of CPU
on a 16,000-file search (``bench/search_bench.py``), as much as Landlock
cost; what it would add here is already held by the namespaces, the empty
capability sets and the disabled user namespaces (no mount, no unshare, no
setns can succeed), and the launcher is not traceable by its helpers
(non-dumpable, see :mod:`tooldeck.confine.launcher_main`). The Landlock way
has none either.

Who can talk to it: nobody but the server. Its only channel is an anonymous
``socketpair`` (no name in the file system, no abstract address); the
server's end is close-on-exec, so no other process the server starts
inherits it, and the launcher's end is close-on-exec inside the namespace,
so the helpers it starts have none. It dies with the server: the server's
end closes when the server exits (however it exits), the launcher reads
the end of the stream, each helper whose reply pair closed is killed, and
the kernel kills what is left in its PID namespace when it returns (the
launcher is its PID 1: ``--as-pid-1``). If the launcher dies (killed,
crashed), the calls in flight end with ``-9`` and the next call starts a new
one.

Callers get a :class:`~tooldeck.confine.launched.LaunchedProcess`, which
behaves as the part of :class:`subprocess.Popen` they use: ``communicate``
(with ``input`` and ``timeout``), ``wait``, ``poll``, ``kill``,
``returncode``, ``stdout``; its replies come on a pair made for the call.
"""

from __future__ import annotations

import array
import json
import logging
import os
import signal
import socket
import subprocess
import sys
import threading
from collections import OrderedDict
from collections.abc import Sequence
from typing import Any

from tooldeck.confine import launcher_main
from tooldeck.confine.launched import LaunchedProcess, child_streams, host_pid
from tooldeck.confine.policy import DEVICES, SYSTEM_DIRS, Policy

log = logging.getLogger("tooldeck.confine")

MAX_LAUNCHERS = 8  # distinct policies kept (one per root searched); older ones stop
START_TIMEOUT = 20.0  # seconds for a launcher to say it is ready
MAX_MESSAGE = 32 * 1024  # a longer request travels in a memfd
ENV_KEEP = ("PATH", "LANG", "LC_ALL", "LC_CTYPE", "TZ")  # what a helper sees of the server's environment


class LauncherError(OSError):
    """The launcher could not be started or stopped answering."""


class LauncherUnavailable(LauncherError):
    """A launcher cannot be started here at all."""


class LauncherGone(LauncherError):
    """The launcher had stopped before it took the request (another may)."""


def _interpreter() -> tuple[str, tuple[str, ...]]:
    """A Python to run the launcher with, and what must be bound for it
    beyond the system folders (nothing when it lives there)."""
    real = os.path.realpath(sys.executable)
    if any(real.startswith(d + "/") for d in SYSTEM_DIRS):
        return real, ()
    for candidate in ("/usr/bin/python3", "/usr/local/bin/python3"):
        if os.access(candidate, os.X_OK):
            return os.path.realpath(candidate), ()
    return real, (real, os.path.realpath(sys.base_prefix))


def _source() -> str:
    with open(launcher_main.__file__, encoding="utf-8") as fh:
        return fh.read()


def _binds(policy: Policy, extra: Sequence[str]) -> list[str]:
    args: list[str] = []
    ro = sorted({*policy.execute, *policy.read, *extra}, key=lambda p: (p.count("/"), p))
    for path in ro:
        if os.path.islink(path):
            args += ["--symlink", os.readlink(path), path]
        else:
            args += ["--ro-bind", path, path]
    for dev in DEVICES:
        args += ["--dev-bind-try", dev, dev]
    return args


class Launcher:
    """One launcher process for one policy."""

    def __init__(self, bwrap: str, policy: Policy) -> None:
        self.policy = policy
        self._lock = threading.Lock()
        self._dead = False
        self._pidfd = -1
        ours, theirs = socket.socketpair(socket.AF_UNIX, socket.SOCK_SEQPACKET)  # both close-on-exec
        self._sock = ours
        try:
            self.proc = self._spawn(bwrap, theirs)
        finally:
            theirs.close()
        try:
            self._pidfd = self._read_ready()
            self.launcher_pid = host_pid(self._pidfd)  # the launcher as the server sees it
        except BaseException:
            self.stop()
            raise
        self.helper_cpu = 0.0  # CPU seconds of its helpers that ended (as their parent saw it)

    def _spawn(self, bwrap: str, theirs: socket.socket) -> subprocess.Popen[bytes]:
        python, extra = _interpreter()
        argv = [bwrap, "--unshare-user", "--disable-userns", "--cap-drop", "ALL", "--unshare-all", "--as-pid-1"]
        argv += ["--new-session", "--dev", "/dev", *_binds(self.policy, extra), "--chdir", "/", "--clearenv"]
        # every bound folder is a mount point in the namespace: git would stop at the first one
        argv += ["--setenv", "GIT_DISCOVERY_ACROSS_FILESYSTEM", "1", "--setenv", "PATH", "/usr/bin:/bin"]
        argv += ["--", python, "-I", "-S", "-c", _source(), str(theirs.fileno())]
        # stdout is never the server's (it may be the MCP channel); stderr is its log
        return subprocess.Popen(argv, stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, pass_fds=(theirs.fileno(),))

    def _read_ready(self) -> int:
        """The launcher's pidfd, once it said it is ready."""
        self._sock.settimeout(START_TIMEOUT)
        try:
            data, anc, _flags, _addr = self._sock.recvmsg(4096, socket.CMSG_SPACE(4), socket.MSG_CMSG_CLOEXEC)
        except TimeoutError as exc:
            raise LauncherUnavailable(f"the helper launcher did not start within {START_TIMEOUT:g}s") from exc
        finally:
            self._sock.settimeout(None)
        if not data:
            self.proc.wait()
            raise LauncherUnavailable(f"the helper launcher could not start (bwrap exit {self.proc.returncode})")
        fds = _fds(anc)
        if len(fds) != 1 or "ready" not in json.loads(data):
            _close_all(fds)
            raise LauncherUnavailable("the helper launcher did not say it was ready")
        return fds[0]

    @property
    def alive(self) -> bool:
        return not self._dead and self.proc.poll() is None

    def popen(self, argv: Sequence[str], **kwargs: Any) -> LaunchedProcess:
        """Start ``argv`` in the namespace; see :class:`LaunchedProcess`. The
        request is sent and the helper handed back at once: a program that
        cannot be started is reported by its first ``communicate``/``wait``."""
        cwd, env = kwargs.pop("cwd", None), kwargs.pop("env", None)
        unknown = sorted(set(kwargs) - {"stdin", "stdout", "stderr"})
        if unknown:
            raise TypeError(f"the helper launcher does not take {', '.join(unknown)}")
        keep = env if env is not None else {k: v for k, v in os.environ.items() if k in ENV_KEEP}
        args = [os.fsdecode(a) for a in argv]
        request = {"argv": args, "cwd": os.fsdecode(cwd) if cwd else None, "env": dict(keep)}
        ours, theirs = child_streams(kwargs.get("stdin"), kwargs.get("stdout"), kwargs.get("stderr"))
        reply, their_reply = socket.socketpair(socket.AF_UNIX, socket.SOCK_SEQPACKET)
        try:
            self._send(request, (*theirs, their_reply.fileno()))
        except BaseException:
            _close_all(ours)
            reply.close()
            raise
        finally:
            _close_all(theirs)
            their_reply.close()
        return LaunchedProcess(args, reply, ours, self._account)

    def _account(self, cpu: float) -> None:
        with self._lock:
            self.helper_cpu += cpu

    def _send(self, request: dict[str, object], fds: Sequence[int]) -> None:
        data = json.dumps(request).encode()
        extra: list[int] = []
        if len(data) > MAX_MESSAGE:
            memfd = os.memfd_create("tooldeck-request", os.MFD_CLOEXEC)
            os.write(memfd, data)
            os.lseek(memfd, 0, os.SEEK_SET)
            extra, data = [memfd], b"@"
        try:
            with self._lock:
                if self._dead:
                    raise LauncherGone("the helper launcher has stopped")
                self._sock.sendmsg([data], [(socket.SOL_SOCKET, socket.SCM_RIGHTS, array.array("i", [*fds, *extra]))])
        except OSError as exc:
            self._dead = True
            if isinstance(exc, LauncherGone):
                raise
            raise LauncherGone(f"the helper launcher has stopped ({exc})") from exc
        finally:
            _close_all(extra)

    def cpu_seconds(self) -> float:
        """CPU time spent so far by the launcher itself and the helpers it
        reaped (benchmarks: these are not the server's children)."""
        try:
            with open(f"/proc/{self.launcher_pid}/schedstat", encoding="ascii") as fh:
                own = int(fh.read().split()[0]) / 1e9
        except (OSError, ValueError, IndexError):
            own = 0.0
        return own + self.helper_cpu

    def retire(self) -> None:
        """No new request: the launcher ends once its helpers in flight have."""
        with self._lock:
            self._dead = True
            try:
                self._sock.shutdown(socket.SHUT_WR)
            except OSError:
                pass
        threading.Thread(target=self._reap, name="tooldeck-launcher-retired", daemon=True).start()

    def _reap(self) -> None:
        self.proc.wait()
        self._sock.close()
        if self._pidfd >= 0:
            os.close(self._pidfd)
            self._pidfd = -1

    def stop(self) -> None:
        """Close the channel and end the launcher now: its helpers end with it."""
        with self._lock:
            self._dead = True
        try:
            self._sock.shutdown(socket.SHUT_RDWR)
        except OSError:
            pass
        if self._pidfd >= 0:  # PID 1 of its namespace: the kernel kills the rest
            try:
                signal.pidfd_send_signal(self._pidfd, signal.SIGKILL)
            except OSError:
                pass
        self.proc.wait()
        self._sock.close()
        if self._pidfd >= 0:
            os.close(self._pidfd)
            self._pidfd = -1


def _fds(ancillary: list[tuple[int, int, bytes]]) -> list[int]:
    fds = array.array("i")
    for level, kind, raw in ancillary:
        if level == socket.SOL_SOCKET and kind == socket.SCM_RIGHTS:
            fds.frombytes(raw[: len(raw) - len(raw) % fds.itemsize])
    return list(fds)


def _close_all(fds: Sequence[int | None]) -> None:
    for fd in fds:
        if fd is not None:
            try:
                os.close(fd)
            except OSError:
                pass


class Launchers:
    """The launcher of each policy in use, at most :data:`MAX_LAUNCHERS`;
    a dead one is replaced at the next call."""

    def __init__(self, bwrap: str) -> None:
        self.bwrap = bwrap
        self._lock = threading.Lock()
        self._by_policy: OrderedDict[Policy, Launcher] = OrderedDict()

    def get(self, policy: Policy) -> Launcher:
        with self._lock:
            ln = self._by_policy.get(policy)
            if ln is not None and ln.alive:
                self._by_policy.move_to_end(policy)
                return ln
            if ln is not None:
                ln.stop()
            ln = self._by_policy[policy] = Launcher(self.bwrap, policy)
            while len(self._by_policy) > MAX_LAUNCHERS:
                _, old = self._by_policy.popitem(last=False)
                old.retire()
            return ln

    def popen(self, policy: Policy, argv: Sequence[str], **kwargs: Any) -> LaunchedProcess:
        """Start ``argv`` confined to ``policy``; once more with a new launcher
        if the one in use had stopped before it took the request."""
        for attempt in (0, 1):
            ln = self.get(policy)
            try:
                return ln.popen(argv, **kwargs)
            except LauncherGone:
                if attempt:
                    raise
        raise AssertionError("unreachable")

    def cpu_seconds(self) -> float:
        """CPU time of the launchers kept and their helpers (see :meth:`Launcher.cpu_seconds`)."""
        with self._lock:
            launchers = list(self._by_policy.values())
        return sum(ln.cpu_seconds() for ln in launchers)

    def stop_all(self) -> None:
        with self._lock:
            launchers = list(self._by_policy.values())
            self._by_policy.clear()
        for ln in launchers:
            ln.stop()
