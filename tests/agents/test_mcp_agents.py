"""agent_run / agent_manage over MCP: `python -m tooldeck serve` spawned with
OPENAI_BASE_URL pointing at the scripted server, driven by the SDK client."""

from __future__ import annotations

import asyncio
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import anyio
import pytest
from mcp import ClientSession, StdioServerParameters, stdio_client

from tests.support.openai_server import Reply, ScriptedOpenAI

pytestmark = pytest.mark.timeout(120)


def serve_params(root: Path, state: Path) -> StdioServerParameters:
    cmd = [sys.executable, "-m", "tooldeck", "serve", str(root), "--state-dir", str(state)]
    return StdioServerParameters(command=cmd[0], args=cmd[1:], env={**os.environ, "TOOLDECK_STATE_DIR": str(state)})


async def structured(s: ClientSession, name: str, args: dict[str, Any], **kw: Any) -> dict[str, Any]:
    res = await s.call_tool(name, args, **kw)
    assert not res.is_error, res.content
    assert res.structured_content is not None
    return res.structured_content


def test_start_wait_with_progress_and_restart_recovery(model_env: ScriptedOpenAI, root: Path, state_dir: Path) -> None:
    (root / "notes.md").write_text("the answer is 42\n")
    answer = model_env.gate()  # the second answer waits until the client has seen a progress report
    model_env.push(Reply.call(("read_file", {"file": "notes.md"})), Reply(text="it says 42", gate=answer))

    async def first_server() -> str:
        async with stdio_client(serve_params(root, state_dir)) as (r, w), ClientSession(r, w) as s:
            await s.initialize()
            names = {t.name for t in (await s.list_tools()).tools}
            assert {"agent_run", "agent_manage"} <= names
            snap = await structured(s, "agent_run", {"op": "start", "message": "read notes", "detach": True})
            assert snap["status"] == "running"
            seen: list[str | None] = []

            async def on_progress(progress: float, total: float | None, message: str | None) -> None:
                seen.append(message)
                if message and "waiting" in message:
                    answer.set()

            # other tools answer while the session runs
            tree = await s.call_tool("get_file_tree", {})
            assert not tree.is_error
            done = await structured(s, "agent_run", {"op": "wait", "session_id": snap["session_id"], "timeout": 20},
                                    progress_callback=on_progress)  # fmt: skip
            assert done["status"] == "completed" and done["assistant_text"] == "it says 42"
            assert any(m and "waiting" in m for m in seen), seen
            # a second session left running when the server goes away
            model_env.push(Reply(text="never delivered", delay=30))
            hang = await structured(s, "agent_run", {"op": "start", "message": "hang", "detach": True})
            await asyncio.sleep(0.3)
            return str(hang["session_id"])

    hung = anyio.run(first_server)

    async def second_server() -> None:
        async with stdio_client(serve_params(root, state_dir)) as (r, w), ClientSession(r, w) as s:
            await s.initialize()
            snap = await structured(s, "agent_run", {"op": "poll", "session_id": hung})
            assert snap["status"] == "failed" and snap["failure_reason"] == "process_crash"
            log = await structured(s, "agent_manage", {"op": "get_log", "session_id": hung})
            assert "<user seq=\"1\">hang</user>" in log["transcript_xml"]
            sessions = (await structured(s, "agent_manage", {"op": "list_sessions"}))["sessions"]
            assert {x["status"] for x in sessions} == {"completed", "failed"}

    anyio.run(second_server)


def test_cli_call_reports_a_seed_snapshot(model_env: ScriptedOpenAI, root: Path, state_dir: Path) -> None:
    model_env.push(Reply.answer("from the cli"))
    out = subprocess.run(
        [sys.executable, "-m", "tooldeck", "call", "agent_run", '{"op": "start", "message": "hi"}', "--root",
         str(root), "--state-dir", str(state_dir)],
        capture_output=True, text=True, timeout=60,
    )  # fmt: skip
    assert out.returncode == 0, out.stderr
    assert "completed" in out.stdout and "from the cli" in out.stdout
