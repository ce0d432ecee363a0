"""A network namespace with only a loopback, for the agent clients and their model server.

The clients are real programs from npm with update checks, telemetry and
feature-flag fetches of their own; a proxy variable is a request, not a
boundary. So each client runs in a network namespace of its own (``unshare
--net``, as the HTTP tests do: :func:`tests.mcp.mcp_e2e.in_new_netns`) where
the only interface is ``lo``: nothing leaves the machine, and nothing on the
host's loopback is reachable either. The scripted model server's listening
socket is made *inside* that namespace (a thread of this process enters it
with ``setns`` just to create the socket: a socket stays in the namespace it
was made in), so the client reaches it at 127.0.0.1 and the test keeps
reading what it received in-process.
"""

from __future__ import annotations

import ctypes
import os
import signal
import subprocess
import threading
import time
from collections.abc import Callable
from typing import TypeVar

from tests.mcp.mcp_e2e import in_netns_of, in_new_netns, netns_available

T = TypeVar("T")
CLONE_NEWNET = 0x40000000
HOW = "root, with util-linux (unshare, nsenter) and iproute2 (ip): apt-get install util-linux iproute2"

__all__ = ["HOW", "LoopbackOnly", "netns_available"]


class LoopbackOnly:
    """A namespace held open by a ``sleep`` inside it (lo up) for the life of the block."""

    def __init__(self) -> None:
        self.proc: subprocess.Popen[bytes] | None = None

    @property
    def path(self) -> str:
        assert self.proc is not None, "use LoopbackOnly as a context manager"
        return f"/proc/{self.proc.pid}/ns/net"

    def __enter__(self) -> LoopbackOnly:
        self.proc = subprocess.Popen(in_new_netns(["sleep", "3600"]), stdin=subprocess.DEVNULL)
        deadline = time.monotonic() + 10
        while self._comm() != "sleep":  # lo is up once the shell has exec'd sleep
            if self.proc.poll() is not None or time.monotonic() > deadline:
                raise RuntimeError(f"the network namespace did not come up (exit {self.proc.poll()})")
            time.sleep(0.01)
        return self

    def _comm(self) -> str:
        assert self.proc is not None
        try:
            with open(f"/proc/{self.proc.pid}/comm", encoding="utf-8") as fh:
                return fh.read().strip()
        except OSError:
            return ""

    def __exit__(self, *exc: object) -> None:
        if self.proc is not None:
            self.proc.send_signal(signal.SIGKILL)
            self.proc.wait(10)

    def wrap(self, argv: list[str]) -> list[str]:
        """``argv`` run inside the namespace (nsenter execs it: the pid is the command's)."""
        assert self.proc is not None
        return in_netns_of(self.proc.pid, argv)

    def inside(self, make: Callable[[], T]) -> T:
        """``make()`` called on a thread that entered the namespace (for a listening socket)."""
        out: list[T] = []
        errors: list[BaseException] = []

        def run() -> None:
            try:
                fd = os.open(self.path, os.O_RDONLY | os.O_CLOEXEC)
                try:
                    libc = ctypes.CDLL(None, use_errno=True)
                    if libc.setns(fd, CLONE_NEWNET) != 0:
                        err = ctypes.get_errno()
                        raise OSError(err, f"setns into {self.path}: {os.strerror(err)}")
                finally:
                    os.close(fd)
                out.append(make())
            except BaseException as exc:  # handed to the caller
                errors.append(exc)

        thread = threading.Thread(target=run)  # it ends right after: only this thread ever entered
        thread.start()
        thread.join()
        if errors:
            raise errors[0]
        return out[0]
