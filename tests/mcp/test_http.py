"""End to end over streamable HTTP: loopback by default, a bearer token
whenever the server binds elsewhere, and garbage never stops it."""

from __future__ import annotations

import re
import socket
import time
from pathlib import Path
from typing import Any

import anyio
import httpx2
import pytest

from tests.mcp.mcp_e2e import free_port, http_session, non_loopback_ip, run_http

pytestmark = pytest.mark.timeout(120)

INIT = {
    "jsonrpc": "2.0",
    "id": 1,
    "method": "initialize",
    "params": {"protocolVersion": "2025-11-25", "capabilities": {}, "clientInfo": {"name": "raw", "version": "0"}},
}
ACCEPT = {"Accept": "application/json, text/event-stream", "Content-Type": "application/json"}


def text_of(result: Any) -> str:
    return "\n".join(c.text for c in result.content if getattr(c, "type", "") == "text")


def test_http_session_on_loopback(served: tuple[Path, Path]) -> None:
    root, state = served
    with run_http(root, state, f"127.0.0.1:{free_port()}") as server:

        async def scenario() -> None:
            async with http_session(server.url) as s:
                names = {t.name for t in (await s.list_tools()).tools}
                assert {"read_file", "get_file_tree", "file_actions"} <= names
                ok = await s.call_tool("read_file", {"file": "hello.txt", "line_count": 1})
                assert not ok.is_error and text_of(ok) == text_of(ok).split("\n")[0] + "\nhello"
                err = await s.call_tool("read_file", {"file": "../outside.txt"})
                assert err.is_error and text_of(err).startswith("error [outside_roots]")
                seen: list[str] = []

                async def on_progress(progress: float, total: float | None, message: str | None) -> None:
                    seen.append(message or "")

                tree = await s.call_tool("get_file_tree", {"mode": "full"}, progress_callback=on_progress)
                assert "app.py" in text_of(tree) and any("walked" in m for m in seen)
                made = await s.call_tool("append_to_file", {"path": "hello.txt", "content": "again"})
                assert not made.is_error
            assert (root / "hello.txt").read_text() == "hello\nworld\n\nagain"

        anyio.run(scenario)
        assert "serving MCP at http://127.0.0.1" in server.stderr()


def test_default_host_is_loopback(served: tuple[Path, Path]) -> None:
    root, state = served
    port = free_port()
    with run_http(root, state, f":{port}") as server:
        assert "http://127.0.0.1:" in server.stderr()
        ip = non_loopback_ip()
        if ip is not None:
            with socket.socket() as s:
                assert s.connect_ex((ip, port)) != 0  # not reachable from the network
        with httpx2.Client() as client:
            r = client.post(server.url, json=INIT, headers=ACCEPT)
            assert r.status_code == 200  # no token needed on loopback


def test_bearer_token_required_off_loopback(served: tuple[Path, Path]) -> None:
    root, state = served
    token = "s3cret-token-for-tests"
    with run_http(root, state, f"0.0.0.0:{free_port()}", env={"TOOLDECK_HTTP_TOKEN": token}) as server:
        hosts = ["127.0.0.1"] + ([ip] if (ip := non_loopback_ip()) else [])
        with httpx2.Client() as client:
            for host in hosts:
                url = f"http://{host}:{server.port}/mcp"
                assert client.post(url, json=INIT, headers=ACCEPT).status_code == 401
                wrong = {**ACCEPT, "Authorization": "Bearer nope"}
                assert client.post(url, json=INIT, headers=wrong).status_code == 401
                assert client.get(url, headers={"Authorization": token}).status_code == 401  # scheme required
                good = {**ACCEPT, "Authorization": f"Bearer {token}"}
                assert client.post(url, json=INIT, headers=good).status_code == 200

        async def scenario() -> None:
            async with http_session(server.url, token) as s:
                res = await s.call_tool("read_file", {"file": "hello.txt"})
                assert not res.is_error and "world" in text_of(res)

        anyio.run(scenario)
        assert token not in server.stderr()  # a given token is never echoed


def test_generated_token_is_printed_and_works(served: tuple[Path, Path]) -> None:
    root, state = served
    with run_http(root, state, f"0.0.0.0:{free_port()}", env={"TOOLDECK_HTTP_TOKEN": ""}) as server:
        deadline = time.monotonic() + 10
        while "bearer token" not in server.stderr() and time.monotonic() < deadline:
            time.sleep(0.05)
        m = re.search(r"bearer token for \S+: (\S+)", server.stderr())
        assert m is not None, server.stderr()
        with httpx2.Client() as client:
            assert client.post(server.url, json=INIT, headers=ACCEPT).status_code == 401

        async def scenario() -> None:
            async with http_session(server.url, m.group(1)) as s:
                assert not (await s.call_tool("read_directory", {})).is_error

        anyio.run(scenario)


def test_http_server_survives_garbage(served: tuple[Path, Path]) -> None:
    root, state = served
    with run_http(root, state, f"127.0.0.1:{free_port()}") as server, httpx2.Client(timeout=30) as client:
        bodies: list[tuple[bytes, dict[str, str]]] = [
            (b"not json", ACCEPT),
            (b"[]", ACCEPT),
            (b'{"jsonrpc": "2.0", "id": 1, "method": "tools/call"}', ACCEPT),
            (b"\xff\xfe\xfd", ACCEPT),
            (b'{"jsonrpc": "2.0", "id": 2, "method": "initialize", "params": {"x": "\\ud800"}}', ACCEPT),
            (b"[" * 100_000, ACCEPT),
            (b"{}", {"Content-Type": "text/plain"}),
            (b"x" * 5_000_000, ACCEPT),
        ]
        for body, headers in bodies:
            r = client.post(server.url, content=body, headers=headers)
            assert 400 <= r.status_code < 500 or r.status_code == 200, (body[:40], r.status_code)
        assert client.get(server.url.replace("/mcp", "/nope")).status_code == 404
        assert client.delete(server.url).status_code in (400, 404, 405)
        assert server.proc.poll() is None

        async def scenario() -> None:
            async with http_session(server.url) as s:
                assert "hello" in text_of(await s.call_tool("read_file", {"file": "hello.txt"}))

        anyio.run(scenario)
