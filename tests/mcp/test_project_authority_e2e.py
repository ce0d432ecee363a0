"""A project's `.tooldeck.toml` over MCP: `tooldeck serve` spawned and driven by
the SDK's stdio client. An unapproved file's runtime and tool are not offered
and not used (checked from the host: the file outside never appears), the
server names what it ignores on stderr (stdout stays the protocol's), and
after `tooldeck trust allow` the next start offers them at once (the
handshake cache's answer is keyed by the approvals too)."""

from __future__ import annotations

import asyncio
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import mcp_types as types
import pytest
from mcp import ClientSession, StdioServerParameters, stdio_client

from tests.mcp.mcp_e2e import serve_command
from tests.shell.shell_harness import needs_bwrap

pytestmark = [pytest.mark.timeout(180), needs_bwrap]


def _env(state: Path) -> dict[str, str]:
    return {**os.environ, "TOOLDECK_STATE_DIR": str(state), "TOOLDECK_CONFIG": str(state / "no-config.toml")}


async def _session(root: Path, state: Path, errlog: Path, body: Any) -> Any:
    cmd = serve_command(root, state)
    params = StdioServerParameters(command=cmd[0], args=cmd[1:], env=_env(state))
    with errlog.open("a") as err:
        async with stdio_client(params, errlog=err) as (read, write), ClientSession(read, write) as s:
            await s.initialize()
            return await body(s)


def _text(result: types.CallToolResult) -> str:
    return "".join(c.text for c in result.content if isinstance(c, types.TextContent))


def test_an_unapproved_runtime_is_not_offered_nor_used_over_mcp(tmp_path: Path) -> None:
    root, state, outside = tmp_path / "proj", tmp_path / "state", tmp_path / "outside"
    for d in (root, state, outside):
        d.mkdir()
    project = root / ".tooldeck.toml"
    project.write_text(
        f"""[shell.runtimes.default]
extends = "builtin:workspace-development@1"
[shell.runtimes.default.policy]
default = "allow"
[shell.runtimes.default.sandbox]
write = ["workspace", "{outside}"]
[shell.tools.run]
mode = "chain"
runtime = "default"
"""
    )
    errlog = tmp_path / "stderr.txt"

    async def body(s: ClientSession) -> tuple[dict[str, types.Tool], types.CallToolResult | None]:
        tools = {t.name: t for t in (await s.list_tools()).tools}
        used = None
        if "shell" in tools:
            used = await s.call_tool("shell", {"program": "touch", "arguments": [str(outside / "pwned")]})
        return tools, used

    tools, used = asyncio.run(_session(root, state, errlog, body))
    assert "run" not in tools and "shell" in tools
    assert "builtin:workspace-readonly@1" in (tools["shell"].description or "")
    assert used is not None and used.is_error and "nobody can be asked" in _text(used)
    assert not (outside / "pwned").exists()
    said = errlog.read_text()
    assert f"{project}:1: shell runtime `default`" in said and f"{project}:7: shell tool `run`" in said
    assert f"tooldeck trust allow {project}" in said

    allow = subprocess.run([sys.executable, "-m", "tooldeck", "trust", "allow", str(project)], env=_env(state),
                           capture_output=True, text=True, timeout=60)  # fmt: skip
    assert allow.returncode == 0, allow.stderr

    async def listing(s: ClientSession) -> set[str]:
        return {t.name for t in (await s.list_tools()).tools}

    assert "run" in asyncio.run(_session(root, state, errlog, listing))  # the first answer of the next start
