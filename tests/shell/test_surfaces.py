"""The shell tool through the real surfaces: `tooldeck call` as a subprocess and
`tooldeck serve` spoken to with the MCP SDK client (elicitation for `ask`, progress)."""

from __future__ import annotations

import asyncio
import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import mcp_types as types
import pytest
from mcp import ClientSession, StdioServerParameters, stdio_client

from tests.shell.shell_harness import needs_bwrap
from tests.support.trust import write_approved

pytestmark = needs_bwrap

ASKING = """
[shell.runtimes.default]
extends = "builtin:workspace-development@1"
[shell.runtimes.default.policy]
default = "ask"
rules = [{ id = "no-rm", action = "deny", basename = "rm" }]
"""


def env_for(state: Path) -> dict[str, str]:
    return {**os.environ, "TOOLDECK_STATE_DIR": str(state), "TOOLDECK_CONFIG": str(state / "no-user-config.toml")}


def cli(root: Path, state: Path, tool: str, args: dict) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "tooldeck", "call", tool, json.dumps(args), "--root", str(root),
         "--state-dir", str(state)],
        capture_output=True, text=True, timeout=60, stdin=subprocess.DEVNULL, env=env_for(state),
    )  # fmt: skip


def test_cli_default_tool_is_read_only(root: Path, state_dir: Path) -> None:
    (root / "a.txt").write_text("hello\n")
    done = cli(root, state_dir, "shell", {"program": "cat", "arguments": ["a.txt"]})
    assert done.returncode == 0, done.stderr
    assert done.stdout.startswith("hello\n") and "[exit 0" in done.stdout
    done = cli(root, state_dir, "shell", {"program": "touch", "arguments": ["b.txt"]})
    assert done.returncode == 1 and "error [denied]" in done.stderr and "nobody can be asked" in done.stderr
    assert not (root / "b.txt").exists()
    assert (state_dir / "shell-audit.jsonl").exists()


def test_cli_with_a_project_config(root: Path, state_dir: Path) -> None:
    write_approved(
        root,
        state_dir,
        """
[shell.runtimes.build]
extends = "builtin:workspace-development@1"
[shell.runtimes.build.policy]
default = "allow"
[shell.tools.run]
mode = "chain"
runtime = "build"
result = "structured"
[shell.tools.py_version]
mode = "fixed"
runtime = "build"
command = "python3 --version"
"""
    )
    done = cli(root, state_dir, "run", {"command": "touch made && ls -A"})
    assert done.returncode == 0, done.stderr
    # .git and HEAD: the read-only placeholders of a root without a repository (gitguard), and those of
    # the agent-client configuration it lacks; all gone afterwards
    placeholders = [".claude", ".claude.json", ".codex", ".cursor", ".gemini", ".git", ".mcp.json", ".vscode", "HEAD"]
    assert json.loads(done.stdout)["stdout"].split() == sorted([*placeholders, ".tooldeck.toml", "made"])
    assert sorted(p.name for p in root.iterdir()) == [".tooldeck.toml", "made"]
    done = cli(root, state_dir, "py_version", {})
    assert done.returncode == 0 and done.stdout.startswith("Python 3"), done.stderr


def test_cli_bad_config_is_reported(root: Path, state_dir: Path) -> None:
    body = '[shell.runtimes.x]\nextends = "builtin:workspace-readonly@1"\nnetwrok = 1\n'
    (root / ".tooldeck.toml").write_text(body)  # not approved: ignored, the default shell works
    done = cli(root, state_dir, "shell", {"program": "ls", "arguments": ["-A"]})
    assert done.returncode == 0 and ".tooldeck.toml" in done.stdout, done.stderr
    assert "shell runtime `x`" in done.stderr and "tooldeck trust allow" in done.stderr
    write_approved(root, state_dir, body)  # approved: the person's mistake, named
    done = cli(root, state_dir, "shell", {})
    assert done.returncode == 1 and "error [unsupported]" in done.stderr and "netwrok" in done.stderr
    done = cli(root, state_dir, "read_file", {"path": ".tooldeck.toml"})  # the other tools still work
    assert done.returncode == 0 and "netwrok" in done.stdout


async def _serve(root: Path, state: Path, callback: Any, body: Any) -> Any:
    params = StdioServerParameters(
        command=sys.executable,
        args=["-m", "tooldeck", "serve", str(root), "--state-dir", str(state)],
        env=env_for(state),
    )
    async with stdio_client(params) as (read, write), ClientSession(read, write, elicitation_callback=callback) as s:
        await s.initialize()
        return await body(s)


def _text(result: types.CallToolResult) -> str:
    return "".join(c.text for c in result.content if isinstance(c, types.TextContent))


