"""End to end over stdio: `tooldeck serve` spawned, driven by the SDK's client."""

from __future__ import annotations

import asyncio
import json
import os
import queue
import subprocess
import threading
from pathlib import Path
from typing import Any

import anyio
import pytest

from tests.mcp.mcp_e2e import serve_command, stdio_session
from tooldeck.mcp.stdio import repair_surrogate_escapes

pytestmark = pytest.mark.timeout(120)


def text_of(result: Any) -> str:
    return "\n".join(c.text for c in result.content if getattr(c, "type", "") == "text")


def test_stdio_session_tools_errors_progress_and_writes(served: tuple[Path, Path]) -> None:
    root, state = served
    with open(os.path.join(os.fsencode(root), b"bad-\xff.txt"), "wb") as fh:
        fh.write(b"x")

    async def scenario() -> None:
        async with stdio_session(root, state) as s:
            listed = {t.name: t for t in (await s.list_tools()).tools}
            for name in ("read_file", "read_directory", "get_file_tree", "file_actions", "append_to_file"):
                assert name in listed, name
            rf = listed["read_file"]
            assert rf.annotations is not None and rf.annotations.read_only_hint is True
            assert rf.input_schema["properties"]["root"]["enum"] == ["root"]
            assert str(root.resolve()) in (rf.description or "")
            fa = listed["file_actions"]
            assert fa.annotations is not None and fa.annotations.destructive_hint is True

            ok = await s.call_tool("read_file", {"path": "hello.txt", "start_line": 2})
            assert not ok.is_error and text_of(ok).startswith("hello.txt:2-2 [total_lines=2]")

            missing = await s.call_tool("read_file", {"file": "nope.txt"})
            assert missing.is_error and text_of(missing).startswith("error [not_found]:")
            bad = await s.call_tool("read_file", {"file": 3})
            assert bad.is_error and "error [invalid_arguments]" in text_of(bad) and "`file`" in text_of(bad)
            unknown = await s.call_tool("no_such_tool", {})
            assert unknown.is_error and "error [unknown_tool]" in text_of(unknown)
            ambiguous = await s.call_tool("find_and_replace", {"path": "notes.md", "find": "one", "replace": "two"})
            assert ambiguous.is_error and "apply_patch" in text_of(ambiguous)
            assert (root / "notes.md").read_text() == "one\none\n"

            seen: list[tuple[float, float | None, str | None]] = []

            async def on_progress(progress: float, total: float | None, message: str | None) -> None:
                seen.append((progress, total, message))

            tree = await s.call_tool("get_file_tree", {"mode": "full"}, progress_callback=on_progress)
            assert not tree.is_error and "app.py" in text_of(tree)
            assert "bad-\\xff.txt" in text_of(tree)  # an undecodable name does not break the response
            assert seen and any("walked" in (m or "") for _, _, m in seen)
            assert [p for p, _, _ in seen] == sorted(p for p, _, _ in seen)

            made = await s.call_tool("file_actions", {"action": "create", "path": "out/new.txt", "content": "hi"})
            assert not made.is_error and (root / "out" / "new.txt").read_text() == "hi"

            many = await asyncio.gather(*(s.call_tool("read_file", {"file": "src/app.py"}) for _ in range(20)))
            assert all(not r.is_error and "def main" in text_of(r) for r in many)

            listing = await s.call_tool("read_directory", {"path": "."})
            assert "bad-\\xff.txt" in text_of(listing)  # the server survived that name and still answers

    anyio.run(scenario)


