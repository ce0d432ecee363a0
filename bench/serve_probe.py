"""Helpers for the serve benchmarks (serve_soak, serve_stop, serve_restart):
spawn ``tooldeck serve --http``, read a process tree's open files, threads and
RSS from ``/proc``, and drive raw MCP traffic — sessions, calls cancelled with
``notifications/cancelled``, connections reset mid-call — with ``httpx2`` and
plain sockets (no SDK client, so nothing on the client side pools or retries).
"""

from __future__ import annotations

import contextlib
import json
import os
import socket
import struct
import subprocess
import sys
import time
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import httpx2

ACCEPT = {"Accept": "application/json, text/event-stream", "Content-Type": "application/json"}
VERSION = "2025-11-25"


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def make_workspace(root: Path, files: int = 1500) -> None:
    """A Python tree big enough that a search or context build takes a while."""
    for i in range(files):
        d = root / f"pkg{i % 30}" / f"mod{i % 7}"
        d.mkdir(parents=True, exist_ok=True)
        body = "".join(
            f"def handler_{i}_{j}(request, session):\n    '''Handle request {j} of session state.'''\n"
            f"    return session.lookup(request.key_{j}) or compute_{(i + j) % 50}(request)\n\n"
            for j in range(12)
        )
        (d / f"file{i}.py").write_text(f"import os\n\nclass Service{i}:\n    pass\n\n{body}")
    (root / "README.md").write_text("# sample\n\nSession handling and request lookup.\n")


@dataclass
class Server:
    proc: subprocess.Popen[bytes]
    port: int

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}/mcp"

    @property
    def pid(self) -> int:
        return self.proc.pid


def spawn(
    root: Path, state: Path, *extra: str, env: dict[str, str] | None = None, stderr: Path | None = None
) -> Server:
    port = free_port()
    cmd = [
        sys.executable,
        "-m",
        "tooldeck",
        "serve",
        str(root),
        "--state-dir",
        str(state),
        "--http",
        f"127.0.0.1:{port}",
    ]
    err = open(stderr or os.devnull, "wb")  # noqa: SIM115 - handed to the child
    proc = subprocess.Popen(
        [*cmd, *extra],
        stdin=subprocess.DEVNULL,
        stdout=subprocess.DEVNULL,
        stderr=err,
        env={**os.environ, **(env or {})},
    )
    err.close()
    deadline = time.monotonic() + 90
    while time.monotonic() < deadline:
        if proc.poll() is not None:
            raise RuntimeError(f"tooldeck serve exited with {proc.returncode}")
        with socket.socket() as s:
            if s.connect_ex(("127.0.0.1", port)) == 0:
                return Server(proc, port)
        time.sleep(0.05)
    proc.kill()
    raise TimeoutError("the server never listened")


def stop(server: Server) -> None:
    if server.proc.poll() is None:
        server.proc.terminate()
        try:
            server.proc.wait(10)
        except subprocess.TimeoutExpired:
            server.proc.kill()
            server.proc.wait()


# /proc ------------------------------------------------------------------------
def children(pid: int) -> list[int]:
    """Every descendant of ``pid`` (from /proc/*/stat parent links)."""
    parents: dict[int, list[int]] = {}
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        try:
            stat = Path(f"/proc/{entry}/stat").read_text()
        except OSError:
            continue
        ppid = int(stat.rsplit(")", 1)[1].split()[1])
        parents.setdefault(ppid, []).append(int(entry))
    out, todo = [], [pid]
    while todo:
        for kid in parents.get(todo.pop(), []):
            out.append(kid)
            todo.append(kid)
    return out


@dataclass
class Counts:
    fds: int
    threads: int
    rss_mb: float  # the server process
    workers_rss_mb: float  # its descendants
    workers: int

    def row(self) -> list[str]:
        return [str(self.fds), str(self.threads), f"{self.rss_mb:.0f}", f"{self.workers_rss_mb:.0f}", str(self.workers)]


def _status(pid: int) -> dict[str, str]:
    out: dict[str, str] = {}
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        key, _, value = line.partition(":")
        out[key] = value.strip()
    return out


def counts(pid: int) -> Counts:
    st = _status(pid)
    kids = children(pid)
    kid_rss = 0.0
    for kid in kids:
        with contextlib.suppress(OSError):
            kid_rss += int(_status(kid).get("VmRSS", "0 kB").split()[0]) / 1024
    return Counts(
        fds=len(os.listdir(f"/proc/{pid}/fd")),
        threads=int(st["Threads"]),
        rss_mb=int(st["VmRSS"].split()[0]) / 1024,
        workers_rss_mb=kid_rss,
        workers=len(kids),
    )


