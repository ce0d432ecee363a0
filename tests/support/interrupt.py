"""Spawn a tooldeck command, wait until it has got as far as a test needs,
then press Ctrl-C (SIGINT) and collect how it ended."""

from __future__ import annotations

import signal
import subprocess
import time
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path


def interrupt_when(
    cmd: Sequence[str],
    ready: Callable[[], bool],
    *,
    cwd: Path,
    env: Mapping[str, str],
    wait: float = 30.0,
) -> tuple[int, str, str, bool]:
    """Run ``cmd``, poll ``ready`` until it holds (at most ``wait`` seconds),
    send SIGINT, and return (exit code, stdout, stderr, whether ``ready``
    held before the signal)."""
    pipe = subprocess.PIPE
    proc = subprocess.Popen(list(cmd), cwd=cwd, env=dict(env), stdout=pipe, stderr=pipe, text=True)
    deadline = time.monotonic() + wait
    while not (was_ready := ready()) and time.monotonic() < deadline:
        time.sleep(0.05)
    proc.send_signal(signal.SIGINT)
    out, err = proc.communicate(timeout=60)  # what it leaves is tested, not how fast (bench/serve_stop.py times exits)
    return proc.returncode, out, err, was_ready
