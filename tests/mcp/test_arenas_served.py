"""A served process has one glibc malloc arena, over stdio (the early front)
and over HTTP (issue 35): the limit is set before the first thread allocates.

Counted from outside: every arena but the main one lives in heaps that glibc
reserves as 64 MB-aligned regions of 64 MB (``HEAP_MAX_SIZE``), each
starting with a ``heap_info`` whose first field points to its arena; an
arena's first heap holds the arena itself, so it points inside the region
(read in ``/proc/PID/mem``: the server is this test's child). A region of
another kind that happens to be 64 MB-aligned (merged anonymous mappings)
does not start so."""

from __future__ import annotations

import json
import os
import struct
import subprocess
import sys
import time
from pathlib import Path

import httpx2
import pytest

from tests.mcp.mcp_e2e import free_port, serve_command

pytestmark = [
    pytest.mark.timeout(120),
    pytest.mark.skipif(
        not sys.platform.startswith("linux") or "glibc" not in (os.confstr("CS_GNU_LIBC_VERSION") or ""),
        reason="glibc malloc arenas",
    ),
]

HEAP_MAX = 64 << 20
PROTOCOL = "2025-06-18"
INITIALIZE = {"protocolVersion": PROTOCOL, "capabilities": {}, "clientInfo": {"name": "arenas", "version": "0"}}
CALL = {"name": "context_builder", "arguments": {"instructions": "where does main return", "response_type": "plan"}}


def arenas(pid: int) -> int:
    """The main arena plus each arena's first heap found in ``pid``'s maps."""
    regions = []
    with open(f"/proc/{pid}/maps") as fh:
        for line in fh:
            parts = line.split()
            start, end = (int(x, 16) for x in parts[0].split("-"))
            regions.append((start, end, parts[1], len(parts) > 5))
    found = 1
    with open(f"/proc/{pid}/mem", "rb") as mem:
        for k, (start, end, perms, named) in enumerate(regions):
            if named or start % HEAP_MAX or not perms.startswith("rw"):
                continue
            if k + 1 < len(regions) and regions[k + 1][0] == end and regions[k + 1][2] == "---p":
                end = regions[k + 1][1]  # the reserved, not yet used, rest of the heap
            if end - start != HEAP_MAX:
                continue
            mem.seek(start)
            arena = struct.unpack("<Q", mem.read(8))[0]  # heap_info.ar_ptr
            found += start < arena < start + HEAP_MAX
    return found


def _env() -> dict[str, str]:
    return {k: v for k, v in os.environ.items() if k != "MALLOC_ARENA_MAX"}


def test_the_stdio_server_keeps_one_arena(served: tuple[Path, Path]) -> None:
    root, state = served
    proc = subprocess.Popen(
        serve_command(root, state),
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.DEVNULL,
        env=_env(),
    )
    assert proc.stdin is not None and proc.stdout is not None

    def ask(ident: int, method: str, params: dict) -> dict:
        proc.stdin.write(json.dumps({"jsonrpc": "2.0", "id": ident, "method": method, "params": params}).encode())
        proc.stdin.write(b"\n")
        proc.stdin.flush()
        while True:
            reply = json.loads(proc.stdout.readline())
            if reply.get("id") == ident:
                return reply

    try:
        assert "result" in ask(1, "initialize", INITIALIZE)
        proc.stdin.write(b'{"jsonrpc":"2.0","method":"notifications/initialized"}\n')
        proc.stdin.flush()
        reply = ask(2, "tools/call", CALL)  # the runtime, the catalog and the SDK loaded on threads
        assert not reply["result"].get("isError"), reply
        assert arenas(proc.pid) == 1
    finally:
        proc.kill()
        proc.wait()


def test_the_http_server_keeps_one_arena(served: tuple[Path, Path]) -> None:
    root, state = served
    port = free_port()
    proc = subprocess.Popen(
        [*serve_command(root, state), "--http", f"127.0.0.1:{port}"],
        stdin=subprocess.DEVNULL,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
        env=_env(),
    )
    url = f"http://127.0.0.1:{port}/mcp"
    accept = {"accept": "application/json, text/event-stream"}
    try:
        with httpx2.Client(timeout=60) as client:
            deadline = time.monotonic() + 60
            while True:
                try:
                    first = client.post(
                        url,
                        headers=accept,
                        json={"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": INITIALIZE},
                    )
                    break
                except httpx2.TransportError:
                    assert proc.poll() is None and time.monotonic() < deadline, "the server never listened"
                    time.sleep(0.1)
            first.raise_for_status()
            headers = {**accept, "mcp-session-id": first.headers["mcp-session-id"], "mcp-protocol-version": PROTOCOL}
            client.post(url, headers=headers, json={"jsonrpc": "2.0", "method": "notifications/initialized"})
            reply = client.post(
                url, headers=headers, json={"jsonrpc": "2.0", "id": 2, "method": "tools/call", "params": CALL}
            )
            assert reply.status_code == 200 and '"isError":true' not in reply.text.replace(" ", "")
        assert arenas(proc.pid) == 1
    finally:
        proc.kill()
        proc.wait()
