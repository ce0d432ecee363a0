"""Sessions and calls of a long-running HTTP server: what ends them.

A server behind an editor, a dashboard and several agents runs for days; its
clients drop connections mid-call, are cancelled by their callers and forget
to close their sessions. Everything they leave must be released:

* a call cancelled by ``notifications/cancelled`` is cancelled by the SDK (its
  handler's scope); the toolbox then sets the call's :class:`Invocation`
  cancel flag, which the long tools poll;
* a call whose HTTP connection drops before its answer is sent is cancelled
  here: :class:`DropWatch` (ASGI middleware) notices the disconnect and
  :class:`InFlight` cancels the call's task and invocation — the SDK itself
  would let it run to the end and throw the answer away;
* an HTTP session with no request for ``--session-idle`` seconds (default
  :data:`SESSION_IDLE`) is closed with its state (the SDK's idle timeout), and
  at most ``--max-sessions`` (default :data:`MAX_SESSIONS`) live at once: a
  client opening one more gets HTTP 503 with a message saying so;
* a session that looks abandoned is closed sooner, after a short grace
  (:func:`grace_for`: a quarter of the idle time, at most
  :data:`ABANDON_GRACE`) unless another request comes: one whose only
  request was the one that opened it (``notifications/initialized`` never
  came), and one whose last request was a call whose connection dropped
  before its answer. Such sessions are what clients that vanish leave; each
  keeps its transport, streams and task group (~40–250 KB with its
  allocator's fragments) for the whole idle time otherwise;
* SIGINT, SIGTERM and (over stdio) the end of input stop the server at once
  (:func:`exit_now`): its worker processes are killed and reaped first.
"""

from __future__ import annotations

import asyncio
import atexit
import contextlib
import json
import logging
import os
import signal
import sys
import time
import weakref
from collections.abc import Callable, Iterator
from typing import TYPE_CHECKING, Any, NoReturn

if TYPE_CHECKING:  # exit_now and exit_on_signals are installed before the core is imported
    from tooldeck.core.invocation import Invocation

log = logging.getLogger("tooldeck.mcp")

SESSION_IDLE = 300.0  # seconds without a request before an HTTP session is closed
MAX_SESSIONS = 256  # live HTTP sessions at once
ABANDON_GRACE = 20.0  # at most this long for a session that looks abandoned (see grace_for)
_EARLY_TTL = 30.0  # a drop seen before its call registered is remembered this long
MAX_SCANNED = 4 * 1024 * 1024  # request bodies read to find their calls' ids (the SDK's own limit)

Key = tuple[str, str]


def grace_for(idle: float) -> float:
    """How long a session that looks abandoned is kept without a request:
    a quarter of the idle time, at most :data:`ABANDON_GRACE`."""
    return min(ABANDON_GRACE, idle / 4)


def _key(session_id: str | None, request_id: Any) -> Key:
    return (session_id or "", json.dumps(request_id))


class InFlight:
    """The ``tools/call`` requests running now, by (session id, request id).
    Used from the event loop only."""

    def __init__(self) -> None:
        self._calls: dict[Key, tuple[Invocation, asyncio.Task[Any] | None]] = {}
        self._early: dict[Key, float] = {}  # dropped before the handler registered

    def __len__(self) -> int:
        return len(self._calls)

    @contextlib.contextmanager
    def track(
        self, session_id: str | None, request_id: Any, inv: Invocation, task: asyncio.Task[Any]
    ) -> Iterator[None]:
        key = _key(session_id, request_id)
        self._calls[key] = (inv, task)
        if self._early.pop(key, None) is not None:
            self._cancel(inv, task)
        try:
            yield
        finally:
            self._calls.pop(key, None)

    def dropped(self, session_id: str | None, request_id: Any) -> None:
        """The connection carrying this request's answer is gone: cancel the call."""
        key = _key(session_id, request_id)
        entry = self._calls.get(key)
        if entry is None:
            now = time.monotonic()
            self._early = {k: t for k, t in self._early.items() if now - t < _EARLY_TTL}
            self._early[key] = now
            return
        log.debug("connection dropped: cancelling call %s of session %s", request_id, (session_id or "")[:8])
        self._cancel(*entry)

    @staticmethod
    def _cancel(inv: Invocation, task: asyncio.Task[Any] | None) -> None:
        inv.cancel()
        if task is not None and not task.done():
            task.cancel()


def _call_ids(body: bytes) -> list[Any]:
    """The ids of the ``tools/call`` requests in a POST body (one message or a batch)."""
    try:
        data = json.loads(body)
    except (ValueError, UnicodeDecodeError):
        return []
    messages = data if isinstance(data, list) else [data]
    return [
        m["id"] for m in messages if isinstance(m, dict) and m.get("method") == "tools/call" and m.get("id") is not None
    ]


