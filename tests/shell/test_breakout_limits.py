"""Break-out attempts at the limits: fork bombs are bounded, and whatever a call
did, no process and no cgroup of it is left on the host afterwards.

Checked on the host: ``/proc/*/cmdline`` for a unique token, and the pids
cgroup directory runs are made in (``/sys/fs/cgroup/...``). As root the
bound is the run's pids cgroup; unprivileged (no writable cgroup) it is
RLIMIT_NPROC inside the sandbox's user namespace.
"""

from __future__ import annotations

import uuid
from dataclasses import replace
from pathlib import Path

from tests.shell.sandbox_kit import open_dev, open_readonly, py, run_cgroups
from tests.shell.shell_harness import Shell, needs_bwrap
from tests.shell.test_limits import wait_gone
from tooldeck.shell.spec import ShellToolSpec

pytestmark = needs_bwrap


def bomb_shell(root: Path, state: Path, processes: int = 24) -> Shell:
    rt = open_dev()
    rt = replace(rt, limits=replace(rt.limits, wall_seconds=2.0, idle_seconds=2.0, processes=processes))
    s = Shell(root, state)
    s.add(ShellToolSpec(name="sh", mode="structured", runtime=rt.id, result="structured"), rt)
    return s.add(ShellToolSpec(name="raw", mode="raw", runtime=rt.id, command=("sh", "-c"), result="structured"), rt)


def test_python_fork_bomb_is_bounded_and_leaves_nothing(root: Path, state_dir: Path) -> None:
    token = uuid.uuid4().hex
    s = bomb_shell(root, state_dir)
    code = (f"import os,time\nn=0\ntry:\n    while True:\n        if os.fork()==0:\n"
            f"            time.sleep(30)  # {token}\n            os._exit(0)\n        n+=1\n"
            "except OSError as e:\n    print('forks', n, e.errno, flush=True)\ntime.sleep(30)")  # fmt: skip
    out = s.structured("sh", py(code, token))
    assert out["limit"] in ("wall", "idle")
    assert out["stdout"].startswith("forks"), out
    assert int(out["stdout"].split()[1]) < 24
    assert run_cgroups() == []  # removed before the call returned
    assert wait_gone(token) == []


def test_shell_fork_bomb_leaves_no_cgroup_and_no_process(root: Path, state_dir: Path) -> None:
    token = uuid.uuid4().hex
    s = bomb_shell(root, state_dir, processes=16)
    out = s.structured("raw", {"code": f"f(){{ f | f & }}; f; : {token}; sleep 30"})
    assert out["limit"] in ("wall", "idle") or out["exit_code"] is not None
    assert run_cgroups() == []
    assert wait_gone(token) == []


def test_a_thousand_threads_are_bounded_too(root: Path, state_dir: Path) -> None:
    """Threads count against the same bound as processes (cgroup pids, RLIMIT_NPROC)."""
    s = bomb_shell(root, state_dir, processes=20)
    code = ("import threading,time\nn=0\ntry:\n    for _ in range(1000):\n"
            "        threading.Thread(target=time.sleep, args=(5,), daemon=True).start(); n+=1\n"
            "except RuntimeError:\n    pass\nprint('threads', n)")  # fmt: skip
    out = s.structured("sh", py(code))
    assert int(out["stdout"].split()[1]) < 20, out
    assert run_cgroups() == []


def test_no_cgroup_is_left_after_any_of_twenty_fork_bombs(root: Path, state_dir: Path) -> None:
    """A fork bomb that ends at once: the kernel may still be tearing the tree down when
    the call closes its cgroup (one in five, before the fix, left it for a thread)."""
    rt = open_readonly()
    s = Shell(root, state_dir).add(ShellToolSpec(name="raw", mode="raw", runtime=rt.id, command=("sh", "-c")), rt)
    left = []
    for _ in range(20):
        s.call("raw", {"code": "f(){ f|f& }; f"})
        left += run_cgroups()
    assert left == []
