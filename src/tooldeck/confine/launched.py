"""A helper started by the launcher, seen from the server: the part of
:class:`subprocess.Popen` tooldeck's callers use.

The server made the child's pipes (so it reads and writes them directly,
no copy through the launcher) and holds a pidfd of the child: ``kill``
signals through it (a pidfd never names a reused pid), and the exit status
comes from the launcher, the child's parent, over the call's reply pair.
"""

from __future__ import annotations

import array
import errno
import json
import os
import selectors
import signal
import socket
import subprocess
import threading
import time
from collections.abc import Callable
from typing import IO, Any


def _open(source: Any, for_child_reading: bool) -> tuple[int | None, int]:
    """(the server's end or None, the child's end) of one stream."""
    if source == subprocess.PIPE:
        r, w = os.pipe()
        return (w, r) if for_child_reading else (r, w)
    if source is None or source == subprocess.DEVNULL:
        # never the server's own streams: stdout may be a protocol channel, stderr the person's
        # terminal (the launcher has no new session and no seccomp filter against TIOCSTI)
        return None, os.open(os.devnull, os.O_RDWR | os.O_CLOEXEC)
    fd = source if isinstance(source, int) else source.fileno()
    return None, os.dup(fd)


def child_streams(stdin: Any, stdout: Any, stderr: Any) -> tuple[tuple[int | None, ...], tuple[int, ...]]:
    """The server's ends (stdin writer, stdout reader, stderr reader; None
    where not a pipe) and the child's three descriptors (to send, then close)."""
    made: list[tuple[int | None, int]] = []
    try:
        made.append(_open(stdin, True))
        made.append(_open(stdout, False))
        made.append(_open(stderr, False))
    except BaseException:
        for ours, theirs in made:
            os.close(theirs)
            if ours is not None:
                os.close(ours)
        raise
    return tuple(m[0] for m in made), tuple(m[1] for m in made)


def host_pid(pidfd: int) -> int:
    """The pid a pidfd names, as this process's PID namespace numbers it (-1: gone)."""
    try:
        with open(f"/proc/self/fdinfo/{pidfd}", encoding="ascii") as fh:
            for line in fh:
                if line.startswith("Pid:"):
                    return int(line.split()[1])
    except (OSError, ValueError):
        pass
    return -1


