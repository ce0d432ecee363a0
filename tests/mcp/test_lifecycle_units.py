"""DropWatch and InFlight (issue 30): a POST carrying a ``tools/call`` whose
client disconnects before the answer is sent cancels that call's task and
Invocation; one whose answer was sent cancels nothing; a drop seen before
the call registered still reaches it; bodies are replayed to the app whole."""

from __future__ import annotations

import asyncio
import json
from typing import Any

from tooldeck.core.invocation import Invocation
from tooldeck.mcp.lifecycle import DropWatch, InFlight

CALL = json.dumps({"jsonrpc": "2.0", "id": 7, "method": "tools/call", "params": {"name": "x"}}).encode()
SCOPE = {"type": "http", "method": "POST", "path": "/mcp", "headers": [(b"mcp-session-id", b"s1")]}


def _receiver(messages: list[dict[str, Any]], gate: asyncio.Event) -> Any:
    queue = list(messages)

    async def receive() -> dict[str, Any]:
        if queue:
            return queue.pop(0)
        await gate.wait()  # the client goes away (or the response completes)
        return {"type": "http.disconnect"}

    return receive


async def _run(answer_first: bool) -> tuple[Invocation, asyncio.Task[Any], bytes]:
    inflight, inv = InFlight(), Invocation.silent()
    gate = asyncio.Event()
    seen = b""
    call = asyncio.ensure_future(asyncio.sleep(30))

    async def app(scope: Any, receive: Any, send: Any) -> None:
        nonlocal seen
        seen = (await receive())["body"]
        with inflight.track("s1", 7, inv, call):
            if answer_first:
                await send({"type": "http.response.start", "status": 200, "headers": []})
                await send({"type": "http.response.body", "body": b"{}", "more_body": False})
            gate.set()
            try:
                await asyncio.wait_for(asyncio.shield(call), 0.5)
            except (TimeoutError, asyncio.CancelledError):
                pass

    async def send(message: dict[str, Any]) -> None:
        return None

    receive = _receiver([{"type": "http.request", "body": CALL, "more_body": False}], gate)
    await DropWatch(app, inflight)(SCOPE, receive, send)
    return inv, call, seen


def test_a_dropped_connection_cancels_its_call() -> None:
    inv, call, seen = asyncio.run(_run(answer_first=False))
    assert seen == CALL
    assert inv.cancelled and call.cancelled()


def test_an_answered_call_is_not_cancelled() -> None:
    async def main() -> tuple[bool, bool]:
        inv, call, _ = await _run(answer_first=True)
        done = call.cancelled()
        call.cancel()
        return inv.cancelled, done

    assert asyncio.run(main()) == (False, False)


def test_a_drop_before_the_call_registers_still_reaches_it() -> None:
    async def main() -> tuple[bool, bool]:
        inflight, inv = InFlight(), Invocation.silent()
        inflight.dropped("s1", 7)
        call = asyncio.ensure_future(asyncio.sleep(30))
        with inflight.track("s1", 7, inv, call):
            await asyncio.sleep(0)
        other = Invocation.silent()
        with inflight.track("s1", 8, other, asyncio.ensure_future(asyncio.sleep(0))):
            pass
        return inv.cancelled and call.cancelled(), other.cancelled

    assert asyncio.run(main()) == (True, False)


class _Transport:
    """What DropWatch reads of the SDK's session transport."""

    def __init__(self, scope: Any) -> None:
        self.idle_scope = scope
        self._requests_in_flight = 0


async def _dropped_call(*, another_request: bool) -> float:
    """A call whose client disconnects before the answer, in a session whose
    idle deadline is an hour away; the deadline left (seconds from now)."""
    import anyio

    with anyio.CancelScope() as scope:
        scope.deadline = anyio.current_time() + 3600
        transport = _Transport(scope)
        sessions = type("Manager", (), {"_server_instances": {"s1": transport}})()
        watch = DropWatch(None, InFlight(), sessions, 10, grace=2.0)
        gate = asyncio.Event()

        async def app(scope_: Any, receive: Any, send: Any) -> None:
            if (await receive())["body"] != CALL:  # the other request: answered at once
                return
            gate.set()  # the client is gone; the call ends unanswered
            await asyncio.sleep(0.05)
            if another_request:  # the client came back meanwhile (another POST of its session)
                await watch(SCOPE, _receiver([{"type": "http.request", "body": b"{}"}], asyncio.Event()), _nothing)

        watch.app = app
        receive = _receiver([{"type": "http.request", "body": CALL, "more_body": False}], gate)
        await watch(SCOPE, receive, _nothing)
        left = scope.deadline - anyio.current_time()
        scope.deadline = float("inf")
    return left


async def _nothing(message: dict[str, Any]) -> None:
    return None


def test_a_session_whose_call_was_dropped_gets_the_short_grace() -> None:
    assert asyncio.run(_dropped_call(another_request=False)) <= 2.0


def test_a_session_that_came_back_keeps_its_idle_time() -> None:
    assert asyncio.run(_dropped_call(another_request=True)) > 3000


ARENAS = """
import ctypes, os, sys, threading
sys.path[:0] = [{src!r}]
from tooldeck.mcp.lifecycle import limit_malloc_arenas
if {limit}:
    assert limit_malloc_arenas()
libc = ctypes.CDLL("libc.so.6")
libc.malloc.restype = libc.fdopen.restype = ctypes.c_void_p
libc.free.argtypes = libc.fclose.argtypes = [ctypes.c_void_p]
libc.malloc_info.argtypes = [ctypes.c_int, ctypes.c_void_p]
gate = threading.Barrier(8)
def busy():
    blocks = [libc.malloc(4096) for _ in range(64)]  # each thread allocates while the others hold theirs
    gate.wait()
    for b in blocks:
        libc.free(b)
threads = [threading.Thread(target=busy) for _ in range(8)]
for t in threads: t.start()
for t in threads: t.join()
out = os.memfd_create("info")
f = libc.fdopen(os.dup(out), b"w")
libc.malloc_info(0, f)
libc.fclose(f)
os.lseek(out, 0, 0)
print(os.read(out, 1 << 20).count(b"<heap nr="))
"""


def test_the_http_server_keeps_few_malloc_arenas() -> None:
    """glibc's own report (``malloc_info``) of a process whose eight threads
    allocate at once: one arena per thread without the limit, one in all with it."""
    import os
    import subprocess
    import sys
    from pathlib import Path

    src = str(Path(__file__).resolve().parents[2] / "src")
    env = {k: v for k, v in os.environ.items() if k != "MALLOC_ARENA_MAX"}

    def arenas(limit: bool) -> int:
        code = ARENAS.format(src=src, limit=limit)
        return int(subprocess.run([sys.executable, "-c", code], capture_output=True, check=True, env=env).stdout)

    assert arenas(limit=False) > 2  # the test can tell
    assert arenas(limit=True) == 1
