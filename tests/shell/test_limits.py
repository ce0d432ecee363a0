"""Limits end the whole process tree: wall and idle time, floods, forks, SIGTERM, orphans.

Whether a process survived is checked on the host by a unique token in its
command line (``/proc/*/cmdline``), so a process that escaped its group or
namespace would be found.
"""

from __future__ import annotations

import asyncio
import os
import time
import uuid
from dataclasses import replace
from pathlib import Path

import pytest

from tests.shell.shell_harness import Shell, dev_runtime, needs_bwrap, needs_cgroup
from tooldeck.core.invocation import Invocation
from tooldeck.shell.profiles import Sandbox
from tooldeck.shell.spec import ShellToolSpec

pytestmark = needs_bwrap


def survivors(token: str) -> list[int]:
    found = []
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        try:
            with open(f"/proc/{entry}/cmdline", "rb") as fh:
                if token.encode() in fh.read():
                    found.append(int(entry))
        except OSError:
            continue
    return found


def wait_gone(token: str, timeout: float = 20.0) -> list[int]:
    deadline = time.monotonic() + timeout
    while survivors(token) and time.monotonic() < deadline:
        time.sleep(0.05)
    return survivors(token)


def limited(root: Path, state: Path, *, sandbox: bool = True, **limits: float) -> Shell:
    rt = dev_runtime(**limits)
    if not sandbox:
        rt = replace(rt, sandbox=replace(rt.sandbox, mode="off"))
    spec = ShellToolSpec(name="sh", mode="structured", runtime=rt.id, result="structured", stdin=True)
    return Shell(root, state).add(spec, rt).add(ShellToolSpec(name="ch", mode="chain", runtime=rt.id), rt)


def py(code: str) -> dict:
    return {"program": "python3", "arguments": ["-c", code]}


def sleeper(token: str) -> dict:
    """A process that sleeps with ``token`` in its command line."""
    return {"program": "python3", "arguments": ["-c", "import time; time.sleep(30)", token]}


def test_wall_time_kills_the_tree(root: Path, state_dir: Path) -> None:
    token = uuid.uuid4().hex
    s = limited(root, state_dir, wall_seconds=1.0)
    start = time.monotonic()
    out = s.structured("sh", py(f"import subprocess,time\nsubprocess.Popen(['sleep','30','{token}'])\n"
                                "while True:\n    print('tick', flush=True); time.sleep(0.2)"))  # fmt: skip
    assert out["limit"] == "wall" and "wall-time" in out["limit_message"]
    assert time.monotonic() - start < 15  # the 1 s limit with headroom; the tree would run 30 s
    assert wait_gone(token) == []


def test_idle_time_kills_a_silent_command(root: Path, state_dir: Path) -> None:
    s = limited(root, state_dir, idle_seconds=0.5)
    start = time.monotonic()
    out = s.structured("sh", {"program": "sleep", "arguments": ["30"]})
    assert out["limit"] == "idle" and out["exit_code"] is None
    assert time.monotonic() - start < 10  # the 0.5 s limit with headroom; sleep would run 30 s


def test_a_process_ignoring_sigterm_is_killed(root: Path, state_dir: Path) -> None:
    token = uuid.uuid4().hex
    s = limited(root, state_dir, wall_seconds=0.8)
    code = (f"import signal,time\nsignal.signal(signal.SIGTERM, signal.SIG_IGN)\nprint('{token}', flush=True)\n"
            "time.sleep(30)")  # fmt: skip
    out = s.structured("sh", py(code))
    assert out["limit"] == "wall"
    assert wait_gone(token) == []


@pytest.mark.parametrize("sandbox", [True, pytest.param(False, marks=needs_cgroup)])
def test_a_grandchild_does_not_outlive_its_parent(root: Path, state_dir: Path, sandbox: bool) -> None:
    token = uuid.uuid4().hex
    s = limited(root, state_dir, sandbox=sandbox)
    start = time.monotonic()
    code = (f"import subprocess\nsubprocess.Popen(['python3', '-c', 'import time; time.sleep(30)', '{token}'], "
            "start_new_session=True, stdout=subprocess.DEVNULL)\nprint('parent done')")  # fmt: skip
    out = s.structured("sh", py(code))
    assert out["exit_code"] == 0 and "parent done" in out["stdout"]
    assert time.monotonic() - start < 15  # not held by the grandchild's 30 s
    assert wait_gone(token) == []


