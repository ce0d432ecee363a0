"""The git tool through real hosts: the MCP server over stdio (SDK client)
and the `tooldeck call` CLI."""

from __future__ import annotations

import asyncio
import os
import subprocess
import sys
from pathlib import Path

from tests.git.gitkit import GitCLI


def test_git_over_mcp_stdio(repo: GitCLI, root: Path, state_dir: Path) -> None:
    from mcp import ClientSession
    from mcp.client.stdio import StdioServerParameters, stdio_client

    repo.commit("one", {"a.py": "a\n"})
    repo.write("a.py", "b\n")
    env = {**os.environ, "TOOLDECK_STATE_DIR": str(state_dir)}
    params = StdioServerParameters(command=sys.executable, args=["-m", "tooldeck", "serve", str(root)], env=env)

    async def session() -> tuple[str, bool, str]:
        async with stdio_client(params) as (read, write), ClientSession(read, write) as s:
            await s.initialize()
            ok = await s.call_tool("git", {"op": "diff", "detail": "patches"})
            bad = await s.call_tool("git", {"op": "show", "ref": "--output=x"})
            return ok.content[0].text, bad.is_error, bad.content[0].text

    text, bad_is_error, bad_text = asyncio.run(asyncio.wait_for(session(), 60))
    assert "M  a.py  +1 -1" in text and "+b" in text
    assert bad_is_error and "must not start with '-'" in bad_text


def test_git_from_the_cli(repo: GitCLI, root: Path, state_dir: Path) -> None:
    repo.commit("one", {"a.py": "a\n"})
    env = {**os.environ, "TOOLDECK_STATE_DIR": str(state_dir)}
    cmd = [sys.executable, "-m", "tooldeck", "call", "git", '{"op": "log", "count": 1}', "--root", str(root)]
    ok = subprocess.run(cmd, capture_output=True, text=True, env=env, timeout=60)
    assert ok.returncode == 0 and ": one" in ok.stdout
    cmd[5] = '{"op": "blame", "path": "-x"}'
    bad = subprocess.run(cmd, capture_output=True, text=True, env=env, timeout=60)
    assert bad.returncode == 1 and "invalid_arguments" in bad.stderr
