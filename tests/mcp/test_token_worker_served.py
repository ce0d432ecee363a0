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
from tests.support import jsonrpc

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
    call = jsonrpc.call(2, "read_file", {"path": "big.txt"})
    env = {**os.environ, "TOOLDECK_STATE_DIR": str(state)}
    env.pop("TOOLDECK_TOKEN_WORKER", None)
    proc = subprocess.Popen(serve_command(root, state), stdin=subprocess.PIPE, stdout=subprocess.PIPE, env=env)
    assert proc.stdin is not None and proc.stdout is not None
    try:
        proc.stdin.write(
            (
                json.dumps(jsonrpc.INIT) + "\n" + json.dumps(jsonrpc.INITIALIZED) + "\n"
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
