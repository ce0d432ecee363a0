"""A server that runs for days (issue 30): clients that cancel calls, drop
connections mid-call and never close their sessions leave nothing behind.

Against a spawned ``tooldeck serve --http``: 50 calls cancelled mid-flight
(``notifications/cancelled``, then the stream dropped, as an SDK client
cancelled by its caller does) and 50 raw connections reset (RST) after
``tools/call``; then the server's open files and threads, read from
``/proc`` (not from tooldeck's own view), must come back near idle. Before
the fix each cancelled call left its worker thread's SQLite connections open
for good (+25 files for 25 + 25 calls) and its thread up for a minute.
"""

from __future__ import annotations

import json
import os
import random
import signal
import socket
import struct
import threading
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import httpx2
import pytest

from tests.mcp.mcp_e2e import free_port, run_http
from tests.support.require import require

pytestmark = pytest.mark.timeout(180)

ACCEPT = {"Accept": "application/json, text/event-stream", "Content-Type": "application/json"}
VERSION = "2025-11-25"


def _workspace(root: Path, files: int = 900) -> None:
    for i in range(files):
        d = root / f"pkg{i % 20}"
        d.mkdir(parents=True, exist_ok=True)
        body = "".join(
            f"def handler_{i}_{j}(request, session):\n"
            f"    return session.lookup(request.key_{j}) or compute_{j}(request)\n\n"
            for j in range(10)
        )
        (d / f"mod{i}.py").write_text(f"class Service{i}:\n    pass\n\n{body}")


def _counts(pid: int) -> tuple[int, int]:
    threads = next(
        int(line.split()[1])
        for line in Path(f"/proc/{pid}/status").read_text().splitlines()
        if line.startswith("Threads:")
    )
    return len(os.listdir(f"/proc/{pid}/fd")), threads


class _Session:
    def __init__(self, url: str) -> None:
        self.url, self.client, self.next = url, httpx2.Client(timeout=60), 1
        init = {"protocolVersion": VERSION, "capabilities": {}, "clientInfo": {"name": "t", "version": "0"}}
        r = self.client.post(url, headers=ACCEPT, json=self.request("initialize", init))
        assert r.status_code == 200, r.text
        self.sid = r.headers["mcp-session-id"]
        self.headers = {**ACCEPT, "mcp-session-id": self.sid, "mcp-protocol-version": VERSION}
        self.client.post(url, headers=self.headers, json={"jsonrpc": "2.0", "method": "notifications/initialized"})

    def request(self, method: str, params: dict) -> dict:
        self.next += 1
        return {"jsonrpc": "2.0", "id": self.next, "method": method, "params": params}

    def call(self, name: str, arguments: dict) -> str:
        msg = self.request("tools/call", {"name": name, "arguments": arguments})
        return self.client.post(self.url, headers=self.headers, json=msg).text

    def cancelled(self, name: str, arguments: dict, after: float | Callable[[], Any]) -> None:
        """The call, cancelled ``after`` seconds in (or once ``after()`` returns)."""
        msg = self.request("tools/call", {"name": name, "arguments": arguments})
        with self.client.stream("POST", self.url, headers=self.headers, json=msg):
            _wait(after)
            note = {"requestId": msg["id"], "reason": "test"}
            self.client.post(
                self.url,
                headers=self.headers,
                json={"jsonrpc": "2.0", "method": "notifications/cancelled", "params": note},
            )

    def reset(self, port: int, name: str, arguments: dict, after: float | Callable[[], Any]) -> None:
        """The call on a connection of its own, reset ``after`` seconds in (or once ``after()`` returns)."""
        body = json.dumps(self.request("tools/call", {"name": name, "arguments": arguments})).encode()
        head = "".join(f"{k}: {v}\r\n" for k, v in self.headers.items())
        raw = f"POST /mcp HTTP/1.1\r\nHost: 127.0.0.1:{port}\r\n{head}Content-Length: {len(body)}\r\n\r\n"
        with socket.create_connection(("127.0.0.1", port)) as s:
            s.sendall(raw.encode() + body)
            _wait(after)
            s.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, struct.pack("ii", 1, 0))  # RST on close

    def close(self) -> None:
        self.client.delete(self.url, headers=self.headers)
        self.client.close()


def _wait(after: float | Callable[[], Any]) -> None:
    if callable(after):
        after()
    else:
        time.sleep(after)


def _settled(pid: int, idle: tuple[int, int], seconds: float) -> tuple[int, int]:
    deadline = time.monotonic() + seconds
    now = _counts(pid)
    while time.monotonic() < deadline and (now[0] > idle[0] + 10 or now[1] > idle[1] + 4):
        time.sleep(0.5)
        now = _counts(pid)
    return now