class LaunchedProcess:
    """A helper asked of the launcher: ``communicate``, ``wait``, ``poll``, ``kill``.

    Its reply pair (made for this call alone) brings the start (a pidfd, or
    why it could not start) and later the exit status and CPU time, straight
    to whichever thread asks; closing it makes the launcher kill the helper."""

    def __init__(
        self,
        args: list[str],
        reply: socket.socket,
        ours: tuple[int | None, ...],
        account: Callable[[float], None] | None = None,
    ) -> None:
        self.args = args
        self.returncode: int | None = None
        self.cpu = 0.0  # CPU seconds of the helper, known once it ended
        self._reply = reply
        self._account = account
        self._pidfd = -1
        self._pid = self._pid_inside = -1
        self._start_error: OSError | None = None
        self._started = False
        self._lock = threading.RLock()  # one reader of the reply pair at a time
        self._fd_lock = threading.Lock()  # the pidfd is never signalled after it was closed (its number reused)
        w, r_out, r_err = ours
        self.stdin: IO[bytes] | None = os.fdopen(w, "wb") if w is not None else None
        self.stdout: IO[bytes] | None = os.fdopen(r_out, "rb") if r_out is not None else None
        self.stderr: IO[bytes] | None = os.fdopen(r_err, "rb") if r_err is not None else None
        self._chunks: dict[int, list[bytes]] = {}
        self._input: memoryview | None = None
        self._communicating = False

    # the reply pair ---------------------------------------------------------------------------
    def _next(self, timeout: float | None) -> dict[str, Any] | None:
        """The next reply; None when the launcher closed the pair (it died)."""
        self._reply.settimeout(timeout)
        try:
            data, anc, _flags, _addr = self._reply.recvmsg(4096, socket.CMSG_SPACE(4), socket.MSG_CMSG_CLOEXEC)
        except (TimeoutError, BlockingIOError):
            raise subprocess.TimeoutExpired(self.args, timeout or 0.0) from None
        except OSError:
            return None
        fds = array.array("i")
        for level, kind, raw in anc:
            if level == socket.SOL_SOCKET and kind == socket.SCM_RIGHTS:
                fds.frombytes(raw[: len(raw) - len(raw) % fds.itemsize])
        if not data:
            return None
        msg: dict[str, Any] = json.loads(data)
        if fds:
            msg["pidfd"] = fds[0]
        return msg

    def _ensure_started(self, timeout: float | None = None) -> None:
        with self._lock:
            if not self._started:
                msg = self._next(timeout)
                self._started = True
                if msg is None:
                    self._start_error = OSError(errno.EIO, "the helper launcher stopped before it started the helper")
                elif "pidfd" in msg:
                    self._pidfd = msg["pidfd"]
                    self._pid, self._pid_inside = host_pid(self._pidfd), int(msg.get("pid", -1))
                else:
                    code = int(msg.get("errno", errno.EIO))
                    self._start_error = OSError(code, str(msg.get("error", os.strerror(code))), self.args[0])
                if self._start_error is not None:
                    self._finish(None, 0.0)
        if self._start_error is not None:
            raise self._start_error

    def _finish(self, code: int | None, cpu: float) -> None:
        with self._fd_lock:
            if self.returncode is None:
                self.returncode = code
            self.cpu = cpu
            if self._pidfd >= 0:
                os.close(self._pidfd)
            self._pidfd = -1
        self._reply.close()
        if self._account is not None and cpu:
            self._account(cpu)

    @property
    def pid(self) -> int:
        """The helper's pid as the server sees it."""
        self._ensure_started()
        return self._pid

    @property
    def pid_inside(self) -> int:
        """The helper's pid in its namespace."""
        self._ensure_started()
        return self._pid_inside

    # exit -------------------------------------------------------------------------------------
    def poll(self) -> int | None:
        try:
            return self.wait(0.0)
        except subprocess.TimeoutExpired:
            return None
        except OSError:  # could not start: no status
            return None

    def wait(self, timeout: float | None = None) -> int:
        deadline = None if timeout is None else time.monotonic() + timeout
        self._ensure_started(timeout)
        with self._lock:
            if self.returncode is None and self._reply.fileno() != -1:
                left = None if deadline is None else max(0.0, deadline - time.monotonic())
                msg = self._next(left)
                if msg is None or "exit" not in msg:  # the launcher died: its namespace went with it
                    self._finish(-9, 0.0)
                else:
                    self._finish(int(msg["exit"]), float(msg.get("cpu", 0.0)))
        assert self.returncode is not None
        return self.returncode

    def send_signal(self, sig: int) -> None:
        try:
            self._ensure_started()
        except OSError:
            return  # never started: nothing to signal
        with self._fd_lock:
            if self._pidfd < 0:
                return
            try:
                signal.pidfd_send_signal(self._pidfd, sig)
            except OSError:
                pass  # ended meanwhile (ProcessLookupError)

    def kill(self) -> None:
        self.send_signal(signal.SIGKILL)

    def terminate(self) -> None:
        self.send_signal(signal.SIGTERM)

    # streams ----------------------------------------------------------------------------------
    def communicate(
        self, input: bytes | None = None, timeout: float | None = None
    ) -> tuple[bytes | None, bytes | None]:
        """As :meth:`subprocess.Popen.communicate`: may be called again after
        a :class:`subprocess.TimeoutExpired` (the output read so far is kept)."""
        deadline = None if timeout is None else time.monotonic() + timeout
        if not self._communicating:
            self._communicating = True
            if self.stdin is not None:
                self._input = memoryview(input or b"")
                if not self._input:
                    self._close_stdin()
        with selectors.DefaultSelector() as sel:
            for stream in (self.stdout, self.stderr):
                if stream is not None and not stream.closed:
                    self._chunks.setdefault(stream.fileno(), [])
                    sel.register(stream.fileno(), selectors.EVENT_READ, stream)
            if self.stdin is not None and not self.stdin.closed:
                sel.register(self.stdin.fileno(), selectors.EVENT_WRITE, self.stdin)
            self._pump(sel, deadline)
        self.wait(None if deadline is None else max(0.0, deadline - time.monotonic()))
        return self._collected(self.stdout), self._collected(self.stderr)

    def _pump(self, sel: selectors.BaseSelector, deadline: float | None) -> None:
        while sel.get_map():
            left = None if deadline is None else deadline - time.monotonic()
            if left is not None and left <= 0:
                raise subprocess.TimeoutExpired(self.args, 0.0)
            for key, _ in sel.select(left):
                stream = key.data
                if stream is self.stdin:
                    self._write_some(sel, key.fd)
                    continue
                data = os.read(key.fd, 65536)
                if data:
                    self._chunks[key.fd].append(data)
                else:
                    sel.unregister(key.fd)

    def _write_some(self, sel: selectors.BaseSelector, fd: int) -> None:
        assert self._input is not None
        try:
            n = os.write(fd, self._input[:65536])
        except BrokenPipeError:
            n = len(self._input)
        self._input = self._input[n:]
        if not self._input:
            sel.unregister(fd)
            self._close_stdin()

    def _close_stdin(self) -> None:
        if self.stdin is not None:
            try:
                self.stdin.close()
            except BrokenPipeError:
                pass

    def _collected(self, stream: IO[bytes] | None) -> bytes | None:
        if stream is None:
            return None
        data = b"".join(self._chunks.get(stream.fileno(), ())) if not stream.closed else b""
        stream.close()
        return data

    def __enter__(self) -> LaunchedProcess:
        return self

    def __exit__(self, *exc: object) -> None:
        for stream in (self.stdin, self.stdout, self.stderr):
            if stream is not None and not stream.closed:
                try:
                    stream.close()
                except OSError:
                    pass
        try:
            self.wait()
        except OSError:
            pass  # it never started: the error was raised where it was asked for
