"""Parse workers end with their parent, however it ends: a server killed by
SIGTERM or SIGKILL runs no shutdown hook, and an orphaned worker used to live
on, blocked on its task queue."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

PARENT = """
import os, sys, time
def main():
    from tooldeck.codemap import pool
    futures = [pool.submit([("python", b"def f(x):\\n    return x\\n")] * 8) for _ in range(4)]
    assert all(f is not None and f.result() for f in futures)
    print(" ".join(str(pid) for pid in pool.get_pool()._processes), flush=True)
    time.sleep(120)
if __name__ == "__main__":
    main()
"""


def _alive(pid: int) -> bool:
    try:
        state = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
    except (FileNotFoundError, ProcessLookupError):
        return False
    return state not in ("Z", "X")  # a zombie has exited (its reaper may be slow)


@pytest.mark.skipif(not Path("/proc/self/stat").exists(), reason="reads /proc")
@pytest.mark.parametrize("sig", [signal.SIGTERM, signal.SIGKILL])
def test_workers_exit_when_the_parent_is_killed(tmp_path: Path, sig: signal.Signals) -> None:
    script = tmp_path / "parent.py"
    script.write_text(PARENT)
    env = {**os.environ, "TOOLDECK_CODEMAP_WORKERS": "2", "TOOLDECK_STATE_DIR": str(tmp_path / "state")}
    proc = subprocess.Popen([sys.executable, str(script)], stdout=subprocess.PIPE, text=True, env=env)
    try:
        assert proc.stdout is not None
        pids = [int(p) for p in proc.stdout.readline().split()]
        assert pids and all(_alive(p) for p in pids)
        proc.send_signal(sig)
        proc.wait(timeout=30)
        deadline = time.monotonic() + 60
        while any(_alive(p) for p in pids) and time.monotonic() < deadline:
            time.sleep(0.1)
        assert not [p for p in pids if _alive(p)]
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