def test_cancelled_calls_and_reset_connections_leave_nothing_behind(tmp_path: Path) -> None:
    require("/proc", present=os.path.isdir("/proc/self/fd"), how="Linux with /proc mounted")
    root, state = tmp_path / "root", tmp_path / "state"
    root.mkdir()
    state.mkdir()
    _workspace(root)
    with run_http(root, state, f"127.0.0.1:{free_port()}") as server:
        warm = _Session(server.url)
        assert "files selected" in warm.call("context_builder", {"instructions": "session lookup handler"})
        assert "lookup" in warm.call("file_search", {"pattern": "lookup", "max_results": 5})
        time.sleep(2)
        idle = _counts(server.proc.pid)

        def churn(k: int) -> None:
            s = _Session(server.url)
            for i in range(25):
                task = {"instructions": f"compute handler {k} {i} session request"}
                s.cancelled("context_builder", task, 0.02 + (i % 5) * 0.04)
                s.reset(server.port, "file_search", {"pattern": f"compute_{i}|Service{k}{i}"}, 0.02 + (i % 3) * 0.03)
            s.close()

        workers = [threading.Thread(target=churn, args=(k,)) for k in range(2)]
        for t in workers:
            t.start()
        for t in workers:
            t.join()
        busy = _counts(server.proc.pid)
        after = _settled(server.proc.pid, idle, 25)
        assert after[0] <= idle[0] + 10, (idle, busy, after)  # open files
        assert after[1] <= idle[1] + 4, (idle, busy, after)  # threads
        # the server still answers, as fast as ever
        assert "lookup" in warm.call("file_search", {"pattern": "lookup", "max_results": 5})


def _initialize(client: httpx2.Client, url: str) -> httpx2.Response:
    init = {"protocolVersion": VERSION, "capabilities": {}, "clientInfo": {"name": "t", "version": "0"}}
    return client.post(url, headers=ACCEPT, json={"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": init})


def _room_after(client: httpx2.Client, url: str, seconds: float) -> float:
    """Seconds until the full server admits a new session. Asking never
    touches the sessions that fill it (a request to a session would keep it
    alive); a session admitted is closed again at once."""
    t0 = time.monotonic()
    while time.monotonic() - t0 < seconds:
        r = _initialize(client, url)
        if r.status_code == 200:
            client.delete(url, headers={**ACCEPT, "mcp-session-id": r.headers["mcp-session-id"]})
            return time.monotonic() - t0
        assert r.status_code == 503, r.text
        time.sleep(0.1)
    raise AssertionError(f"no session expired in {seconds} s")


def test_idle_sessions_are_closed_and_the_cap_says_so(tmp_path: Path) -> None:
    root, state = tmp_path / "root", tmp_path / "state"
    root.mkdir()
    state.mkdir()
    (root / "a.txt").write_text("hello\n")
    with run_http(
        root, state, f"127.0.0.1:{free_port()}", extra=["--session-idle", "1.5", "--max-sessions", "3"]
    ) as server:
        sessions = [_Session(server.url)]
        first_done = time.monotonic()  # its last request (notifications/initialized) was answered
        sessions += [_Session(server.url) for _ in range(2)]
        with httpx2.Client(timeout=30) as client:
            r = _initialize(client, server.url)
            assert r.status_code == 503
            assert "3 MCP sessions are open" in r.json()["error"]["message"]
            assert "--max-sessions" in r.json()["error"]["message"]
            _room_after(client, server.url, 20)  # never closed with DELETE: they expire
            assert time.monotonic() - first_done >= 1.4  # not before its idle time (1.5 s)
            r = client.post(server.url, headers=sessions[0].headers, json={"jsonrpc": "2.0", "id": 9, "method": "ping"})
            assert r.status_code == 404  # the session is gone, with its state
            assert _Session(server.url).sid  # and room for new ones


def test_a_session_never_initialized_goes_after_a_short_grace(tmp_path: Path) -> None:
    """``initialize`` without ``notifications/initialized``: closed after the
    grace (a quarter of --session-idle), while a session in use keeps the
    full idle time."""
    root, state = tmp_path / "root", tmp_path / "state"
    root.mkdir()
    state.mkdir()
    (root / "a.txt").write_text("hello\n")
    with run_http(
        root, state, f"127.0.0.1:{free_port()}", extra=["--session-idle", "12", "--max-sessions", "2"]
    ) as server:
        used = _Session(server.url)
        assert "hello" in used.call("read_file", {"path": "a.txt"})
        with httpx2.Client(timeout=30) as client:
            half = _initialize(client, server.url)  # never initialized
            assert half.status_code == 200
            t0 = time.monotonic()
            assert _initialize(client, server.url).status_code == 503
            waited = _room_after(client, server.url, 11)
            assert 2.5 <= time.monotonic() - t0 < 11, waited  # the grace (3 s), not the idle time (12 s)
            ping = {"jsonrpc": "2.0", "id": 9, "method": "ping"}
            gone = {**used.headers, "mcp-session-id": half.headers["mcp-session-id"]}
            assert client.post(server.url, headers=gone, json=ping).status_code == 404
            assert client.post(server.url, headers=used.headers, json=ping).status_code == 200