@needs_cgroup
def test_fork_bomb_is_bounded(root: Path, state_dir: Path) -> None:
    token = uuid.uuid4().hex
    s = limited(root, state_dir, wall_seconds=2.0, processes=24)
    code = (f"import os,time\nn=0\ntry:\n    while True:\n        if os.fork()==0:\n"
            f"            time.sleep(30)  # {token}\n            os._exit(0)\n        n+=1\n"
            "except OSError as e:\n    print('forks', n, e.errno, flush=True)\ntime.sleep(30)")  # fmt: skip
    out = s.structured("sh", py(code))
    assert out["pids_limit_reached"] is True
    forks = int(out["stdout"].split()[1])
    assert forks < 24
    assert out["limit"] == "wall"
    assert wait_gone(token) == []


def test_output_flood_is_held_to_the_limit(root: Path, state_dir: Path) -> None:
    s = limited(root, state_dir, output_bytes=2000)
    size = 20_000_000
    out = s.structured("sh", py(f"import sys\nsys.stdout.write('head\\n' + 'x' * {size} + '\\ntail\\n')"))
    assert out["truncated"]["stdout"] is True
    assert out["bytes"]["stdout"] == size + 11
    assert len(out["stdout"]) < 2200 and "bytes elided" in out["stdout"]
    assert out["stdout"].startswith("head") and out["stdout"].rstrip().endswith("tail")


def test_toolbox_timeout_kills_the_tree(root: Path, state_dir: Path) -> None:
    token = uuid.uuid4().hex
    s = limited(root, state_dir, wall_seconds=60, idle_seconds=60)
    start = time.monotonic()
    res = s.box.call_sync("sh", sleeper(token), timeout=0.7)
    assert res.is_error and res.error is not None and res.error.code == "timeout"
    assert time.monotonic() - start < 10  # the 0.7 s timeout with headroom; the sleeper would run 30 s
    assert wait_gone(token) == []


def test_cancelling_the_call_kills_the_tree(root: Path, state_dir: Path) -> None:
    token = uuid.uuid4().hex
    s = limited(root, state_dir, wall_seconds=60, idle_seconds=60)

    async def scenario() -> None:
        inv = Invocation.silent()
        task = asyncio.ensure_future(s.box.call("sh", sleeper(token), invocation=inv))
        await asyncio.sleep(0.5)
        assert survivors(token)
        inv.cancel()
        res = await asyncio.wait_for(task, 5)
        assert res.is_error and res.error is not None and res.error.code == "cancelled"

    asyncio.run(scenario())
    assert wait_gone(token) == []


def test_output_streams_as_it_comes(root: Path, state_dir: Path) -> None:
    s = limited(root, state_dir)
    seen: list[tuple[float, str]] = []
    inv = Invocation.create(lambda p: seen.append((time.monotonic(), p.update.text)))
    start = time.monotonic()
    res = s.box.call_sync("sh", py("import time\nprint('first', flush=True)\ntime.sleep(1)\nprint('second')"),
                          invocation=inv)  # fmt: skip
    end = time.monotonic()
    assert not res.is_error
    first = next(t for t, text in seen if "first" in text)
    assert first - start < end - start - 0.6  # delivered well before the command finished


def test_stdin_is_passed_and_limited(root: Path, state_dir: Path) -> None:
    s = limited(root, state_dir, stdin_bytes=100)
    out = s.structured("sh", {"program": "wc", "arguments": ["-c"], "stdin": "hello"})
    assert out["stdout"].strip() == "5"
    res = s.call("sh", {"program": "cat", "stdin": "x" * 101})
    assert res.is_error and res.error is not None and res.error.code == "too_large"