class DropWatch:
    """ASGI middleware in front of the MCP app: cancels the calls of a POST
    whose client disconnects before the answer is sent, and answers a
    request that would open a session past the cap with a clear 503."""

    def __init__(
        self,
        app: Any,
        inflight: InFlight,
        sessions: Any = None,
        max_sessions: int | None = None,
        grace: float | None = None,
    ) -> None:
        self.app = app
        self.inflight = inflight
        self.sessions = sessions  # the SDK's session manager (its live sessions are counted)
        self.max_sessions = max_sessions
        self.grace = grace  # see grace_for; None: no early close
        self._seen: weakref.WeakKeyDictionary[Any, int] = weakref.WeakKeyDictionary()  # transport → POSTs seen

    async def __call__(self, scope: dict[str, Any], receive: Any, send: Any) -> None:
        if scope["type"] != "http" or scope.get("method") != "POST":
            await self.app(scope, receive, send)
            return
        headers = dict(scope.get("headers") or [])
        sid_raw = headers.get(b"mcp-session-id")
        if sid_raw is None:  # opens a session (or is refused by the SDK): no call to watch
            if self._full():
                await _too_many(send, self.max_sessions or 0)
            else:
                await self._opening(scope, receive, send)
            return
        self._count(sid_raw.decode("latin-1"))
        body, more = b"", True
        first: list[dict[str, Any]] = []
        while more and len(body) <= MAX_SCANNED:  # a bigger body is the SDK's to refuse (413), unread here
            message = await receive()
            first.append(message)
            if message["type"] != "http.request":
                break
            body += message.get("body", b"")
            more = message.get("more_body", False)
        ids = _call_ids(body) if not more else []
        replay = iter(first)

        async def replayed() -> Any:
            return next(replay, None) or await receive()

        if not ids:
            await self.app(scope, replayed, send)
            return
        await self._watched(scope, replayed, send, receive, sid_raw.decode("latin-1"), ids)

    async def _opening(self, scope: Any, receive: Any, send: Any) -> None:
        """The request that opens a session: the session gets the short grace
        until its next request (``notifications/initialized`` comes at once)."""
        opened: list[str] = []

        async def sending(message: dict[str, Any]) -> None:
            if message["type"] == "http.response.start":
                opened.extend(v.decode("latin-1") for k, v in message.get("headers", []) if k == b"mcp-session-id")
            await send(message)

        await self.app(scope, receive, sending)
        if opened:
            self._shorten(opened[0], seen=0)

    async def _watched(self, scope: Any, replayed: Any, send: Any, receive: Any, sid: str, ids: list[Any]) -> None:
        answered = dropped = False
        seen = self._count(sid, 0)

        async def sending(message: dict[str, Any]) -> None:
            nonlocal answered
            if message["type"] == "http.response.body" and not message.get("more_body", False):
                answered = True
            await send(message)

        async def watch() -> None:
            while (await receive())["type"] != "http.disconnect":
                pass
            if not answered:
                nonlocal dropped
                dropped = True
                for request_id in ids:
                    self.inflight.dropped(sid, request_id)

        watcher = asyncio.ensure_future(watch())
        try:
            await self.app(scope, replayed, sending)
        finally:
            watcher.cancel()
        if dropped:  # the client vanished mid-call: unless it comes back, the session goes soon
            self._shorten(sid, seen)

    def _transport(self, sid: str) -> Any:
        live = getattr(self.sessions, "_server_instances", None)
        return live.get(sid) if live is not None else None

    def _count(self, sid: str, step: int = 1) -> int:
        """Count a POST of session ``sid``; the session's count so far."""
        transport = self._transport(sid)
        if transport is None:
            return 0
        n = self._seen[transport] = self._seen.get(transport, 0) + step
        return n

    def _shorten(self, sid: str, seen: int) -> None:
        """Close session ``sid`` after the grace unless a request comes: not
        when one came after the request that ended (``seen``: the session's
        count then), nor while one is served (an open GET stream included)."""
        transport = self._transport(sid)
        scope = getattr(transport, "idle_scope", None)
        if self.grace is None or scope is None or scope.cancel_called:
            return
        if self._seen.get(transport, 0) != seen or getattr(transport, "_requests_in_flight", 0):
            return
        scope.deadline = min(scope.deadline, asyncio.get_running_loop().time() + self.grace)

    def _full(self) -> bool:
        live = getattr(self.sessions, "_server_instances", None)
        return self.max_sessions is not None and live is not None and len(live) >= self.max_sessions


async def _too_many(send: Any, cap: int) -> None:
    message = (
        f"tooldeck: {cap} MCP sessions are open, the most this server keeps (serve --max-sessions); "
        "close a session (HTTP DELETE) or retry once idle ones expire (serve --session-idle)"
    )
    body = json.dumps({"jsonrpc": "2.0", "id": None, "error": {"code": -32000, "message": message}}).encode()
    await send({"type": "http.response.start", "status": 503,
                "headers": [(b"content-type", b"application/json"), (b"retry-after", b"5")]})  # fmt: skip
    await send({"type": "http.response.body", "body": body})


