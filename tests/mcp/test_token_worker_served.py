"""A served tooldeck counts tokens in its worker process (tooldeck.tokens),
so no call waits for the encoder to load (tests/workspace/test_token_worker.py
covers the waiting itself)."""

from __future__ import annotations

import json
import os
import subprocess
from pathlib import Path

import pytest

from tests.mcp.mcp_e2e import serve_command

pytestmark = pytest.mark.timeout(120)


def _children(pid: int) -> list[str]:
    out = []
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        try:
            stat = Path(f"/proc/{entry}/stat").read_text()
            cmd = Path(f"/proc/{entry}/cmdline").read_bytes().replace(b"\0", b" ").decode()
        except OSError:
            continue
        if int(stat.rsplit(")", 1)[1].split()[1]) == pid:
            out.append(cmd)
    return out


def test_the_server_counts_in_its_worker(served: tuple[Path, Path]) -> None:
    root, state = served
    (root / "big.txt").write_text("".join(f"line {i} " + "word " * 18 + "\n" for i in range(4500)))
    init = {
        "jsonrpc": "2.0",
        "id": 1,
        "method": "initialize",
        "params": {"protocolVersion": "2025-11-25", "capabilities": {}, "clientInfo": {"name": "t", "version": "0"}},
    }
    call = {
        "jsonrpc": "2.0",
        "id": 2,
        "method": "tools/call",
        "params": {"name": "read_file", "arguments": {"path": "big.txt"}},
    }
    env = {**os.environ, "TOOLDECK_STATE_DIR": str(state)}
    env.pop("TOOLDECK_TOKEN_WORKER", None)
    proc = subprocess.Popen(serve_command(root, state), stdin=subprocess.PIPE, stdout=subprocess.PIPE, env=env)
    assert proc.stdin is not None and proc.stdout is not None
    try:
        proc.stdin.write(
            (
                json.dumps(init) + "\n" + json.dumps({"jsonrpc": "2.0", "method": "notifications/initialized"}) + "\n"
            ).encode()
        )
        proc.stdin.write((json.dumps(call) + "\n").encode())
        proc.stdin.flush()
        replies = [json.loads(proc.stdout.readline()) for _ in range(2)]
        children = _children(proc.pid)
    finally:
        proc.stdin.close()
        proc.wait(30)
    text = replies[1]["result"]["content"][0]["text"]
    assert "line 0 " in text and "cursor" in text  # paged to the budget: it was counted
    assert any("tooldeck.tokens" in c for c in children), children
