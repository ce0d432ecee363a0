"""Ctrl-C ends a run even when the code under it swallows one cancellation
(``tooldeck.core.interrupt``): checked in a child process that sends itself
SIGINT, from the exit status and the time it took."""

from __future__ import annotations

import subprocess
import sys
import textwrap

CHILD = textwrap.dedent(
    """
    import asyncio, os, signal, sys, time
    from tooldeck.core.interrupt import run_interruptible

    async def stubborn():
        loop = asyncio.get_running_loop()
        loop.call_later(0.2, os.kill, os.getpid(), signal.SIGINT)
        try:
            await asyncio.sleep(30)
        except asyncio.CancelledError:
            pass  # a library that swallows the first cancellation
        await asyncio.sleep(30)
        return "finished"

    async def polite():
        return "done"

    assert run_interruptible(polite()) == "done"
    t0 = time.monotonic()
    try:
        print(run_interruptible(stubborn()))
    except KeyboardInterrupt:
        print(f"interrupted after {time.monotonic() - t0:.1f} s")
        sys.exit(130)
    """
)


def test_a_swallowed_cancellation_is_sent_again_and_ends_in_keyboard_interrupt() -> None:
    r = subprocess.run([sys.executable, "-c", CHILD], capture_output=True, text=True, timeout=60)
    assert r.returncode == 130, (r.stdout, r.stderr)
    seconds = float(r.stdout.split()[2])
    assert seconds < 25, r.stdout  # well before the 30 s the second sleep would take (a 5x margin)


def test_plain_asyncio_run_lets_the_swallowed_cancellation_finish_the_work() -> None:
    """What the helper is for: the same coroutine under ``asyncio.run`` does
    not end at Ctrl-C (with a short second sleep, so the test stays quick)."""
    child = CHILD.replace("await asyncio.sleep(30)\n    return", "await asyncio.sleep(1)\n    return")
    assert child.count("sleep(1)") == 1
    child = child.replace("from tooldeck.core.interrupt import run_interruptible", "run_interruptible = asyncio.run")
    r = subprocess.run([sys.executable, "-c", child], capture_output=True, text=True, timeout=60)
    assert r.returncode == 0 and r.stdout.strip().endswith("finished"), (r.stdout, r.stderr)
