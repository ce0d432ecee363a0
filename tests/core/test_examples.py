"""The runnable examples under ``examples/`` run, and check what they claim (so they cannot rot)."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

EXAMPLES = Path(__file__).resolve().parents[2] / "examples"


def test_custom_tools_example_runs_offline() -> None:
    done = subprocess.run(
        [sys.executable, str(EXAMPLES / "custom_tools.py")], capture_output=True, text=True, timeout=120,
        env={"PATH": "/usr/bin:/bin", "PYTHONPATH": ":".join(sys.path), "HOME": str(EXAMPLES)},
    )  # fmt: skip
    assert done.returncode == 0, done.stdout + done.stderr
    assert "FAIL" not in done.stdout
    for claim in ("typed tool returns structured data", "progress reaches the observer", "custom tool takes raw text",
                  "duplicate names raise", "bad input is an error result"):  # fmt: skip
        assert f"ok  a {claim}" in done.stdout or f"ok  {claim}" in done.stdout, done.stdout
