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
the end of the stream and returns, and the kernel kills what is left in its
PID namespace (the launcher is its PID 1: ``--as-pid-1``), helpers in
flight included. If the launcher dies (killed, crashed), the calls in flight
see their helper end and the next call starts a new one.

Callers get a :class:`LaunchedProcess`, which behaves as the part of
:class:`subprocess.Popen` they use: ``communicate`` (with ``input`` and
``timeout``), ``wait``, ``poll``, ``kill``, ``returncode``, ``stdout``.
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
from concurrent.futures import Future
from typing import Any

from tooldeck.confine import launcher_main
from tooldeck.confine.launched import LaunchedProcess, child_streams, host_pid
from tooldeck.confine.policy import DEVICES, SYSTEM_DIRS, Policy

log = logging.getLogger("tooldeck.confine")

MAX_LAUNCHERS = 8  # distinct policies kept (one per root searched); older ones stop
START_TIMEOUT = 20.0  # seconds for a launcher to say it is ready
REPLY_TIMEOUT = 20.0  # seconds for a started helper to be reported
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
    """One launcher process for one policy, and the helpers it started."""

    def __init__(self, bwrap: str, policy: Policy) -> None:
        self.policy = policy
        self._ids = 0
        self._lock = threading.Lock()
        # id -> (the caller's future, argv, the server's ends of the child's pipes)
        self._pending: dict[int, tuple[Future[LaunchedProcess], list[str], tuple[int | None, ...]]] = {}
        self._running: dict[int, LaunchedProcess] = {}
        self._dead = False
        self._retiring = False
        self.helper_cpu = 0.0  # CPU seconds of the helpers it started that ended (as their parent saw it)
        ours, theirs = socket.socketpair(socket.AF_UNIX, socket.SOCK_SEQPACKET)  # both close-on-exec
        self._sock = ours
        try:
            self.proc = self._spawn(bwrap, theirs)
        finally:
            theirs.close()
        self._pidfd = -1
        try:
            self._pidfd = self._read_ready()
            self.launcher_pid = host_pid(self._pidfd)  # the launcher as the server sees it
        except BaseException:
            self.stop()
            raise
        self._reader = threading.Thread(target=self._read, name=f"tooldeck-launcher-{policy.label}", daemon=True)
        self._reader.start()

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
        return not self._dead

    # requests ------------------------------------------------------------------------------
    def popen(self, argv: Sequence[str], **kwargs: Any) -> LaunchedProcess:
        """Start ``argv`` in the namespace; see :class:`LaunchedProcess`."""
        cwd, env = kwargs.pop("cwd", None), kwargs.pop("env", None)
        unknown = sorted(set(kwargs) - {"stdin", "stdout", "stderr"})
        if unknown:
            raise TypeError(f"the helper launcher does not take {', '.join(unknown)}")
        ours, theirs = child_streams(kwargs.get("stdin"), kwargs.get("stdout"), kwargs.get("stderr"))
        keep = env if env is not None else {k: v for k, v in os.environ.items() if k in ENV_KEEP}
        args = [os.fsdecode(a) for a in argv]
        request: dict[str, object] = {"argv": args, "cwd": os.fsdecode(cwd) if cwd else None, "env": dict(keep)}
        fut: Future[LaunchedProcess] = Future()
        try:
            with self._lock:
                if self._dead:
                    raise LauncherGone("the helper launcher has stopped")
                self._ids += 1
                ident = request["id"] = self._ids
                self._pending[ident] = (fut, args, ours)
            self._send(request, theirs)
        except BaseException:
            _close_all(ours)
            raise
        finally:
            _close_all(theirs)
        try:
            return fut.result(REPLY_TIMEOUT)
        except TimeoutError as exc:
            self.stop()
            raise LauncherError("the helper launcher did not answer") from exc

    def _send(self, request: dict[str, object], fds: Sequence[int]) -> None:
        data = json.dumps(request).encode()
        extra: list[int] = []
        if len(data) > MAX_MESSAGE:
            memfd = os.memfd_create("tooldeck-request", os.MFD_CLOEXEC)
            os.write(memfd, data)
            os.lseek(memfd, 0, os.SEEK_SET)
            extra, data = [memfd], b"@"
        try:
            self._sock.sendmsg([data], [(socket.SOL_SOCKET, socket.SCM_RIGHTS, array.array("i", [*fds, *extra]))])
        except OSError as exc:
            with self._lock:
                self._pending.pop(int(request["id"]), None)  # type: ignore[call-overload]
            self._die()
            raise LauncherGone(f"the helper launcher has stopped ({exc})") from exc
        finally:
            _close_all(extra)

    # replies -------------------------------------------------------------------------------
    def _read(self) -> None:
        try:
            while True:
                data, anc, _flags, _addr = self._sock.recvmsg(65536, socket.CMSG_SPACE(4), socket.MSG_CMSG_CLOEXEC)
                if not data:
                    return
                self._dispatch(json.loads(data), _fds(anc))
        except (OSError, ValueError) as exc:
            if not self._dead:
                log.warning("tooldeck: the helper launcher's channel failed: %s", exc)
        finally:
            self._die()

    def _dispatch(self, msg: dict[str, Any], fds: list[int]) -> None:
        """One reply (read in order: a helper's start always comes before its exit)."""
        ident = msg.get("id")
        if "exit" in msg:
            with self._lock:
                proc = self._running.pop(ident, None)  # type: ignore[arg-type]
            if proc is not None:
                with self._lock:
                    self.helper_cpu += float(msg.get("cpu", 0.0))
                proc.set_returncode(int(msg["exit"]))
            if self._retiring and self.idle:
                self.stop()
            return
        with self._lock:
            entry = self._pending.pop(ident, None)  # type: ignore[arg-type]
        if entry is None:
            _close_all(fds)
            return
        fut, args, ours = entry
        if "pid" in msg and len(fds) == 1:
            proc = LaunchedProcess(args, fds[0], int(msg["pid"]), ours)
            with self._lock:
                self._running[ident] = proc  # type: ignore[index]
            fut.set_result(proc)
            return
        _close_all(fds)
        _close_all(ours)
        fut.set_exception(OSError(int(msg.get("errno", 5)), str(msg.get("error", "cannot start"))))

    def _die(self) -> None:
        with self._lock:
            self._dead = True
            pending, self._pending = self._pending, {}
            running, self._running = self._running, {}
        for fut, _args, ours in pending.values():
            _close_all(ours)
            if not fut.done():
                fut.set_exception(LauncherError("the helper launcher has stopped"))
        for proc in running.values():
            proc.set_returncode(-9)  # the kernel killed what was left in the namespace

    def cpu_seconds(self) -> float:
        """CPU time spent so far by the launcher itself and the helpers it
        reaped (benchmarks: these are not the server's children)."""
        try:
            with open(f"/proc/{self.launcher_pid}/schedstat", encoding="ascii") as fh:
                own = int(fh.read().split()[0]) / 1e9
        except (OSError, ValueError, IndexError):
            own = 0.0
        return own + self.helper_cpu

    @property
    def idle(self) -> bool:
        with self._lock:
            return not self._pending and not self._running

    def retire(self) -> None:
        """Stop once the helpers in flight have ended (no new one is taken)."""
        with self._lock:
            self._retiring = self._dead = True
        if self.idle:
            self.stop()

    def stop(self) -> None:
        """Close the channel: the launcher and its helpers end."""
        with self._lock:
            self._dead = True
        try:
            self._sock.shutdown(socket.SHUT_RDWR)
        except OSError:
            pass
        try:
            self.proc.wait(5)
        except subprocess.TimeoutExpired:  # not reading its channel: killed, and its namespace with it
            if self._pidfd >= 0:
                signal.pidfd_send_signal(self._pidfd, signal.SIGKILL)
            self.proc.kill()
            self.proc.wait()
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
