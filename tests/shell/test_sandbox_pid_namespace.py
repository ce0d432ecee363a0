"""The sandbox has a pid namespace of its own: a command in it cannot see or
signal a process of the host (scripts/mutation.py found --unshare-pid
removable without a failing test). Checked from the host: the process lives."""

from __future__ import annotations

import subprocess
import sys

import pytest

from tests.shell.shell_harness import Shell, needs_bwrap

pytestmark = needs_bwrap


@pytest.fixture
def host_process() -> subprocess.Popen[bytes]:
    proc = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(600)"])
    yield proc  # type: ignore[misc]
    proc.kill()
    proc.wait()


def test_a_sandboxed_command_cannot_signal_a_host_process(shell: Shell, host_process: subprocess.Popen[bytes]) -> None:
    pid = str(host_process.pid)
    out = shell.structured("sh", {"program": "kill", "arguments": ["-9", pid]})
    assert out["exit_code"] != 0, out
    listed = shell.structured("sh", {"program": "ls", "arguments": ["/proc"]})
    assert pid not in listed["stdout"].split()
    assert host_process.poll() is None  # still running