# memory -------------------------------------------------------------------------
M_ARENA_MAX = -8  # glibc mallopt parameter
MALLOC_ARENAS = 1


def limit_malloc_arenas(arenas: int = MALLOC_ARENAS) -> bool:
    """At most ``arenas`` glibc malloc arenas from now on (``MALLOC_ARENA_MAX``
    in the environment wins). glibc gives each busy thread an arena of its own
    and keeps what is freed there: under the soak's churn (a dozen worker
    threads at a time) the server kept +41 MB after 2 minutes, +18 MB with 2
    arenas, at the same latency (``bench/serve_soak.py``). One arena (issue
    35): after indexing a 13k-file tree ~15 MB less than two
    (``bench/context_speed.py --arenas``), the same warm build CPU and soak
    latency. A thread that allocated before the call keeps its own arena:
    ``serve`` calls this first thing (``cli_serve.run_serve``). False where this
    is not glibc or the person set the variable."""
    if os.environ.get("MALLOC_ARENA_MAX") or not sys.platform.startswith("linux"):
        return False
    import ctypes

    try:
        mallopt = ctypes.CDLL("libc.so.6").mallopt
    except (OSError, AttributeError):  # not glibc
        return False
    return bool(mallopt(M_ARENA_MAX, arenas))


START_GC_THRESHOLD = 50_000  # young objects between two collections while a stdio server starts (default 700)


def defer_collection() -> Callable[[], None]:
    """Collect cyclic garbage rarely while the server starts; returns the
    function that puts the collector's thresholds back (the hand-over to the
    SDK calls it).

    Why: a start imports ~1,500 modules (the front, the runtime, a first
    call's tool model, then the catalog and the SDK), each allocating
    thousands of objects that live on; with the default threshold the
    collector ran ~85 young collections over them before the first call
    alone, each walking objects that are never garbage: 12-17 ms of the first
    ``tools/call``'s CPU (``bench/client_ready.py``). Young collections
    still run, every :data:`START_GC_THRESHOLD` objects, so a start that
    does make cyclic garbage stays bounded.

    ``restore`` first freezes what the start made (``gc.freeze``: the
    modules, classes and catalog that live as long as the process): the
    first full collection after the start walked all of them, ~50 ms of the
    event loop inside whatever request allocated then (``bench/loop_stall.py``
    found it in the SDK's first ``tools/list``); frozen, no collection
    walks them again."""
    import gc

    saved = gc.get_threshold()
    gc.set_threshold(max(saved[0], START_GC_THRESHOLD), *saved[1:])
    done = False

    def restore() -> None:
        nonlocal done
        if not done:
            done = True
            gc.freeze()
            gc.set_threshold(*saved)

    return restore


# shutdown -----------------------------------------------------------------------
def child_pids() -> list[int]:
    """This process's children (worker processes, helpers, commands), from
    ``/proc``; empty where ``/proc`` cannot tell."""
    pids: list[int] = []
    try:
        tasks = os.listdir("/proc/self/task")
    except OSError:
        return pids
    for tid in tasks:
        try:
            with open(f"/proc/self/task/{tid}/children") as fh:
                pids += [int(p) for p in fh.read().split()]
        except (OSError, ValueError):
            continue
    return pids


def stop_children(grace: float = 0.05) -> None:
    """Kill every child process and reap it, so none outlives the server.
    Worker processes (parsers, the token worker, helpers) keep no state worth
    a graceful stop; a command still running is stopped like the server."""
    pids = child_pids()
    for pid in pids:
        with contextlib.suppress(OSError):
            os.kill(pid, signal.SIGKILL)
    deadline = time.monotonic() + grace
    for pid in pids:
        while True:
            try:
                done, _ = os.waitpid(pid, os.WNOHANG)
            except ChildProcessError:  # not ours to reap (already reaped by its owner)
                break
            if done or time.monotonic() > deadline:
                break
            time.sleep(0.002)


def exit_now(status: int = 0) -> NoReturn:
    """End the server at once: children stopped and reaped, output flushed,
    then ``os._exit``. The interpreter's own finalisation (a full garbage
    collection of every loaded module: >1 s measured) is skipped: SQLite's
    WAL and the write journal make an abrupt end safe (a write in flight is
    finished or rolled back by the journal's recovery at the next start, a
    deferred cleanup is done by it too)."""
    try:
        stop_children()
        if os.environ.get("COVERAGE_PROCESS_START"):  # coverage writes its data at exit
            atexit._run_exitfuncs()
        for stream in (sys.stdout, sys.stderr):
            with contextlib.suppress(Exception):
                stream.flush()
    finally:
        os._exit(status)


def exit_on_signals() -> None:
    """SIGINT and SIGTERM end the process at once (:func:`exit_now`)."""
    for sig in (signal.SIGINT, signal.SIGTERM):
        signal.signal(sig, lambda _s, _f: exit_now(0))
