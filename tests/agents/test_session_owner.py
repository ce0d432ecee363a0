"""Who owns a running agent session: a process that starts (a CLI call, a
second server) marks as ``process_crash`` only the sessions whose owner is
gone, never those of another live process, and a pid reused by some other
process is not taken for the owner (the owner's start time is recorded with it)."""

from __future__ import annotations

import subprocess
import sys
import uuid
from collections.abc import Iterator
from pathlib import Path

import anyio
import pytest
from mcp import ClientSession, stdio_client

from tests.agents.test_mcp_agents import serve_params, structured
from tests.support.openai_server import Reply, ScriptedOpenAI
from tooldeck.agents.manager import SessionManager
from tooldeck.runtime import Runtime
from tooldeck.state.agent_sessions import AgentDB, process_start

pytestmark = pytest.mark.timeout(180)


@pytest.fixture
def live_process() -> Iterator[subprocess.Popen[bytes]]:
    """Another live process of this machine (the owner the tests pretend)."""
    proc = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(600)"])
    yield proc
    proc.kill()
    proc.wait()


def _running(rt: Runtime, **owner: int | None) -> str:
    sid = str(uuid.uuid4())
    AgentDB(rt.store).create(sid, "elsewhere", status="running", status_text="calling read_file", runs=1, **owner)
    return sid


def test_process_start_names_one_process(live_process: subprocess.Popen[bytes]) -> None:
    start = process_start(live_process.pid)
    assert start is not None and start == process_start(live_process.pid)
    assert process_start(live_process.pid) != process_start(1) or live_process.pid == 1
    live_process.kill()
    live_process.wait()
    assert process_start(live_process.pid) is None


def test_a_live_owner_keeps_its_session(
    root: Path, state_dir: Path, model_env: ScriptedOpenAI, live_process: subprocess.Popen[bytes]
) -> None:
    rt = Runtime.for_dirs([root], state_dir=state_dir)
    pid = live_process.pid
    sid = _running(rt, owner_pid=pid, owner_start=process_start(pid))
    legacy = _running(rt, owner_pid=pid)  # a row from before the start time was recorded
    assert SessionManager(rt).recovered == []
    assert AgentDB(rt.store).get(sid).status == "running"  # type: ignore[union-attr]
    live_process.kill()
    live_process.wait()
    assert sorted(SessionManager(rt).recovered) == sorted([sid, legacy])  # gone now: interrupted


def test_a_reused_pid_is_not_the_owner(
    root: Path, state_dir: Path, model_env: ScriptedOpenAI, live_process: subprocess.Popen[bytes]
) -> None:
    """The recorded owner died and its pid now belongs to another live process
    (here: a live pid with another start time), or to this very process."""
    import os

    rt = Runtime.for_dirs([root], state_dir=state_dir)
    pid = live_process.pid
    reused = _running(rt, owner_pid=pid, owner_start=process_start(pid) - 1)  # type: ignore[operator]
    mine = _running(rt, owner_pid=os.getpid(), owner_start=process_start(os.getpid()) - 7)  # type: ignore[operator]
    assert sorted(SessionManager(rt).recovered) == sorted([reused, mine])
    row = AgentDB(rt.store).get(reused)
    assert row is not None and row.status == "failed" and row.failure_reason == "process_crash"


def test_a_cli_call_while_a_server_runs_leaves_its_session_running(
    model_env: ScriptedOpenAI, root: Path, state_dir: Path
) -> None:
    model_env.push(Reply(text="late", delay=60))  # the session stays running while the test looks

    async def scenario() -> None:
        async with stdio_client(serve_params(root, state_dir)) as (r, w), ClientSession(r, w) as s:
            await s.initialize()
            snap = await structured(s, "agent_run", {"op": "start", "message": "take your time", "detach": True})
            sid = str(snap["session_id"])
            for _ in range(200):  # the run has reached the model (an event, not a time)
                if model_env.requests:
                    break
                await anyio.sleep(0.05)
            assert model_env.requests, "the session never called the model"
            cli = await anyio.run_process(
                [sys.executable, "-m", "tooldeck", "call", "agent_manage", '{"op": "list_sessions"}', "--root",
                 str(root), "--state-dir", str(state_dir)],
                check=False,
            )  # fmt: skip
            assert cli.returncode == 0, cli.stderr.decode()
            listed = cli.stdout.decode()
            assert any(sid in line and "running" in line for line in listed.splitlines()), listed
            assert "process_crash" not in listed
            again = await structured(s, "agent_run", {"op": "poll", "session_id": sid})
            assert again["status"] == "running", again
            await structured(s, "agent_run", {"op": "cancel", "session_id": sid})

    anyio.run(scenario)


def test_a_session_of_another_live_owner_is_not_deleted(
    root: Path, state_dir: Path, model_env: ScriptedOpenAI, live_process: subprocess.Popen[bytes]
) -> None:
    """``agent_manage delete`` from a second process (a CLI call beside the
    server) answers ``active`` for a session another live process runs; once
    that owner is gone (the session interrupted), it is deleted."""
    rt = Runtime.for_dirs([root], state_dir=state_dir)
    pid = live_process.pid
    sid = _running(rt, owner_pid=pid, owner_start=process_start(pid))
    manager = SessionManager(rt)
    assert manager.delete(sid) == "active"
    assert AgentDB(rt.store).get(sid) is not None
    live_process.kill()
    live_process.wait()
    assert manager.delete(sid) == "deleted"
    assert AgentDB(rt.store).get(sid) is None
