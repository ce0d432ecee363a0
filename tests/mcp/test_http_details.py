"""HTTP details (issue 8 item 13): the bearer scheme is case-insensitive, a
``Host`` header without a port is accepted on loopback, and the start-up line
prints a usable URL (the port, IPv6 in brackets)."""

from __future__ import annotations

import socket
import subprocess
import time
from pathlib import Path

import httpx2
import pytest

from tests.mcp.mcp_e2e import INIT, free_port, run_http, serve_command
from tests.support.require import require
from tooldeck.mcp.transports import BearerAuth, mcp_url

pytestmark = pytest.mark.timeout(60)

ACCEPT = {"Accept": "application/json, text/event-stream", "Content-Type": "application/json"}


def test_bearer_scheme_is_case_insensitive(served: tuple[Path, Path]) -> None:
    root, state = served
    token = "tok-for-case-test"
    env = {"TOOLDECK_HTTP_TOKEN": token}
    with run_http(root, state, f"0.0.0.0:{free_port()}", env=env) as server, httpx2.Client() as client:
        for scheme in ("bearer", "BEARER", "Bearer", "bEaReR"):
            headers = {**ACCEPT, "Authorization": f"{scheme} {token}"}
            assert client.post(server.url, json=INIT, headers=headers).status_code == 200, scheme
        for bad in (f"Basic {token}", token, f"Bearer {token}x", "bearer", ""):
            headers = {**ACCEPT, "Authorization": bad}
            assert client.post(server.url, json=INIT, headers=headers).status_code == 401, bad


def test_bearer_check_unit() -> None:
    auth = BearerAuth(None, "abc")
    assert auth.authorized(b"bearer abc") and auth.authorized(b"Bearer  abc") and auth.authorized(b"BEARER abc")
    assert not auth.authorized(b"Bearer abcd") and not auth.authorized(b"abc") and not auth.authorized(b"")


def test_host_header_without_port_is_accepted_on_loopback(served: tuple[Path, Path]) -> None:
    root, state = served
    with run_http(root, state, f"127.0.0.1:{free_port()}") as server, httpx2.Client() as client:
        for host in ("127.0.0.1", "localhost", f"127.0.0.1:{server.port}"):
            r = client.post(server.url, json=INIT, headers={**ACCEPT, "Host": host})
            assert r.status_code == 200, (host, r.status_code, r.text[:200])
        r = client.post(server.url, json=INIT, headers={**ACCEPT, "Host": "evil.example"})
        assert r.status_code in (403, 421), r.status_code  # DNS-rebinding protection still holds


def test_startup_url_brackets_ipv6() -> None:
    assert mcp_url("::1", 8765) == "http://[::1]:8765/mcp"
    assert mcp_url("127.0.0.1", 8765) == "http://127.0.0.1:8765/mcp"


def _ipv6_loopback() -> bool:
    try:
        with socket.socket(socket.AF_INET6) as s:
            s.bind(("::1", 0))
    except OSError:
        return False
    return True


def test_ipv6_bind_prints_a_bracketed_url(served: tuple[Path, Path]) -> None:
    require("IPv6 loopback", present=_ipv6_loopback(), how="a kernel with IPv6 enabled on lo (::1)")
    root, state = served
    port = free_port()
    err = state / "v6.stderr"
    with open(err, "wb") as fh:
        proc = subprocess.Popen(serve_command(root, state, "--http", f"[::1]:{port}"), stderr=fh)
    try:
        deadline = time.monotonic() + 60
        while "serving MCP" not in err.read_text() and time.monotonic() < deadline and proc.poll() is None:
            time.sleep(0.05)
        assert f"serving MCP at http://[::1]:{port}/mcp" in err.read_text(), err.read_text()
        while time.monotonic() < deadline:  # the line is printed just before uvicorn binds
            with socket.socket(socket.AF_INET6) as s:
                if s.connect_ex(("::1", port)) == 0:
                    break
            time.sleep(0.05)
        with httpx2.Client() as client:
            r = client.post(f"http://[::1]:{port}/mcp", json=INIT, headers=ACCEPT)
            assert r.status_code == 200, r.text[:200]
    finally:
        proc.terminate()
        proc.wait(10)
