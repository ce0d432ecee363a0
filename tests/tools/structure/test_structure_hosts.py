"""The structure tools from the hosts: over MCP stdio with the SDK's real
client, and from ``tooldeck call`` (output and exit codes)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import anyio
from mcp import ClientSession, StdioServerParameters, stdio_client

APP = "class Server:\n    def start(self) -> None:\n        pass\n\n\ndef main() -> Server:\n    return Server()\n"


def make_root(tmp_path: Path) -> Path:
    root = tmp_path / "root"
    (root / "pkg").mkdir(parents=True)
    (root / "pkg" / "app.py").write_text(APP, encoding="utf-8")
    (root / "notes.txt").write_text("no grammar\n", encoding="utf-8")
    return root


def test_structure_tools_over_mcp_stdio(tmp_path: Path) -> None:
    root = make_root(tmp_path)
    env = {**os.environ, "TOOLDECK_STATE_DIR": str(tmp_path / "state")}
    params = StdioServerParameters(command=sys.executable, args=["-m", "tooldeck", "serve", str(root)], env=env)

    async def run() -> dict[str, tuple[bool, str]]:
        out: dict[str, tuple[bool, str]] = {}
        with open(os.devnull, "w") as devnull:
            async with stdio_client(params, errlog=devnull) as (r, w), ClientSession(r, w) as session:
                await session.initialize()
                names = {t.name for t in (await session.list_tools()).tools}
                assert {"get_code_structure", "find_symbol", "find_references"} <= names
                calls = {
                    "map": ("get_code_structure", {"paths": ["."]}),
                    "symbol": ("find_symbol", {"name": "Server.start"}),
                    "refs": ("find_references", {"name": "Server"}),
                    "bad": ("get_code_structure", {"scope": "paths"}),
                }
                for key, (tool, args) in calls.items():
                    res = await session.call_tool(tool, args)
                    out[key] = (bool(res.is_error), res.content[0].text)
        return out

    out = anyio.run(run)
    assert out["map"] == (
        False,
        "pkg/app.py\n1 class Server\n2\tstart()->None\n6 main()->Server\n\n"
        "[1 file(s) have no codemap support (no grammar): notes.txt]",
    )
    assert out["symbol"] == (
        False,
        "1 definition(s) of `Server.start`:\npkg/app.py:2  method (in Server)  def start() -> None",
    )
    assert out["refs"][1].splitlines()[1:] == [
        "pkg/app.py",
        "  L6  [in main]  def main() -> Server:",
        "  L7  [in main]  return Server()",
    ]
    assert out["bad"][0] is True and "paths" in out["bad"][1]


def test_structure_tools_from_the_cli(tmp_path: Path) -> None:
    root = make_root(tmp_path)
    env = {**os.environ, "TOOLDECK_STATE_DIR": str(tmp_path / "state")}
    cmd = [sys.executable, "-m", "tooldeck", "call"]
    ok = subprocess.run(
        [*cmd, "get_code_structure", json.dumps({"paths": ["pkg"]}), "--root", str(root)],
        capture_output=True,
        text=True,
        env=env,
    )
    assert ok.returncode == 0, ok.stderr
    assert ok.stdout.startswith("pkg/app.py\n1 class Server")
    bad = subprocess.run(
        [*cmd, "find_symbol", json.dumps({"name": "two words"}), "--root", str(root)],
        capture_output=True,
        text=True,
        env=env,
    )
    assert bad.returncode == 1 and "name" in bad.stderr
