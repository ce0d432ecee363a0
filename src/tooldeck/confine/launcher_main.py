"""The launcher's own program: it runs inside its bubblewrap namespace as
``python -I -S -c <this file's source> FD``, so it imports the standard
library only and nothing of tooldeck (the namespace holds no tooldeck).

``FD`` is its end of a ``SOCK_SEQPACKET`` pair whose other end only the
server holds (:mod:`tooldeck.confine.launcher`). Each message from the
server is one request, a JSON object with four descriptors attached: the
child's stdin, stdout and stderr, and the launcher's end of a reply pair
made for this call alone (a fifth holds the JSON itself when it is too long
for one message)::

    {"argv": [...], "cwd": "/root/path", "env": {...}}

On the call's reply pair the launcher answers ``{"pid": N}`` with a pidfd
of the child attached (the server signals through it, never by a number
that could be reused) or ``{"errno": E, "error": "..."}``, and when the
child ends ``{"exit": returncode, "cpu": seconds}``; then it closes the
pair. Replies go straight to the thread that waits for them: no hop through
a reader thread of the server (each hop is a wake-up, which costs
milliseconds on a loaded machine).

Each child leads a process group of its own: when it ends (or is killed)
its group is killed too, so a helper's own children (a preprocessor, a
decompressor, anything it left in the background) never outlive it. If the
server closes a call's pair before the child ended (the caller gave up, or
the server is gone), the child and its group are killed. An empty read on the
server's channel means no new request will come: the launcher returns once
its children have ended, and, as PID 1 of its namespace (``bwrap
--as-pid-1``), takes whatever is left there with it. Being PID 1 also means
no process of the namespace can signal it (the kernel drops signals to a
namespace's init that it has no handler for; SIGINT's is set to ignore).

The launcher joins a fresh, empty session keyring at start (``keyctl``):
otherwise it and its helpers would hold the server's, and with it every key
the person's session keeps there (a helper runs with the same uid). Where
``keyctl`` is refused (a container's seccomp filter), helpers are refused it
too.

Made non-dumpable first: a helper it started (same uid, no capability) can
then neither trace it (``ptrace``) nor read its memory or take its
descriptors (``process_vm_readv``, ``pidfd_getfd``): all need
``CAP_SYS_PTRACE`` over a non-dumpable process.
"""

from __future__ import annotations

import array
import ctypes
import json
import os
import selectors
import signal
import socket
import subprocess
import sys

MAX_FDS = 5
PR_SET_DUMPABLE = 4
KEYCTL_JOIN_SESSION_KEYRING = 1
SYS_KEYCTL = {"x86_64": 250, "aarch64": 219, "riscv64": 219, "i686": 288, "armv7l": 311, "ppc64le": 312, "s390x": 280}


def _send(sock: socket.socket, message: dict[str, object], fds: tuple[int, ...] = ()) -> None:
    data = json.dumps(message).encode()
    try:
        if fds:
            sock.sendmsg([data], [(socket.SOL_SOCKET, socket.SCM_RIGHTS, array.array("i", fds))])
        else:
            sock.send(data)
    except OSError:
        pass  # the caller is gone: nothing to tell


def _received_fds(ancillary: list[tuple[int, int, bytes]]) -> list[int]:
    fds = array.array("i")
    for level, kind, data in ancillary:
        if level == socket.SOL_SOCKET and kind == socket.SCM_RIGHTS:
            fds.frombytes(data[: len(data) - len(data) % fds.itemsize])
    return list(fds)


def _request(data: bytes, fds: list[int]) -> dict[str, object]:
    if data == b"@" and len(fds) == 4:  # the request was too long for a message: read it from the memfd
        with os.fdopen(fds.pop(), "rb") as fh:
            data = fh.read()
    return json.loads(data)


def _start(req: dict[str, object], fds: list[int]) -> subprocess.Popen[bytes]:
    env = req.get("env")
    return subprocess.Popen(
        req["argv"],  # type: ignore[arg-type]
        stdin=fds[0],
        stdout=fds[1],
        stderr=fds[2],
        cwd=req.get("cwd") or "/",  # type: ignore[arg-type]
        env=env if isinstance(env, dict) else {},
        close_fds=True,
        process_group=0,  # a group of its own: its children are killed with it (not a session: see launcher.py)
    )


def _kill_group(pgid: int) -> None:
    """Kill what is left of the process group a child led. Called while the
    leader is not yet reaped, so the group's number cannot be another's."""
    try:
        os.killpg(pgid, signal.SIGKILL)
    except OSError:
        pass  # nobody left in it


