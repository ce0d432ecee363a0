"""Helpers for end-to-end MCP tests: spawn `tooldeck serve` and talk to it with
the official SDK client, over stdio or streamable HTTP."""

from __future__ import annotations

import contextlib
import os
import socket
import subprocess
import sys
import time
from collections.abc import AsyncIterator, Iterator
from dataclasses import dataclass
from pathlib import Path

import httpx2
from mcp import ClientSession, StdioServerParameters, stdio_client
from mcp.client.streamable_http import streamable_http_client


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


def non_loopback_ip() -> str | None:
    """This machine's address on its default route (no packet is sent)."""
    with socket.socket(socket.AF_INET, socket.SOCK_DGRAM) as s:
        try:
            s.connect(("10.255.255.255", 1))
            ip = s.getsockname()[0]
        except OSError:
            return None
    return None if ip.startswith("127.") else str(ip)


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


def wait_listening(port: int, proc: subprocess.Popen[bytes], timeout: float = 20.0) -> None:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if proc.poll() is not None:
            raise RuntimeError(f"tooldeck serve exited with {proc.returncode}")
        with socket.socket() as s:
            if s.connect_ex(("127.0.0.1", port)) == 0:
                return
        time.sleep(0.05)
    raise TimeoutError(f"nothing listening on port {port}")


@contextlib.contextmanager
def run_http(root: Path, state: Path, bind: str, env: dict[str, str] | None = None) -> Iterator[HttpServer]:
    """``tooldeck serve --http BIND`` (BIND = HOST:PORT or :PORT); stopped at exit."""
    port = int(bind.rsplit(":", 1)[1])
    err = state / f"http-{port}.stderr"
    with open(err, "wb") as fh:
        proc = subprocess.Popen(
            serve_command(root, state, "--http", bind),
            stdin=subprocess.DEVNULL,
            stdout=subprocess.DEVNULL,
            stderr=fh,
            env={**os.environ, **(env or {})},
        )
    try:
        wait_listening(port, proc)
        yield HttpServer(proc, port, err)
    finally:
        proc.terminate()
        try:
            proc.wait(10)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()
