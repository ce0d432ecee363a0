"""``helpers.run`` reads a helper's pipes itself and waits for its exit on a
pidfd: large input and output both ways without a deadlock, a timeout or a
``stop`` kills and reaps, and a helper's exit is not waited for with sleeps
(``Popen.wait(timeout)`` slept 0.5, 1, 2 ms... on about one call in three)."""

from __future__ import annotations

import os
import subprocess
import time
from collections.abc import Iterator

import pytest

from tooldeck.confine import helpers, landlock
from tooldeck.confine.policy import program

CAT, SH, SLEEP = "/bin/cat", "/bin/sh", "/bin/sleep"
MODES = ["none"] + (["landlock"] if landlock.abi_version() >= 1 else [])
pytestmark = pytest.mark.skipif(not hasattr(os, "pidfd_open"), reason="the direct path needs pidfd_open")


@pytest.fixture(params=MODES)
def mode(request: pytest.FixtureRequest, monkeypatch: pytest.MonkeyPatch) -> Iterator[str]:
    monkeypatch.setenv(helpers.ENV, request.param)
    helpers.reset_for_tests()
    yield request.param
    helpers.reset_for_tests()


def _alive(pid: int) -> bool:
    try:
        with open(f"/proc/{pid}/stat") as fh:
            return fh.read().rsplit(")", 1)[1].split()[0] != "Z"
    except OSError:
        return False


def test_large_input_and_output_pass_both_ways(mode: str) -> None:
    data = os.urandom(3 << 20)  # far more than a pipe holds: both sides must flow at once
    done = helpers.run(program("cat", CAT), [CAT], input=data, timeout=60)
    assert done.returncode == 0 and done.stdout == data and done.stderr == b""


def test_stderr_and_the_exit_status_come_back(mode: str) -> None:
    done = helpers.run(program("sh", SH), [SH, "-c", "echo out; echo err >&2; exit 3"], timeout=30)
    assert (done.returncode, done.stdout, done.stderr) == (3, b"out\n", b"err\n")


def test_the_exit_is_not_awaited_with_sleeps(mode: str, monkeypatch: pytest.MonkeyPatch) -> None:
    slept: list[float] = []
    real = time.sleep
    monkeypatch.setattr(time, "sleep", lambda s: slept.append(s) or real(s))
    # closes its output, then exits a moment later: the case Popen.wait(timeout) slept on
    for _ in range(5):
        done = helpers.run(program("sh", SH), [SH, "-c", "exec >&- 2>&-; sleep 0.05"], timeout=30)
        assert done.returncode == 0
    assert slept == []


def test_a_timeout_kills_and_reaps(mode: str) -> None:
    started: list[int] = []
    real = helpers.popen

    def recording(*args, **kwargs):  # type: ignore[no-untyped-def]
        proc = real(*args, **kwargs)
        started.append(proc.pid)
        return proc

    helpers_popen = helpers.popen
    helpers.popen = recording  # type: ignore[assignment]
    try:
        t0 = time.monotonic()
        with pytest.raises(subprocess.TimeoutExpired):
            helpers.run(program("sleep", SLEEP), [SLEEP, "30"], timeout=0.3)
        # output closed, the exit not come: the wait for it times out too
        with pytest.raises(subprocess.TimeoutExpired):
            helpers.run(program("sh", SH), [SH, "-c", "exec >&- 2>&-; sleep 30"], timeout=0.3)
    finally:
        helpers.popen = helpers_popen  # type: ignore[assignment]
    assert time.monotonic() - t0 < 20
    assert len(started) == 2 and not any(_alive(pid) for pid in started)


def test_a_stop_that_raises_kills_and_reaps(mode: str) -> None:
    class Stop(Exception):
        pass

    calls: list[float] = []

    def stop() -> None:
        calls.append(time.monotonic())
        if len(calls) >= 3:
            raise Stop

    with pytest.raises(Stop):
        helpers.run(program("sleep", SLEEP), [SLEEP, "30"], timeout=30, stop=stop)
    with pytest.raises(Stop):  # also while awaiting the exit after the output closed
        calls.clear()
        helpers.run(program("sh", SH), [SH, "-c", "exec >&- 2>&-; sleep 30"], timeout=30, stop=stop)
    assert len(calls) == 3
