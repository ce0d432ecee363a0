"""End to end over streamable HTTP: loopback by default, a bearer token
whenever the server binds elsewhere, and garbage never stops it."""

from __future__ import annotations

import json
import re
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import anyio
import httpx2
import pytest

from tests.mcp.mcp_e2e import INIT, NETNS_IP, free_port, http_session, in_netns_of, netns_available, run_http
from tests.support.require import require

pytestmark = pytest.mark.timeout(120)

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
        with httpx2.Client() as client:
            r = client.post(server.url, json=INIT, headers=ACCEPT)
            assert r.status_code == 200  # no token needed on loopback


def test_bearer_token_required_off_loopback(served: tuple[Path, Path]) -> None:
    root, state = served
    token = "s3cret-token-for-tests"
    with run_http(root, state, f"0.0.0.0:{free_port()}", env={"TOOLDECK_HTTP_TOKEN": token}) as server:
        with httpx2.Client() as client:
            for host in ["127.0.0.1"]:  # a non-loopback address: test_off_loopback_in_a_network_namespace
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
        deadline = time.monotonic() + 60
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


# Off loopback, in a network namespace of the test's own: the server runs there,
# with NETNS_IP on its lo, and the probe below runs there too (nsenter), so no
# packet goes anywhere but that namespace.
_PROBE = """
import json, socket, sys, urllib.error, urllib.request
host, port, token = sys.argv[1], int(sys.argv[2]), sys.argv[3]
init = json.dumps({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {"protocolVersion": "2025-11-25",
    "capabilities": {}, "clientInfo": {"name": "raw", "version": "0"}}}).encode()
accept = {"Accept": "application/json, text/event-stream", "Content-Type": "application/json"}
def status(method, headers):
    req = urllib.request.Request(f"http://{host}:{port}/mcp", data=init if method == "POST" else None,
                                 headers=headers, method=method)
    try:
        with urllib.request.urlopen(req, timeout=30) as r:
            return r.status
    except urllib.error.HTTPError as e:
        return e.code
    except OSError:
        return None
with socket.socket() as s:
    reachable = s.connect_ex((host, port)) == 0
print(json.dumps({"reachable": reachable, "none": status("POST", accept) if reachable else None,
    "wrong": status("POST", {**accept, "Authorization": "Bearer nope"}) if reachable else None,
    "no_scheme": status("GET", {"Authorization": token}) if reachable else None,
    "good": status("POST", {**accept, "Authorization": f"Bearer {token}"}) if reachable else None}))
"""


def _probe(server_pid: int, host: str, port: int, token: str) -> dict[str, Any]:
    cmd = in_netns_of(server_pid, [sys.executable, "-c", _PROBE, host, str(port), token])
    out = subprocess.run(cmd, capture_output=True, text=True, timeout=60, check=True)
    return json.loads(out.stdout)  # type: ignore[no-any-return]


def test_off_loopback_in_a_network_namespace(served: tuple[Path, Path]) -> None:
    """Bound to loopback (the default), the server is not reachable on the
    namespace's other address; bound to 0.0.0.0, it needs the bearer token
    there as on loopback."""
    how = "root, with util-linux (unshare, nsenter) and iproute2 (ip): apt-get install util-linux iproute2"
    require("network namespaces", present=netns_available(), how=how)
    root, state = served
    token = "s3cret-token-for-tests"
    port = free_port()
    with run_http(root, state, f":{port}", netns=True) as server:
        assert _probe(server.proc.pid, NETNS_IP, port, token) == {
            "reachable": False, "none": None, "wrong": None, "no_scheme": None, "good": None}  # fmt: skip
        assert _probe(server.proc.pid, "127.0.0.1", port, token)["none"] == 200  # no token needed on loopback
    port = free_port()
    with run_http(root, state, f"0.0.0.0:{port}", env={"TOOLDECK_HTTP_TOKEN": token}, netns=True) as server:
        for host in (NETNS_IP, "127.0.0.1"):
            assert _probe(server.proc.pid, host, port, token) == {
                "reachable": True, "none": 401, "wrong": 401, "no_scheme": 401, "good": 200}, host  # fmt: skip