def cpu_seconds(pid: int) -> float:
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


# raw MCP ------------------------------------------------------------------------
def _payload(text: str) -> dict:
    """The JSON-RPC message of a JSON or SSE response body."""
    for line in text.splitlines():
        if line.startswith("data:") and line[5:].strip():
            return json.loads(line[5:])
    return json.loads(text)


class Session:
    """One MCP session over plain HTTP requests."""

    def __init__(self, url: str, client: httpx2.Client | None = None) -> None:
        self.url = url
        self.client = client or httpx2.Client(timeout=60)
        self.next_id = 1
        r = self.client.post(
            url,
            headers=ACCEPT,
            json=self._request(
                "initialize",
                {"protocolVersion": VERSION, "capabilities": {}, "clientInfo": {"name": "probe", "version": "0"}},
            ),
        )
        r.raise_for_status()
        self.sid = r.headers["mcp-session-id"]
        self.headers = {**ACCEPT, "mcp-session-id": self.sid, "mcp-protocol-version": VERSION}
        self.notify("notifications/initialized")

    def _request(self, method: str, params: dict) -> dict:
        msg = {"jsonrpc": "2.0", "id": self.next_id, "method": method, "params": params}
        self.next_id += 1
        return msg

    def notify(self, method: str, params: dict | None = None) -> None:
        msg: dict = {"jsonrpc": "2.0", "method": method}
        if params is not None:
            msg["params"] = params
        self.client.post(self.url, headers=self.headers, json=msg)

    def call(self, name: str, arguments: dict) -> dict:
        r = self.client.post(
            self.url, headers=self.headers, json=self._request("tools/call", {"name": name, "arguments": arguments})
        )
        r.raise_for_status()
        return _payload(r.text)

    def call_cancelled(self, name: str, arguments: dict, after: float) -> None:
        """Start a call, then after ``after`` seconds send notifications/cancelled
        and drop the response stream (what an SDK client cancelled by its caller does)."""
        msg = self._request("tools/call", {"name": name, "arguments": arguments})
        with self.client.stream("POST", self.url, headers=self.headers, json=msg):
            time.sleep(after)
            self.notify("notifications/cancelled", {"requestId": msg["id"], "reason": "probe"})

    def close(self) -> None:
        with contextlib.suppress(Exception):
            self.client.delete(self.url, headers=self.headers)
        self.client.close()


def reset_call(port: int, sid: str, name: str, arguments: dict, after: float, ident: int = 1) -> None:
    """A ``tools/call`` on a raw socket, reset (RST, SO_LINGER 0) ``after``
    seconds in: a client that vanished mid-call."""
    body = json.dumps(
        {"jsonrpc": "2.0", "id": ident, "method": "tools/call", "params": {"name": name, "arguments": arguments}}
    ).encode()
    head = (
        f"POST /mcp HTTP/1.1\r\nHost: 127.0.0.1:{port}\r\nContent-Type: application/json\r\n"
        f"Accept: application/json, text/event-stream\r\nmcp-session-id: {sid}\r\n"
        f"mcp-protocol-version: {VERSION}\r\nContent-Length: {len(body)}\r\n\r\n"
    ).encode()
    s = socket.create_connection(("127.0.0.1", port))
    s.sendall(head + body)
    time.sleep(after)
    s.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, struct.pack("ii", 1, 0))
    s.close()


def abandoned_session(url: str) -> None:
    """Initialize a session and walk away without DELETE."""
    with httpx2.Client(timeout=30) as client:
        Session(url, client)


@contextlib.contextmanager
def served(root: Path, state: Path, *extra: str, env: dict[str, str] | None = None) -> Iterator[Server]:
    server = spawn(root, state, *extra, env=env)
    try:
        yield server
    finally:
        stop(server)


def settle(pid: int, baseline: Counts, seconds: float) -> Counts:
    """Poll until the counts are back near ``baseline`` or ``seconds`` pass."""
    deadline = time.monotonic() + seconds
    now = counts(pid)
    while time.monotonic() < deadline and (now.fds > baseline.fds + 10 or now.threads > baseline.threads + 4):
        time.sleep(0.5)
        now = counts(pid)
    return now
