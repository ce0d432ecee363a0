"""The launcher's own program: it runs inside its bubblewrap namespace as
``python -I -S -c <this file's source>``, so it imports the standard
library only and nothing of tooldeck (the namespace holds no tooldeck).

The descriptor named by its one argument is its end of a ``SOCK_SEQPACKET`` pair whose other end only
the server holds (:mod:`tooldeck.confine.launcher`). Each message from the
server is one request, a JSON object with three descriptors attached (the
child's stdin, stdout and stderr; a fourth holds the JSON itself when it is
too long for one message)::

    {"id": 7, "argv": [...], "cwd": "/root/path", "env": {...}}

The launcher starts it and answers ``{"id": 7, "pid": N}`` with a pidfd of
the child attached (the server signals the child through it, never by a
number that could be reused), or ``{"id": 7, "errno": E, "error": "..."}``;
when the child ends, ``{"id": 7, "exit": returncode, "cpu": seconds}``. An empty read is
the server gone: the launcher returns and, as it is PID 1 of its namespace
(``bwrap --as-pid-1``), the kernel kills every process left there. Being
PID 1 also means no process of the namespace can signal it (the kernel
drops signals to a namespace's init that it has no handler for; SIGINT's
is set to ignore).

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

MAX_FDS = 4
PR_SET_DUMPABLE = 4


def _send(sock: socket.socket, message: dict[str, object], fds: tuple[int, ...] = ()) -> None:
    data = json.dumps(message).encode()
    if fds:
        sock.sendmsg([data], [(socket.SOL_SOCKET, socket.SCM_RIGHTS, array.array("i", fds))])
    else:
        sock.send(data)


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
    )


def _serve_one(
    sock: socket.socket, sel: selectors.BaseSelector, children: dict[int, tuple[object, int, object]]
) -> bool:
    """Read and start one request; False when the server has gone."""
    data, ancillary, _flags, _addr = sock.recvmsg(65536, socket.CMSG_SPACE(MAX_FDS * 4), socket.MSG_CMSG_CLOEXEC)
    fds = _received_fds(ancillary)
    if not data and not fds:
        return False
    ident: object = None
    try:
        req = _request(data, fds)
        ident = req.get("id")
        if len(fds) != 3:
            raise OSError(22, f"a request carries 3 descriptors, not {len(fds)}")
        proc = _start(req, fds)
    except OSError as exc:
        _send(sock, {"id": ident, "errno": exc.errno or 5, "error": exc.strerror or str(exc)})
        return True
    except (ValueError, TypeError, KeyError) as exc:
        _send(sock, {"id": ident, "errno": 22, "error": f"bad request: {exc}"})
        return True
    finally:
        for fd in fds:
            os.close(fd)
    pidfd = os.pidfd_open(proc.pid)
    _send(sock, {"id": ident, "pid": proc.pid}, (pidfd,))
    sel.register(pidfd, selectors.EVENT_READ, "child")  # readable when it ends: a wake-up
    children[proc.pid] = (ident, pidfd, proc)
    return True


def _reap(sock: socket.socket, sel: selectors.BaseSelector, children: dict[int, tuple[object, int, object]]) -> None:
    """Reap every child that ended: ours are reported, orphans of theirs
    (re-parented to this process, PID 1 of the namespace) just reaped."""
    while True:
        try:
            pid, status, usage = os.wait4(-1, os.WNOHANG)
        except ChildProcessError:
            return
        if pid == 0:
            return
        entry = children.pop(pid, None)
        if entry is None:
            continue
        ident, pidfd, proc = entry
        code = os.waitstatus_to_exitcode(status)
        proc.returncode = code  # type: ignore[attr-defined]
        sel.unregister(pidfd)
        os.close(pidfd)
        _send(sock, {"id": ident, "exit": code, "cpu": usage.ru_utime + usage.ru_stime})


def main() -> None:
    ctypes.CDLL(None).prctl(PR_SET_DUMPABLE, 0, 0, 0, 0)
    signal.signal(signal.SIGINT, signal.SIG_IGN)  # PID 1 of its namespace: no signal from inside reaches it
    ctrl = int(sys.argv[1])
    os.set_inheritable(ctrl, False)
    sock = socket.socket(fileno=ctrl)
    sel = selectors.DefaultSelector()
    sel.register(sock, selectors.EVENT_READ, "server")
    children: dict[int, tuple[object, int, object]] = {}
    _send(sock, {"ready": os.getpid()}, (os.pidfd_open(os.getpid()),))  # the server may kill it through this
    while True:
        for key, _events in sel.select(5.0):
            if key.data == "server" and not _serve_one(sock, sel, children):
                return
        _reap(sock, sel, children)


if __name__ == "__main__":
    main()
