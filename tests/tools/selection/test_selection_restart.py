"""State survives restarts: a new Runtime on the same state directory, a real
`tooldeck serve` restarted between two MCP sessions, and `tooldeck call`
processes one after the other."""

from __future__ import annotations

import asyncio
import os
import subprocess
import sys
from pathlib import Path

from tooldeck.catalog import build_toolbox
from tooldeck.runtime import Runtime
from tooldeck.selection.service import selection_service
from tooldeck.state.workspaces import workspace_service


def test_new_runtime_on_the_same_state_dir_sees_everything(call, project, state_dir, runtime):
    call.ok("manage_selection", {"op": "add", "paths": ["app/main.py"]})
    call.ok(
        "manage_selection",
        {
            "op": "add",
            "slices": [{"path": "app/util.py", "ranges": [{"start_line": 4, "end_line": 5, "description": "d"}]}],
        },
    )
    call.ok("prompt", {"op": "set", "text": "persist me"})
    call.ok("manage_workspaces", {"action": "create_tab", "name": "Second", "mode": "fork"})
    before = selection_service(runtime).snapshot()

    again = Runtime.for_dirs([project], state_dir=state_dir)
    build_toolbox(again)
    svc = selection_service(again)
    assert workspace_service(again).current().tab.name == "Second"
    assert svc.prompt() == "persist me"
    after = svc.snapshot()
    assert after.files == before.files
    util = after.files[os.path.realpath(project / "app/util.py")]
    assert util.mode == "slices" and [(r.start, r.end, r.description) for r in util.ranges] == [(4, 5, "d")]


def test_selection_survives_a_tooldeck_serve_restart_over_mcp(project: Path, state_dir: Path) -> None:
    from mcp import ClientSession
    from mcp.client.stdio import StdioServerParameters, stdio_client

    env = {**os.environ, "TOOLDECK_STATE_DIR": str(state_dir)}
    params = StdioServerParameters(command=sys.executable, args=["-m", "tooldeck", "serve", str(project)], env=env)

    async def session(calls: list[tuple[str, dict]]) -> list[tuple[bool, str]]:
        out = []
        async with stdio_client(params) as (read, write), ClientSession(read, write) as s:
            await s.initialize()
            for name, args in calls:
                res = await s.call_tool(name, args)
                out.append((bool(res.is_error), "\n".join(c.text for c in res.content if hasattr(c, "text"))))
        return out

    first = asyncio.run(
        asyncio.wait_for(
            session(
                [
                    ("manage_selection", {"op": "add", "paths": ["app/models.py", "docs"]}),
                    ("prompt", {"op": "set", "text": "across restarts"}),
                ]
            ),
            90,
        )
    )
    assert all(not err for err, _ in first), first
    second = asyncio.run(
        asyncio.wait_for(
            session(
                [("manage_selection", {"op": "get", "view": "files"}), ("workspace_context", {"include": ["prompt"]})]
            ),
            90,
        )
    )
    (err1, files), (err2, ctx) = second
    assert not err1 and not err2
    assert "app/models.py  full" in files and "docs/guide.md  full" in files
    assert "across restarts" in ctx


def test_cli_calls_share_the_selection(project: Path, state_dir: Path) -> None:
    env = {**os.environ, "TOOLDECK_STATE_DIR": str(state_dir)}

    def tooldeck(*args: str) -> subprocess.CompletedProcess[str]:
        cmd = [sys.executable, "-m", "tooldeck", "call", *args, "--root", str(project)]
        return subprocess.run(cmd, capture_output=True, text=True, env=env, timeout=90)

    add = tooldeck("manage_selection", '{"op": "add", "paths": ["app/util.py"]}')
    assert add.returncode == 0, add.stderr
    ctx = tooldeck("workspace_context", '{"include": ["selection", "tokens"]}')
    assert ctx.returncode == 0, ctx.stderr
    assert "app/util.py  full" in ctx.stdout and "total " in ctx.stdout
    bad = tooldeck("manage_selection", '{"op": "remove", "paths": ["app/models.py"]}')
    assert bad.returncode == 1 and "not_found" in bad.stderr
