"""Agent runs see the images their tools return, and not the tools the person switched off."""

from __future__ import annotations

import base64
import subprocess
import sys
from pathlib import Path

from tests.chatmd.test_run_parity import png
from tests.support.openai_server import Reply, ScriptedOpenAI


def test_an_agent_run_sends_the_image_its_tool_returned(model_env: ScriptedOpenAI, root: Path, state_dir: Path) -> None:
    (root / "shot.png").write_bytes(png(4, 4))
    model_env.push(Reply.call(("import_image", {"path": "shot.png"})), Reply.answer("a grey screenshot"))
    out = subprocess.run(
        [sys.executable, "-m", "tooldeck", "call", "agent_run", '{"op": "start", "message": "look at shot.png"}',
         "--root", str(root), "--state-dir", str(state_dir)],
        capture_output=True, text=True, timeout=90,
    )  # fmt: skip
    assert out.returncode == 0, out.stderr
    assert "a grey screenshot" in out.stdout
    second = model_env.requests[1]["body"]["messages"]
    uri = "data:image/png;base64," + base64.b64encode(png(4, 4)).decode()
    sent = [p["image_url"]["url"] for m in second if m["role"] == "user" and isinstance(m["content"], list)
            for p in m["content"] if p["type"] == "image_url"]  # fmt: skip
    assert sent == [uri]


def test_a_tool_switched_off_for_serve_is_off_for_its_agent_sessions(
    model_env: ScriptedOpenAI, root: Path, state_dir: Path
) -> None:
    import os

    import anyio
    from mcp import ClientSession, StdioServerParameters, stdio_client

    (root / "a.txt").write_text("alpha\n")
    model_env.push(Reply.call(("read_file", {"file": "a.txt"})), Reply.answer("could not"))
    cmd = [sys.executable, "-m", "tooldeck", "serve", str(root), "--state-dir", str(state_dir),
           "--exclude-tools", "read_file"]  # fmt: skip

    async def scenario() -> None:
        params = StdioServerParameters(command=cmd[0], args=cmd[1:], env={**os.environ})
        async with stdio_client(params) as (r, w), ClientSession(r, w) as s:
            await s.initialize()
            names = {t.name for t in (await s.list_tools()).tools}
            assert "read_file" not in names and "agent_run" in names
            res = await s.call_tool("agent_run", {"op": "start", "message": "read a.txt"})
            assert not res.is_error

    anyio.run(scenario)
    tool_msgs = [m for m in model_env.requests[1]["body"]["messages"] if m["role"] == "tool"]
    assert "no tool named 'read_file'" in tool_msgs[0]["content"] and "alpha" not in tool_msgs[0]["content"]
    assert "read_file" not in {t["function"]["name"] for t in model_env.requests[0]["body"].get("tools", [])}