class RawServer:
    """The server on raw pipes, to send what no SDK client would."""

    def __init__(self, root: Path, state: Path) -> None:
        self.proc = subprocess.Popen(
            serve_command(root, state), stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL
        )
        self.lines: queue.Queue[bytes] = queue.Queue()
        threading.Thread(target=self._pump, daemon=True).start()

    def _pump(self) -> None:
        assert self.proc.stdout is not None
        for line in self.proc.stdout:
            self.lines.put(line)

    def send(self, raw: bytes) -> None:
        assert self.proc.stdin is not None
        self.proc.stdin.write(raw if raw.endswith(b"\n") else raw + b"\n")
        self.proc.stdin.flush()

    def request(self, rid: int, method: str, params: dict[str, Any] | None = None) -> None:
        msg: dict[str, Any] = {"jsonrpc": "2.0", "id": rid, "method": method}
        if params is not None:
            msg["params"] = params
        self.send(json.dumps(msg).encode())

    def response(self, rid: int, timeout: float = 30) -> dict[str, Any]:
        while True:
            line = self.lines.get(timeout=timeout)
            msg = json.loads(line)
            if msg.get("id") == rid:
                return msg  # type: ignore[no-any-return]

    def close(self) -> None:
        self.proc.terminate()
        try:
            self.proc.wait(10)
        except subprocess.TimeoutExpired:
            self.proc.kill()


GARBAGE = [
    b"not json at all",
    b"[]",
    b"{}",
    b"\xff\xfe\xfd invalid utf-8",
    b'{"jsonrpc": "2.0", "id": 100, "method": "no/such/method"}',
    b'{"jsonrpc": "2.0", "id": 101, "method": "tools/call"}',
    b'{"jsonrpc": "2.0", "id": 102, "method": "tools/call", "params": {"name": "read_file", "arguments": "x"}}',
    b'{"jsonrpc": "2.0", "id": 103, "method": "tools/call", "params": {"name": 5}}',
    b'{"jsonrpc": "2.0", "id": 104, "method": "tools/call", "params": {"name": "read_file", '
    b'"arguments": {"file": "\\ud800"}}}',
    b'{"jsonrpc": "2.0", "id": 105, "method": "tools/call", "params": {"name": "read_directory", '
    b'"arguments": {"path": "\\udcff\\ud800"}}}',
    b"[" * 50_000 + b"]" * 50_000,
    b'{"jsonrpc": "2.0", "method": "notifications/cancelled", "params": {"requestId": 999}}',
    b'{"jsonrpc": "1.0", "id": "x"}',
    b"a" * 3_000_000,
]


def test_stdio_server_survives_any_input(served: tuple[Path, Path]) -> None:
    root, state = served
    server = RawServer(root, state)
    try:
        for junk in GARBAGE[:4]:  # before the handshake too
            server.send(junk)
        server.request(
            1,
            "initialize",
            {"protocolVersion": "2025-11-25", "capabilities": {}, "clientInfo": {"name": "raw", "version": "0"}},
        )
        assert server.response(1)["result"]["serverInfo"]["name"] == "tooldeck"
        server.send(b'{"jsonrpc": "2.0", "method": "notifications/initialized"}')
        for junk in GARBAGE:
            server.send(junk)
        for rid in (100, 101, 102, 103, 104, 105):
            reply = server.response(rid)
            failed = "error" in reply or reply.get("result", {}).get("isError")
            assert failed, reply
        server.request(7, "tools/call", {"name": "read_file", "arguments": {"file": "hello.txt"}})
        reply = server.response(7)
        assert reply["result"]["content"][0]["text"].startswith("hello.txt:1-2")
        assert server.proc.poll() is None
    finally:
        server.close()


def test_lone_surrogate_escapes_are_repaired_not_dropped() -> None:
    assert repair_surrogate_escapes(r'{"a": "\ud800"}') == r'{"a": "\ufffd"}'
    assert repair_surrogate_escapes(r'{"a": "\ud83d\ude00"}') == r'{"a": "\ud83d\ude00"}'  # a pair is kept
    assert repair_surrogate_escapes(r'{"a": "\\ud800"}') == r'{"a": "\\ud800"}'  # an escaped backslash
    assert repair_surrogate_escapes(r'"\udcff\ud800\udc00"') == r'"\ufffd\ud800\udc00"'
    assert json.loads(repair_surrogate_escapes(r'{"a": "x\uDBFFy"}')) == {"a": "x\ufffdy"}
