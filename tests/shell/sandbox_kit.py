"""Helpers for the break-out tests of the sandbox itself: a runtime whose policy
lets everything through (the point is the sandbox holding, not the policy
stopping the attempt first) and host-side views of a sandboxed process."""

from __future__ import annotations

import glob
import os
import threading
import time
import uuid
from dataclasses import replace
from pathlib import Path

from tests.shell.shell_harness import Shell, dev_runtime
from tooldeck.core.toolbox import ToolResult
from tooldeck.shell.cgroup import parent as cgroup_parent
from tooldeck.shell.profiles import BUILTIN, Policy, ShellRuntime
from tooldeck.shell.spec import ShellToolSpec

OPEN = Policy(default="allow", raw="allow")


def open_dev() -> ShellRuntime:
    """The development profile (workspace read-write) with everything allowed."""
    return replace(dev_runtime(), id="open-dev", policy=OPEN)


def open_readonly() -> ShellRuntime:
    """The read-only profile (workspace read-only) with everything allowed."""
    return replace(BUILTIN["builtin:workspace-readonly@1"], id="open-ro", policy=OPEN)


def open_shell(root: Path, state: Path) -> Shell:
    """Tools ``sh`` (structured, stdin) and ``raw`` (``sh -c CODE``) on :func:`open_dev`;
    ``ro`` and ``rawro`` the same on :func:`open_readonly`."""
    dev, ro = open_dev(), open_readonly()
    s = Shell(root, state)
    s.add(ShellToolSpec(name="sh", mode="structured", runtime=dev.id, result="structured", stdin=True), dev)
    s.add(ShellToolSpec(name="raw", mode="raw", runtime=dev.id, command=("sh", "-c"), result="structured"), dev)
    s.add(ShellToolSpec(name="ro", mode="structured", runtime=ro.id, result="structured"), ro)
    s.add(ShellToolSpec(name="rawro", mode="raw", runtime=ro.id, command=("sh", "-c"), result="structured"), ro)
    return s


def py(code: str, *args: str) -> dict:
    return {"program": "python3", "arguments": ["-c", code, *args]}


def _cmdline(pid: str) -> list[bytes]:
    try:
        with open(f"/proc/{pid}/cmdline", "rb") as fh:
            return fh.read().split(b"\0")
    except OSError:
        return []


def find_sandboxed(token: str, program: str = "python3") -> list[int]:
    """Host pids of processes whose argv[0] is ``program`` (not bwrap, not a shell) and
    whose command line holds ``token``."""
    found = []
    for pid in os.listdir("/proc"):
        if not pid.isdigit():
            continue
        argv = _cmdline(pid)
        if argv and os.path.basename(argv[0]).decode(errors="replace").startswith(program) and token.encode() in argv:
            found.append(int(pid))
    return found


def host_status(pid: int) -> dict[str, str]:
    with open(f"/proc/{pid}/status", encoding="utf-8") as fh:
        return dict(line.rstrip("\n").split(":\t", 1) for line in fh if ":\t" in line)


def status_while_running(shell: Shell, tool: str, root: Path) -> tuple[dict[str, str], ToolResult]:
    """Run a waiting python3 in the sandbox, read its /proc/PID/status on the host,
    then let it finish; the status and the call's result."""
    token = uuid.uuid4().hex
    go = root / f"go-{token}"
    code = f"import os, time\nwhile not os.path.exists({go.name!r}):\n    time.sleep(0.02)"
    result: list[ToolResult] = []
    thread = threading.Thread(target=lambda: result.append(shell.call(tool, py(code, token))))
    thread.start()
    try:
        deadline = time.monotonic() + 10
        pids: list[int] = []
        while not pids and time.monotonic() < deadline:
            pids = find_sandboxed(token)
            time.sleep(0.02)
        assert pids, "the sandboxed process never appeared on the host"
        status = host_status(pids[0])
    finally:
        go.write_text("")
        thread.join(20)
    return status, result[0]


def run_cgroups() -> list[str]:
    """Run cgroups of this process on the host, under the pids cgroup runs are made in."""
    base = cgroup_parent()
    return glob.glob(str(base / f"tooldeck-{os.getpid()}-*")) if base is not None else []
