"""Every request over stdio gets an answer (SPEC §6; issue 8 item 12): a line
that is not JSON gets -32700, a request nested too deep gets an error with its
id, and the server keeps answering afterwards."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

import pytest

from tests.mcp.mcp_e2e import INIT, serve_command
from tooldeck.mcp.stdio import error_reply

pytestmark = pytest.mark.timeout(60)


def _exchange(root: Path, state: Path, lines: list[str]) -> list[dict]:
    proc = subprocess.run(
        serve_command(root, state),
        input="".join(line + "\n" for line in lines).encode(),
        capture_output=True,
        timeout=50,
    )
    return [json.loads(line) for line in proc.stdout.decode().splitlines() if line.strip()]


def test_garbage_lines_are_answered_and_the_server_goes_on(served: tuple[Path, Path]) -> None:
    root, state = served
    deep = '{"jsonrpc":"2.0","id":42,"method":"tools/list","params":{"a":' + "[" * 5000 + "]" * 5000 + "}}"
    lines = [
        json.dumps(INIT),
        "this is not json",
        deep,
        "[" * 100_000,
        json.dumps({"jsonrpc": "2.0", "id": 7, "method": "ping"}),
    ]
    replies = _exchange(root, state, lines)
    by_id: dict[object, list[dict]] = {}
    for r in replies:
        by_id.setdefault(r.get("id"), []).append(r)
    assert "result" in by_id[1][0]
    nulls = by_id.get(None, [])
    assert any(r["error"]["code"] == -32700 for r in nulls), replies  # the non-JSON line
    assert by_id[42][0]["error"]["code"] == -32600, replies  # too deep: an error with its id
    assert len(nulls) == 2, replies  # the bracket flood is answered too
    assert by_id[7][0]["result"] == {}, replies  # still serving


def test_error_reply_shapes() -> None:
    assert json.loads(error_reply("nope"))["error"]["code"] == -32700
    deep = '{"jsonrpc":"2.0","id":"abc","method":"x","params":' + "[" * 3000 + "]" * 3000 + "}"
    reply = json.loads(error_reply(deep))
    assert reply["id"] == "abc" and reply["error"]["code"] == -32600
    flood = json.loads(error_reply("[" * 100_000))
    assert flood["id"] is None and flood["error"]["code"] == -32600
