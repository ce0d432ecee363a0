"""Helpers for end-to-end MCP tests: spawn `tooldeck serve` and talk to it with
the official SDK client, over stdio or streamable HTTP."""

from __future__ import annotations

import contextlib
import os
import shutil
import socket
import subprocess
import sys
import time
from collections.abc import AsyncIterator, Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path

import httpx2
from mcp import ClientSession, StdioServerParameters, stdio_client
from mcp.client.streamable_http import streamable_http_client

from tests.support.jsonrpc import INIT as INIT  # the raw-wire tests import it from here too


def serve_command(root: Path, state: Path, *extra: str) -> list[str]:
    return [sys.executable, "-m", "tooldeck", "serve", str(root), "--state-dir", str(state), *extra]


@contextlib.asynccontextmanager
async def stdio_session(root: Path, state: Path) -> AsyncIterator[ClientSession]:
    cmd = serve_command(root, state)
    params = StdioServerParameters(command=cmd[0], args=cmd[1:], env={**os.environ, "TOOLDECK_STATE_DIR": str(state)})
    async with stdio_client(params) as (read, write), ClientSession(read, write) as session:
        await session.initialize()
        yield session


@contextlib.asynccontextmanager
async def http_session(url: str, token: str | None = None) -> AsyncIterator[ClientSession]:
    headers = {"Authorization": f"Bearer {token}"} if token else {}
    async with (
        httpx2.AsyncClient(headers=headers, timeout=30) as client,
        streamable_http_client(url, http_client=client) as (read, write),
        ClientSession(read, write) as session,
    ):
        await session.initialize()
        yield session


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


# An address that exists only inside a test's own network namespace (on its lo):
# "off loopback" is tested there, never on this machine's real interfaces.
NETNS_IP = "198.18.0.1"
_NETNS_SETUP = f'ip link set lo up && ip addr add {NETNS_IP}/32 dev lo && exec "$@"'


def netns_available() -> bool:
    """Can this process make a network namespace (root, util-linux, iproute2)?"""
    if shutil.which("unshare") is None or shutil.which("nsenter") is None or shutil.which("ip") is None:
        return False
    probe = subprocess.run(["unshare", "--net", "--", "sh", "-c", _NETNS_SETUP, "sh", "true"], capture_output=True)
    return probe.returncode == 0


def in_new_netns(cmd: list[str]) -> list[str]:
    """``cmd`` in a new network namespace with lo up and :data:`NETNS_IP` on it
    (the pid stays the command's: unshare and sh exec it)."""
    return ["unshare", "--net", "--", "sh", "-c", _NETNS_SETUP, "sh", *cmd]


def in_netns_of(pid: int, cmd: list[str]) -> list[str]:
    """``cmd`` run in the network namespace of process ``pid``."""
    return ["nsenter", f"--net=/proc/{pid}/ns/net", "--", *cmd]


@dataclass
class HttpServer:
    proc: subprocess.Popen[bytes]
    port: int
    stderr_path: Path

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}/mcp"

    def stderr(self) -> str:
        return self.stderr_path.read_text(errors="replace")


def wait_listening(port: int, proc: subprocess.Popen[bytes], timeout: float = 90.0) -> None:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if proc.poll() is not None:
            raise RuntimeError(f"tooldeck serve exited with {proc.returncode}")
        with socket.socket() as s:
            if s.connect_ex(("127.0.0.1", port)) == 0:
                return
        time.sleep(0.05)
    raise TimeoutError(f"nothing listening on port {port}")


def wait_saying(path: Path, text: str, proc: subprocess.Popen[bytes], timeout: float = 90.0) -> None:
    deadline = time.monotonic() + timeout
    while text not in path.read_text(errors="replace"):
        if proc.poll() is not None:
            raise RuntimeError(f"tooldeck serve exited with {proc.returncode}: {path.read_text(errors='replace')}")
        if time.monotonic() > deadline:
            raise TimeoutError(f"the server never said {text!r}")
        time.sleep(0.05)


@contextlib.contextmanager
def run_http(
    root: Path,
    state: Path,
    bind: str,
    env: dict[str, str] | None = None,
    *,
    netns: bool = False,
    extra: Sequence[str] = (),
) -> Iterator[HttpServer]:
    """``tooldeck serve --http BIND`` (BIND = HOST:PORT or :PORT); stopped at exit.
    ``netns``: in a network namespace of its own (see :func:`in_new_netns`); it is
    then reached only with :func:`in_netns_of`, and is up once it says so."""
    port = int(bind.rsplit(":", 1)[1])
    err = state / f"http-{port}.stderr"
    cmd = serve_command(root, state, "--http", bind, *extra)
    with open(err, "wb") as fh:
        proc = subprocess.Popen(
            in_new_netns(cmd) if netns else cmd,
            stdin=subprocess.DEVNULL,
            stdout=subprocess.DEVNULL,
            stderr=fh,
            env={**os.environ, **(env or {})},
        )
    try:
        if netns:
            wait_saying(err, "serving MCP at", proc)
        else:
            wait_listening(port, proc)
        yield HttpServer(proc, port, err)
    finally:
        proc.terminate()
        try:
            proc.wait(10)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()