def test_mcp_elicitation_answers_ask(root: Path, state_dir: Path) -> None:
    write_approved(root, state_dir, ASKING)
    answers = ["once", "deny", "session"]
    messages: list[str] = []

    async def on_elicit(context: Any, params: types.ElicitRequestParams) -> types.ElicitResult:
        messages.append(params.message)
        decision = answers.pop(0)
        return types.ElicitResult(action="accept", content={"decision": decision})

    async def body(s: ClientSession) -> list[types.CallToolResult]:
        calls = [
            {"program": "touch", "arguments": ["once"], "rationale": "marker"},  # once
            {"program": "touch", "arguments": ["denied"]},  # deny
            {"program": "touch", "arguments": ["sess"]},  # session
            {"program": "touch", "arguments": ["sess"]},  # remembered: no elicitation
            {"program": "rm", "arguments": ["once"]},  # deny rule: never asked
        ]
        return [await s.call_tool("shell", c) for c in calls]

    results = asyncio.run(_serve(root, state_dir, on_elicit, body))
    assert [r.is_error for r in results] == [False, True, False, False, True]
    assert "declined" in _text(results[1]) and "no-rm" in _text(results[4])
    assert len(messages) == 3 and "touch once" in messages[0] and "marker" in messages[0]
    assert (root / "once").exists() and (root / "sess").exists() and not (root / "denied").exists()


def test_mcp_client_without_elicitation_is_denied(root: Path, state_dir: Path) -> None:
    write_approved(root, state_dir, ASKING)

    async def body(s: ClientSession) -> types.CallToolResult:
        return await s.call_tool("shell", {"program": "touch", "arguments": ["x"]})

    result = asyncio.run(_serve(root, state_dir, None, body))
    assert result.is_error and "nobody can be asked" in _text(result)
    assert not (root / "x").exists()


def test_mcp_progress_streams_output(root: Path, state_dir: Path) -> None:
    write_approved(root, state_dir, ASKING.replace('default = "ask"', 'default = "allow"'))
    progress: list[str] = []

    async def on_progress(done: float, total: float | None, message: str | None) -> None:
        progress.append(message or "")

    async def body(s: ClientSession) -> types.CallToolResult:
        code = "import time\nfor i in range(3):\n    print('line', i, flush=True); time.sleep(0.1)"
        return await s.call_tool("shell", {"program": "python3", "arguments": ["-c", code]},
                                 progress_callback=on_progress)  # fmt: skip

    result = asyncio.run(_serve(root, state_dir, None, body))
    assert not result.is_error and "line 2" in _text(result)
    assert any(m.startswith("stdout: line 0") for m in progress), progress


@pytest.mark.parametrize("tool", ["shell"])
def test_mcp_lists_the_shell_tool(root: Path, state_dir: Path, tool: str) -> None:
    async def body(s: ClientSession) -> list[types.Tool]:
        return (await s.list_tools()).tools

    tools = {t.name: t for t in asyncio.run(_serve(root, state_dir, None, body))}
    assert tool in tools
    schema = tools[tool].input_schema
    assert set(schema["properties"]) >= {"program", "arguments", "cwd", "rationale", "stdin"}
    assert "builtin:workspace-readonly@1" in (tools[tool].description or "")


def test_mcp_elicitation_over_streamable_http(root: Path, state_dir: Path) -> None:
    import socket
    import time

    import httpx2
    from mcp.client.streamable_http import streamable_http_client

    write_approved(root, state_dir, ASKING)
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port = sock.getsockname()[1]
    cmd = [sys.executable, "-m", "tooldeck", "serve", str(root), "--state-dir", str(state_dir), "--http",
           f"127.0.0.1:{port}"]  # fmt: skip
    proc = subprocess.Popen(cmd, stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
                            env=env_for(state_dir))  # fmt: skip
    asked: list[str] = []

    async def on_elicit(context: Any, params: types.ElicitRequestParams) -> types.ElicitResult:
        asked.append(params.message)
        return types.ElicitResult(action="accept", content={"decision": "once"})

    async def go() -> types.CallToolResult:
        async with (
            httpx2.AsyncClient(timeout=30) as client,
            streamable_http_client(f"http://127.0.0.1:{port}/mcp", http_client=client) as (read, write),
            ClientSession(read, write, elicitation_callback=on_elicit) as s,
        ):
            await s.initialize()
            return await s.call_tool("shell", {"program": "touch", "arguments": ["via-http"]})

    try:
        deadline = time.monotonic() + 90
        while time.monotonic() < deadline:
            with socket.socket() as probe:
                if probe.connect_ex(("127.0.0.1", port)) == 0:
                    break
            time.sleep(0.05)
        result = asyncio.run(go())
    finally:
        proc.terminate()
        proc.wait(10)
    assert not result.is_error, _text(result)
    assert len(asked) == 1 and "touch via-http" in asked[0]
    assert (root / "via-http").exists()
