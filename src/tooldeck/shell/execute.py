"""Run prepared argvs as pipelines with limits, streaming output as it comes.

The runner never involves a shell: a pipeline ``a | b`` is two processes
joined by an ``os.pipe``; ``;``, ``&&`` and ``||`` are decided here from exit
codes. Every process gets its own session and process group (the kill
signals each) and every run its own pids cgroup where the machine has one. At a limit —
wall time, idle time (no output), a cancelled call — the tree is ended:
SIGTERM to the groups, a short grace, then SIGKILL to the groups and to every
pid left in the cgroup; inside bubblewrap the pid namespace dies with its
first process, taking any grandchild along.

The loop runs in a worker thread (``run``); :func:`run_async` awaits it and
turns a cancelled await (the Toolbox's timeout) into a kill.
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import selectors
import signal
import subprocess
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Protocol

from tooldeck.shell.cgroup import PidsCgroup
from tooldeck.shell.seccomp_filter import fill_slot
from tooldeck.shell.shaping import Capture

CHUNK = 1 << 16
TERM_GRACE = 0.3  # seconds between SIGTERM and SIGKILL
EXIT_GRACE = 0.2  # after the last stage exits, how long a straggler may keep the pipes open
HARD_OUTPUT_CAP = 1 << 30  # beyond this much output the run is ended (the capture is bounded anyway)

Emit = Callable[[str, bytes], None]


class RunHold(Protocol):
    """Something a run keeps alive until its processes are gone (the call's git
    placeholders): :func:`run_async` calls ``begin`` before the run is handed to
    its thread and ``end`` in that thread once the run is over, so a cancelled
    await never releases it while the sandbox still lives."""

    def begin(self) -> None: ...

    def end(self) -> None: ...


@dataclass(frozen=True, slots=True)
class RunSpec:
    steps: list[tuple[str | None, list[list[str]]]]  # (op before, stage argvs)
    wall: float
    idle: float
    output_bytes: int
    max_pids: int
    pipefail: bool = True
    stdin: bytes | None = None
    split: bool = False  # stdout and stderr captured apart (else one combined stream)
    env: dict[str, str] | None = None  # for unsandboxed runs (bwrap sets its own)
    cwd: str = "/"
    seccomp: bytes | None = None  # the BPF program a sandboxed argv's FD_SLOT stands for
    hold: RunHold | None = None  # held from run_async's call until the run's processes are gone


@dataclass(slots=True)
class RunResult:
    exit_code: int | None = None
    signal: int | None = None
    duration_ms: float = 0.0
    out: Capture = field(default_factory=lambda: Capture(0))
    err: Capture | None = None
    limit: str | None = None  # "wall", "idle", "output", "cancelled"
    pids_limit: bool = False
    pids_max: int = 0  # the process limit that applied to this run
    stages: list[int | None] = field(default_factory=list)


class _Run:
    def __init__(self, spec: RunSpec, emit: Emit | None, stop: threading.Event) -> None:
        self.spec = spec
        self.emit = emit
        self.stop = stop
        self.res = RunResult(out=Capture(spec.output_bytes), err=Capture(spec.output_bytes) if spec.split else None,
                             pids_max=spec.max_pids)  # fmt: skip
        self.start = time.monotonic()
        self.last_io = self.start
        self.cg = PidsCgroup.create(spec.max_pids)
        self.groups: list[int] = []

    # killing -------------------------------------------------------------
    def _signal_groups(self, sig: int) -> None:
        for pgid in self.groups:
            with contextlib.suppress(ProcessLookupError, PermissionError):
                os.killpg(pgid, sig)

    def kill_tree(self, procs: list[subprocess.Popen[bytes]]) -> None:
        self._signal_groups(signal.SIGTERM)
        deadline = time.monotonic() + TERM_GRACE
        while time.monotonic() < deadline and any(p.poll() is None for p in procs):
            time.sleep(0.01)
        self._signal_groups(signal.SIGKILL)
        if self.cg is not None:
            self.cg.kill_all()

    def _limit_hit(self) -> str | None:
        now = time.monotonic()
        if self.stop.is_set():
            return "cancelled"
        if now - self.start > self.spec.wall:
            return "wall"
        if now - self.last_io > self.spec.idle:
            return "idle"
        total = self.res.out.total + (self.res.err.total if self.res.err else 0)
        if total > HARD_OUTPUT_CAP:
            return "output"
        return None

    # spawning ------------------------------------------------------------
    def _argv(self, argv: list[str]) -> list[str]:
        return [*self.cg.exec_prefix(), *argv] if self.cg is not None else argv

    def _spawn_pipeline(self, stages: list[list[str]]) -> tuple[list[subprocess.Popen[bytes]], list[int]]:
        out_r, out_w = os.pipe()
        err_r, err_w = os.pipe() if self.spec.split else (None, None)
        stdin_r = stdin_w = None
        if self.spec.stdin is not None:
            stdin_r, stdin_w = os.pipe()
        procs: list[subprocess.Popen[bytes]] = []
        prev_r: int | None = stdin_r
        try:
            for i, argv in enumerate(stages):
                last = i == len(stages) - 1
                nxt_r, nxt_w = (None, None) if last else os.pipe()
                # the seccomp program through a descriptor of this process's own
                argv, seccomp_fd = fill_slot(argv, self.spec.seccomp) if self.spec.seccomp else (argv, None)
                try:
                    proc = subprocess.Popen(
                        self._argv(argv),
                        stdin=prev_r if prev_r is not None else subprocess.DEVNULL,
                        stdout=out_w if last else nxt_w,
                        stderr=err_w if err_w is not None else out_w,
                        cwd=self.spec.cwd,
                        env=self.spec.env if self.spec.env is not None else {},
                        start_new_session=True,  # own group: the kill signals it
                        pass_fds=(seccomp_fd,) if seccomp_fd is not None else (),
                    )
                finally:
                    if seccomp_fd is not None:
                        os.close(seccomp_fd)
                self.groups.append(proc.pid)
                procs.append(proc)
                if prev_r is not None:
                    os.close(prev_r)
                if nxt_w is not None:
                    os.close(nxt_w)
                prev_r = nxt_r
        finally:
            os.close(out_w)
            if err_w is not None:
                os.close(err_w)
        if stdin_w is not None:
            threading.Thread(target=_feed, args=(stdin_w, self.spec.stdin or b""), daemon=True).start()
        return procs, [fd for fd in (out_r, err_r) if fd is not None]

    # the loop -------------------------------------------------------------
    def _pump(self, procs: list[subprocess.Popen[bytes]], fds: list[int]) -> None:
        sel = selectors.DefaultSelector()
        names = {fds[0]: "stdout"}
        if len(fds) > 1:
            names[fds[1]] = "stderr"
        for fd in fds:
            sel.register(fd, selectors.EVENT_READ)
        exited_at: float | None = None
        try:
            while sel.get_map():
                for key, _ in sel.select(0.05):
                    data = os.read(key.fd, CHUNK)
                    if not data:
                        sel.unregister(key.fd)
                        continue
                    self.last_io = time.monotonic()
                    cap = self.res.out if names[key.fd] == "stdout" or self.res.err is None else self.res.err
                    cap.add(data)
                    if self.emit is not None:
                        self.emit(names[key.fd], data)
                limit = self._limit_hit()
                if limit is not None:
                    self.res.limit = limit
                    self.kill_tree(procs)
                    break
                if all(p.poll() is not None for p in procs):
                    exited_at = exited_at or time.monotonic()
                    if time.monotonic() - exited_at > EXIT_GRACE:
                        break  # a straggler holds the pipe open; it is killed below
        finally:
            sel.close()
            for fd in fds:
                os.close(fd)

    def _wait(self, procs: list[subprocess.Popen[bytes]]) -> list[int | None]:
        codes: list[int | None] = []
        for p in procs:
            try:
                codes.append(p.wait(timeout=max(0.0, self.spec.wall - (time.monotonic() - self.start)) + 1))
            except subprocess.TimeoutExpired:
                self.res.limit = self.res.limit or "wall"
                self.kill_tree(procs)
                codes.append(p.wait())
        return codes

    def run_pipeline(self, stages: list[list[str]]) -> int | None:
        procs, fds = self._spawn_pipeline(stages)
        try:
            self._pump(procs, fds)
            if not self.res.limit:  # the pipes closed: the stages are exiting, reap them promptly
                _wait_briefly(procs, EXIT_GRACE)
        finally:
            if any(p.poll() is None for p in procs) or self.res.limit:
                self.kill_tree(procs)
            self._signal_groups(signal.SIGKILL)  # stragglers of a finished pipeline
        codes = self._wait(procs)
        self.res.stages.extend(codes)
        if self.spec.pipefail:
            failed = [c for c in codes if c != 0]
            return failed[-1] if failed else 0
        return codes[-1]

    def run(self) -> RunResult:
        status: int | None = 0
        try:
            for op, stages in self.spec.steps:
                if self.res.limit:
                    break
                if (op == "&&" and status != 0) or (op == "||" and status == 0):
                    continue
                status = self.run_pipeline(stages)
                self.groups.clear()
        finally:
            if self.cg is not None:
                self.res.pids_limit = self.cg.hit_limit()
                self.cg.close()
        self.res.duration_ms = (time.monotonic() - self.start) * 1000
        if status is not None and status < 0:
            self.res.signal, self.res.exit_code = -status, None
        else:
            self.res.exit_code = status
        return self.res


def _wait_briefly(procs: list[subprocess.Popen[bytes]], timeout: float) -> None:
    deadline = time.monotonic() + timeout
    for p in procs:
        try:
            p.wait(timeout=max(0.0, deadline - time.monotonic()))
        except subprocess.TimeoutExpired:
            return


def _feed(fd: int, data: bytes) -> None:
    """Write stdin in a thread of its own (a pipe buffer is 64 KB; the reader may be slow)."""
    try:
        view = memoryview(data)
        while view:
            n = os.write(fd, view[:CHUNK])
            view = view[n:]
    except OSError:
        pass  # the reader exited early (BrokenPipe): what it did not read is dropped
    finally:
        os.close(fd)


def run(spec: RunSpec, emit: Emit | None = None, stop: threading.Event | None = None) -> RunResult:
    """Run ``spec`` to completion or a limit (blocking)."""
    return _Run(spec, emit, stop or threading.Event()).run()


def _run_then_end(spec: RunSpec, emit: Emit | None, stop: threading.Event) -> RunResult:
    try:
        return run(spec, emit, stop)
    finally:
        if spec.hold is not None:
            spec.hold.end()


async def run_async(spec: RunSpec, emit: Emit | None = None, cancelled: Callable[[], bool] | None = None) -> RunResult:
    """:func:`run` in a worker thread; cancelling the await ends the process tree."""
    stop = threading.Event()
    loop = asyncio.get_running_loop()
    if spec.hold is not None:
        spec.hold.begin()
    try:
        fut = loop.run_in_executor(None, _run_then_end, spec, emit, stop)
    except BaseException:
        if spec.hold is not None:
            spec.hold.end()
        raise
    watcher = None
    if cancelled is not None:

        async def watch() -> None:
            while not cancelled():
                await asyncio.sleep(0.05)
            stop.set()

        watcher = asyncio.ensure_future(watch())
    try:
        return await asyncio.shield(fut)
    except asyncio.CancelledError:
        stop.set()
        raise
    finally:
        if watcher is not None:
            watcher.cancel()