class Launcher:
    """The loop: requests from the server, children's ends, callers gone."""

    def __init__(self, ctrl: socket.socket) -> None:
        self.ctrl = ctrl
        self.sel = selectors.DefaultSelector()
        self.sel.register(ctrl, selectors.EVENT_READ, ("server", None))
        self.children: dict[int, tuple[socket.socket, int, subprocess.Popen[bytes]]] = {}
        self.open = True

    def serve_one(self) -> None:
        """Read and start one request (or learn that the server closed its end)."""
        data, ancillary, _flags, _addr = self.ctrl.recvmsg(
            65536, socket.CMSG_SPACE(MAX_FDS * 4), socket.MSG_CMSG_CLOEXEC
        )
        fds = _received_fds(ancillary)
        if not data and not fds:
            self.open = False
            self.sel.unregister(self.ctrl)
            return
        if len(fds) < 4:
            for fd in fds:
                os.close(fd)
            return
        reply = socket.socket(fileno=fds.pop(3))  # then the streams, and a memfd if the request is in one
        try:
            proc = _start(_request(data, fds), fds)
        except OSError as exc:
            _send(reply, {"errno": exc.errno or 5, "error": exc.strerror or str(exc)})
            reply.close()
            return
        except (ValueError, TypeError, KeyError) as exc:
            _send(reply, {"errno": 22, "error": f"bad request: {exc}"})
            reply.close()
            return
        finally:
            for fd in fds:
                os.close(fd)
        pidfd = os.pidfd_open(proc.pid)
        _send(reply, {"pid": proc.pid}, (pidfd,))
        self.sel.register(pidfd, selectors.EVENT_READ, ("child", proc.pid))  # readable when it ends
        self.sel.register(reply, selectors.EVENT_READ, ("caller", proc.pid))  # readable when the caller is gone
        self.children[proc.pid] = (reply, pidfd, proc)

    def caller_gone(self, pid: int) -> None:
        entry = self.children.get(pid)
        if entry is not None:
            self.sel.unregister(entry[0])
            signal.pidfd_send_signal(entry[1], signal.SIGKILL)
            _kill_group(pid)

    def reap(self) -> None:
        """Reap every child that ended: ours are reported (their process
        group killed first, while the ended leader still holds its number),
        orphans of theirs (re-parented to this process, PID 1 of the
        namespace) just reaped."""
        while True:
            try:
                ended = os.waitid(os.P_ALL, 0, os.WEXITED | os.WNOHANG | os.WNOWAIT)
            except ChildProcessError:
                return
            if ended is None or ended.si_pid == 0:
                return
            if ended.si_pid in self.children:
                _kill_group(ended.si_pid)
            pid, status, usage = os.wait4(ended.si_pid, 0)
            entry = self.children.pop(pid, None)
            if entry is None:
                continue
            reply, pidfd, proc = entry
            code = os.waitstatus_to_exitcode(status)
            proc.returncode = code
            _send(reply, {"exit": code, "cpu": usage.ru_utime + usage.ru_stime})
            self.sel.unregister(pidfd)
            if reply.fileno() in self.sel.get_map():
                self.sel.unregister(reply)
            os.close(pidfd)
            reply.close()

    def run(self) -> None:
        while self.open or self.children:
            for key, _events in self.sel.select(5.0):
                kind, pid = key.data
                if kind == "server":
                    self.serve_one()
                elif kind == "caller":
                    self.caller_gone(pid)
            self.reap()


def _fresh_keyring(libc: ctypes.CDLL) -> None:
    """Leave the server's session keyring for a new, empty one (inherited by the helpers)."""
    number = SYS_KEYCTL.get(os.uname().machine)
    if number is not None:
        libc.syscall(number, KEYCTL_JOIN_SESSION_KEYRING, None)  # refused: nothing to do (see above)


def main() -> None:
    libc = ctypes.CDLL(None, use_errno=True)
    libc.prctl(PR_SET_DUMPABLE, 0, 0, 0, 0)
    _fresh_keyring(libc)
    signal.signal(signal.SIGINT, signal.SIG_IGN)  # PID 1 of its namespace: no signal from inside reaches it
    ctrl = int(sys.argv[1])
    os.set_inheritable(ctrl, False)
    sock = socket.socket(fileno=ctrl)
    _send(sock, {"ready": os.getpid()}, (os.pidfd_open(os.getpid()),))  # the server may kill it through this
    Launcher(sock).run()


if __name__ == "__main__":
    main()