def test_sigint_mid_batch_then_the_next_start_leaves_one_side_before_any_call(tmp_path: Path) -> None:
    """SIGINT ends the server at once (``os._exit``), in the middle of an
    apply_patch's renames when it comes then. The next ``tooldeck serve``
    recovers the journal while it starts: once it listens, before any call,
    every file of the batch is on one side and no temp file or journal is
    left (read from the file system)."""
    from tests.workspace.test_crash_recovery import leftovers, make_tree, side, write_patches

    root, state = tmp_path / "root", tmp_path / "state"
    root.mkdir()
    state.mkdir()
    names = make_tree(root, 300)
    patches = write_patches(tmp_path, names)
    rng = random.Random(30)
    full, cut = float("inf"), 0
    for k in range(9):
        with run_http(root, state, f"127.0.0.1:{free_port()}") as server:
            now = side(root, names)
            assert now in ("A", "B"), f"after kill {k - 1}: {now}"
            assert not leftovers(root, state), leftovers(root, state)[:5]
            session = _Session(server.url)
            if k == 0:  # an undisturbed patch tells how long one takes
                t0 = time.monotonic()
                assert "error" not in session.call("apply_patch", {"input": patches[now].read_text()})[:200]
                full = time.monotonic() - t0
                assert side(root, names) != now
                continue
            call = threading.Thread(target=_quiet_call, args=(session, patches[now].read_text()))
            call.start()
            time.sleep(rng.uniform(0.4, 1.05) * full)
            server.proc.send_signal(signal.SIGINT)
            assert server.proc.wait(10) == 0
            call.join(30)
            cut += bool(leftovers(root, state)) or side(root, names) not in ("A", "B")
    assert cut, "no SIGINT came in the middle of a batch: the test proved nothing"


def _quiet_call(session: _Session, patch: str) -> None:
    try:
        session.call("apply_patch", {"input": patch})
    except httpx2.HTTPError:
        pass  # the server stopped mid-call


def _cmdline_pids(cmdline: bytes) -> list[int]:
    """Processes whose command line is ``cmdline`` (NUL-separated), from /proc."""
    found = []
    for entry in os.listdir("/proc"):
        if entry.isdigit():
            try:
                if Path(f"/proc/{entry}/cmdline").read_bytes() == cmdline:
                    found.append(int(entry))
            except OSError:
                continue
    return found


def _until(what: str, check: Callable[[], Any], seconds: float) -> Any:
    deadline = time.monotonic() + seconds
    while not (value := check()):
        assert time.monotonic() < deadline, f"{what}: not within {seconds} s"
        time.sleep(0.02)
    return value


def _alive(pid: int) -> bool:
    try:
        return Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0] != "Z"
    except OSError:
        return False


def test_a_cancelled_or_dropped_call_stops_its_work(tmp_path: Path) -> None:
    """The work of a call is seen in /proc: a shell command ``cat`` of a FIFO
    that nobody writes, which would wait until the profile's idle limit
    (15 s). Once the client cancels the call (``notifications/cancelled``)
    or resets its connection, the ``cat`` process is gone within 8 s: the
    cancellation reached the work, it did not just end the HTTP exchange."""
    require("/proc", present=os.path.isdir("/proc/self/fd"), how="Linux with /proc mounted")
    root, state = tmp_path / "root", tmp_path / "state"
    root.mkdir()
    state.mkdir()
    env = {"TOOLDECK_CONFIG": str(state / "no-user-config.toml")}  # the default profile: `cat` runs unasked
    with run_http(root, state, f"127.0.0.1:{free_port()}", env=env) as server:
        s = _Session(server.url)
        for k in range(4):
            fifo = f"wait-{os.getpid()}-{k}.fifo"
            os.mkfifo(root / fifo)
            marker = b"/usr/bin/cat\0" + fifo.encode() + b"\0"
            started: list[int] = []

            def running(m: bytes = marker, into: list[int] = started) -> None:
                into += _until("the call's cat started", lambda: _cmdline_pids(m), 30)

            args = {"program": "cat", "arguments": [fifo]}
            if k % 2 == 0:
                s.cancelled("shell", args, running)
            else:
                s.reset(server.port, "shell", args, running)
            how = "cancelled" if k % 2 == 0 else "reset"
            _until(f"cat stopped once its call was {how}", lambda p=started: not any(_alive(q) for q in p), 8)
        assert "hello" in s.call("shell", {"program": "echo", "arguments": ["hello"]})  # the server goes on
