"""Timeouts that end a call, and one invocation per call (issue 8 items 8, 9).

A worker-thread tool that never looks at its cancellation flag must still not
hold its caller past the timeout (nor the process at exit), and a timed-out
call must not cancel the invocation the next call receives, even when the
caller passes the shared ``SILENT`` one.
"""

from __future__ import annotations

import asyncio
import os
import subprocess
import sys
import textwrap
import threading
import time
from pathlib import Path

import pytest

from tooldeck.core import SILENT, Invocation, Toolbox, ToolCall, tool


@tool(read_only=True)
def stubborn(seconds: float) -> str:
    """Blocks in a worker thread, ignoring cancellation."""
    threading.Event().wait(seconds)
    return "finished"


@tool(read_only=True)
async def slow(seconds: float, invocation: Invocation) -> str:
    """Sleeps, then says whether its invocation is cancelled."""
    await asyncio.sleep(seconds)
    return f"cancelled={invocation.cancelled}"


@tool(read_only=True)
def probe(seconds: float, invocation: Invocation) -> str:
    """A worker-thread tool that reports its own cancellation flag."""
    time.sleep(seconds)
    invocation.check_cancelled()
    return "ok"


@pytest.mark.timeout(20)
def test_a_thread_that_ignores_cancellation_does_not_hold_the_caller() -> None:
    box = Toolbox([stubborn], timeout=0.3)
    began = time.monotonic()
    res = box.call_sync("stubborn", {"seconds": 30})
    assert res.error is not None and res.error.code == "timeout", res.text
    assert time.monotonic() - began < 15  # call_sync returns: it does not join the thread stuck for 30 s


@pytest.mark.timeout(30)
def test_a_stuck_tool_does_not_starve_later_calls() -> None:
    """Abandoned threads must not fill a small shared pool (the default
    executor has a handful of workers on a 2-core machine)."""
    box = Toolbox([stubborn, probe], timeout=0.2)

    async def scenario() -> list[str]:
        stuck = [box.call("stubborn", {"seconds": 30}) for _ in range(12)]
        results = await asyncio.gather(*stuck)
        after = await box.call("probe", {"seconds": 0}, timeout=10)  # a starved pool would hold it 30 s
        return [r.error.code if r.error else r.text for r in [*results, after]]

    codes = asyncio.run(scenario())
    assert codes[:12] == ["timeout"] * 12 and codes[12] == "ok", codes


@pytest.mark.timeout(30)
def test_the_cli_process_exits_after_a_timed_out_thread(tmp_path: Path) -> None:
    script = tmp_path / "stuck.py"
    script.write_text(
        textwrap.dedent(
            """
            import threading
            from tooldeck.core import Toolbox, tool

            @tool
            def stuck() -> str:
                "Blocks forever."
                threading.Event().wait()
                return "never"

            print(Toolbox([stuck], timeout=0.2).call_sync("stuck").text)
            """
        )
    )
    began = time.monotonic()
    proc = subprocess.run([sys.executable, str(script)], capture_output=True, text=True, timeout=20, env=os.environ)
    assert "error [timeout]" in proc.stdout, proc.stdout + proc.stderr
    assert time.monotonic() - began < 15


@pytest.mark.timeout(20)
def test_a_timeout_does_not_cancel_the_shared_silent_invocation() -> None:
    box = Toolbox([slow, probe])
    first = box.call_sync("slow", {"seconds": 5}, invocation=SILENT, timeout=0.1)
    assert first.error is not None and first.error.code == "timeout"
    assert not SILENT.cancelled
    second = box.call_sync("probe", {"seconds": 0}, invocation=SILENT)
    assert not second.is_error, second.text
    third = box.call_sync("slow", {"seconds": 0}, invocation=SILENT)
    assert third.text == "cancelled=False"


@pytest.mark.timeout(20)
def test_call_many_gives_each_call_its_own_invocation() -> None:
    box = Toolbox([slow, probe])
    shared = Invocation.silent()
    calls = [
        ToolCall("slow", {"seconds": 5}, "stuck"),
        ToolCall("slow", {"seconds": 0.2}, "a"),
        ToolCall("probe", {"seconds": 0.2}, "b"),
    ]
    results = asyncio.run(box.call_many(calls, invocation=shared, timeout=0.2 * 5))  # 5x what a and b need
    by_id = {r.call_id: r for r in results}
    assert by_id["stuck"].error is not None and by_id["stuck"].error.code == "timeout"
    assert by_id["a"].text == "cancelled=False", by_id["a"].text
    assert not by_id["b"].is_error, by_id["b"].text
    assert not shared.cancelled


@pytest.mark.timeout(20)
def test_cancelling_the_callers_invocation_reaches_the_call() -> None:
    started, release = threading.Event(), threading.Event()

    @tool(read_only=True)
    def held(invocation: Invocation) -> str:
        """Runs until the test releases it, then reports its cancellation flag."""
        started.set()
        release.wait(30)
        invocation.check_cancelled()
        return "ok"

    box = Toolbox([held])
    parent = Invocation.silent()

    async def scenario() -> str:
        task = asyncio.ensure_future(box.call("held", {}, invocation=parent))
        assert await asyncio.to_thread(started.wait, 30)  # the call is running: cancel it mid-way
        parent.cancel()
        release.set()
        return (await task).text

    assert "cancelled" in asyncio.run(scenario())


def test_hosts_get_a_default_timeout(tmp_path: Path) -> None:
    from tooldeck.catalog import build_toolbox
    from tooldeck.runtime import Runtime

    box = build_toolbox(Runtime.for_dirs([tmp_path], state_dir=tmp_path / "state"))
    assert box.timeout is not None and 0 < box.timeout <= 3600


@pytest.mark.timeout(30)
def test_idle_workers_are_reused() -> None:
    from tooldeck.core.workers import WORKERS

    box = Toolbox([probe])

    async def scenario() -> None:
        for _ in range(20):
            assert not (await box.call("probe", {"seconds": 0})).is_error

    asyncio.run(scenario())  # warm
    before = WORKERS.started
    asyncio.run(scenario())
    assert WORKERS.started - before == 0  # sequential calls reuse a warm thread
