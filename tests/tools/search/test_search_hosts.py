"""file_search from the hosts: over MCP stdio with the SDK's real client
(results, a cursor continued in a later call, an invalid call reported as an
error result) and from ``tooldeck call`` (output and exit codes)."""

from __future__ import annotations

import os
import sys
from pathlib import Path

import anyio
from mcp import ClientSession, StdioServerParameters, stdio_client

from tests.tools.search.search_helpers import cursor_of, parse_content, write


def test_file_search_over_mcp_stdio(tmp_path: Path) -> None:
    root = tmp_path / "root"
    for i in range(3):
        write(root, f"pkg/m{i}.py", f"def handler_{i}():\n    return {i}\n")
    env = {**os.environ, "TOOLDECK_STATE_DIR": str(tmp_path / "state")}
    params = StdioServerParameters(command=sys.executable, args=["-m", "tooldeck", "serve", str(root)], env=env)

    async def run() -> tuple[str, str, bool, str]:
        with open(os.devnull, "w") as devnull:
            async with stdio_client(params, errlog=devnull) as (r, w), ClientSession(r, w) as session:
                await session.initialize()
                listed = await session.list_tools()
                assert "file_search" in {t.name for t in listed.tools}
                first = await session.call_tool("file_search", {"pattern": r"def handler_\d", "max_results": 2})
                text = first.content[0].text
                cur = cursor_of(text)
                assert cur is not None, text
                second = await session.call_tool("file_search", {"cursor": cur})
                bad = await session.call_tool("file_search", {"pattern": "x", "context_lines": -3})
                return text, second.content[0].text, bool(bad.is_error), bad.content[0].text

    first, second, bad_is_error, bad_text = anyio.run(run)
    hits = parse_content(first) + parse_content(second)
    assert [(h.path, h.line) for h in hits] == [("pkg/m0.py", 1), ("pkg/m1.py", 1), ("pkg/m2.py", 1)]
    assert "showing 3-3" in second
    assert bad_is_error and "context_lines" in bad_text


def test_file_search_from_the_cli(tmp_path: Path) -> None:
    import json
    import subprocess

    root = tmp_path / "root"
    write(root, "src/a.py", "alpha = 1\n")
    env = {**os.environ, "TOOLDECK_STATE_DIR": str(tmp_path / "state")}
    cmd = [sys.executable, "-m", "tooldeck", "call", "file_search", "--root", str(root)]
    ok = subprocess.run([*cmd, json.dumps({"pattern": "alpha"})], capture_output=True, text=True, env=env)
    assert ok.returncode == 0, ok.stderr
    assert [(h.path, h.line) for h in parse_content(ok.stdout)] == [("src/a.py", 1)]
    bad = subprocess.run([*cmd, json.dumps({"pattern": "alpha", "mode": "x"})], capture_output=True, text=True, env=env)
    assert bad.returncode == 1 and "mode" in bad.stderr