def test_pipefail(root: Path, state_dir: Path) -> None:
    s = limited(root, state_dir)
    assert "[exit 1" in s.call("ch", {"command": "false | true"}).text
    rt = replace(dev_runtime(), id="nopf", pipefail=False)
    s.add(ShellToolSpec(name="ch2", mode="chain", runtime="nopf"), rt)
    assert "[exit 0" in s.call("ch2", {"command": "false | true"}).text


def test_sequences_follow_exit_codes(root: Path, state_dir: Path) -> None:
    s = limited(root, state_dir)
    text = s.call("ch", {"command": "false && echo A; echo B || echo C; false || echo D"}).text
    assert "A" not in text and "B" in text and "C" not in text and "D" in text


def test_sandbox_required_but_missing_refuses(root: Path, state_dir: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("PATH", "/nonexistent")
    monkeypatch.setattr("tooldeck.shell.sandbox.bwrap_path", lambda: None)
    s = limited(root, state_dir)
    res = s.call("sh", {"program": "touch", "arguments": ["ran"]})
    assert res.is_error and res.error is not None and res.error.code == "sandbox_unavailable"
    assert "refusing" in res.error.message or "not installed" in res.error.message
    assert not (root / "ran").exists()


def test_sandbox_that_fails_refuses(
    root: Path, state_dir: Path, monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    fake = tmp_path / "bwrap"
    fake.write_text("#!/bin/sh\necho 'bwrap: No permissions to create new namespace' >&2\nexit 1\n")
    fake.chmod(0o755)
    monkeypatch.setattr("tooldeck.shell.sandbox.bwrap_path", lambda: str(fake))
    s = limited(root, state_dir)
    res = s.call("sh", {"program": "touch", "arguments": ["ran"]})
    assert res.is_error and res.error is not None and res.error.code == "sandbox_unavailable"
    assert "namespace" in res.error.message
    assert not (root / "ran").exists()


def test_unsandboxed_runtime_is_said_in_the_description(root: Path, state_dir: Path) -> None:
    rt = replace(dev_runtime(), sandbox=Sandbox(mode="off"))
    s = Shell(root, state_dir).add(ShellToolSpec(name="u", mode="structured", runtime=rt.id), rt)
    tool = s.box.get("u")
    assert tool is not None and "NOT sandboxed" in tool.description


@needs_cgroup
def test_read_only_profile_keeps_child_processes_to_a_handful(root: Path, state_dir: Path) -> None:
    from tooldeck.shell.profiles import BUILTIN, Policy

    rt = replace(BUILTIN["builtin:workspace-readonly@1"], policy=Policy(default="allow"))
    s = Shell(root, state_dir).add(ShellToolSpec(name="ro", mode="structured", runtime=rt.id, result="structured"), rt)
    code = (
        "import os,time\nn=0\ntry:\n    for _ in range(50):\n        if os.fork()==0:\n            time.sleep(2)\n"
        "            os._exit(0)\n        n+=1\nexcept OSError:\n    pass\nprint(n, flush=True)"
    )
    out = s.structured("ro", py(code))
    assert out["pids_limit_reached"] is True and int(out["stdout"]) < 8


@needs_cgroup
def test_the_process_limit_message_names_the_limit_that_applied(root: Path, state_dir: Path) -> None:
    """child_processes off: 4 + 4 per stage = 8 here, not the runtime's 64."""
    from tooldeck.shell.profiles import BUILTIN, Policy

    rt = replace(BUILTIN["builtin:workspace-readonly@1"], policy=Policy(default="allow"))
    s = Shell(root, state_dir).add(ShellToolSpec(name="ro", mode="structured", runtime=rt.id), rt)
    code = "import os,time\ntry:\n    for _ in range(50):\n        if os.fork()==0:\n            time.sleep(2)\n" \
           "            os._exit(0)\nexcept OSError:\n    pass"
    text = s.call("ro", py(code)).text
    assert "process limit (8) reached" in text, text
