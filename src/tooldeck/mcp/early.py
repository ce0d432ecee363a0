"""The stdio server's early front: answers before the SDK is loaded.

A client spawns ``tooldeck serve`` and at once sends ``initialize``, then
``tools/list``, ``resources/list``, ``resources/templates/list`` and
``prompts/list``, and soon a first ``tools/call``; Codex and Claude Code go
on without a server that is not ready after one to two seconds (issue 34).
Importing the MCP SDK costs ~0.4 s, so the SDK is kept off that path:

1. The event loop starts with nothing of the SDK. :class:`EarlyFront` reads
   stdin and answers, from the handshake cache when it holds the answer, else
   built by :mod:`tooldeck.mcp.wire` (the same functions the SDK's handlers
   return): ``initialize``, the four lists (``resources/list`` always live:
   the files change between two starts; a cold ``tools/list`` from the
   shipped declarations, :mod:`tooldeck.mcp.declared`, without the tool
   domains), ``ping``, and ``tools/call`` of read-only tools, run through the
   catalog's own tools (same validation, errors and result shape as the SDK path).
   Everything else waits, in order.
2. A start-up thread builds the runtime, then the catalog; the front then
   checks what it answered from the cache or the declarations
   (:meth:`EarlyFront.check_answers`). The SDK is imported only when a line
   needs it or the session falls idle: a short session of reads never pays
   for it. The order is in :mod:`tooldeck.mcp.early_serve`.
3. Hand-over: the SDK server gets the same reader and writer. It is first
   replayed ``initialize`` (its session state is that of a normal start),
   the notifications and the list requests the front answered (the
   :class:`~tooldeck.mcp.handshake_front.Tap` swallows its answers to those
   and records them in the cache), then every line the front left to it,
   then the live stream. Calls the front took are never replayed; they may
   still be running and answer when done, and a ``notifications/cancelled``
   for one is applied here, before or after the hand-over.

What is taken early is chosen conservatively: a request of an unusual shape,
a call with a progress token, a call of a tool that changes anything, reaches
the network (open-world) or may ask the person (the shell's and the agents'
domains: elicitation needs the SDK session), a first page with a cursor: all
of them wait for the SDK. A line that is not JSON is answered at
once with the same error the SDK path gives (:func:`~tooldeck.mcp.stdio.error_reply`).
The end of input during the early phase ends the process once the requests
read are answered (the SDK is loaded only when one of them needs it).
"""

from __future__ import annotations

import asyncio
import json
import logging
from typing import TYPE_CHECKING, Any

from tooldeck.mcp.early_steps import Ready, Started
from tooldeck.mcp.handshake_cache import HandshakeCache
from tooldeck.mcp.handshake_front import (
    LIST_CHANGED,
    LISTS,
    early_domain,
    early_tool,
    id_token,
    plain_call,
    plain_id,
    plain_initialize,
    plain_list,
    reply,
)
from tooldeck.mcp.resources import ResourceProvider
from tooldeck.mcp.stdio import FdWriter, LineWriter, Readline, error_reply, repair_surrogate_escapes
from tooldeck.mcp.wire import (
    BUILT_VERSIONS,
    HANDSHAKE_VERSIONS,
    LATEST_HANDSHAKE,
    initialize_result,
    internal_error,
    negotiate,
    to_call_result,
    tool_wire,
)

if TYPE_CHECKING:
    from tooldeck.mcp.declared import Declared

log = logging.getLogger("tooldeck.mcp")

DOMAINS_KEY = "tool_domains"  # in the handshake cache: tool name -> its catalog domain module
def _first_page(message: dict[str, Any]) -> bool:
    return plain_list({**message, "method": LISTS[0]})  # the same shape rule as the other lists


class EarlyFront:
    """Reads every line (before and after the hand-over) and answers what it
    can until :meth:`handoff`; see the module docstring. ``answered`` and
    ``version`` are what the :class:`Tap` needs."""

    def __init__(self, cache: HandshakeCache | None, writer: LineWriter | FdWriter, prompts: bool) -> None:
        self.cache = cache
        self.writer = writer
        self.prompts = prompts
        self.version: str | None = None
        self.answered: dict[str, tuple[str, dict[str, Any]]] = {}
        self.stopped = False  # the first line was not answered here: the SDK answers everything
        self.handed = False
        self.eof = False
        self.dirty = False  # the cache has answers not written yet
        self.finished = asyncio.Event()  # input ended and every request read is answered
        self.sdk_wanted = asyncio.Event()  # a request only the SDK answers was read
        self._deferred: list[bytes] = []
        self._owed = 0  # deferred requests the front did not answer
        self._lists: list[asyncio.Task[None]] = []
        self._calls: dict[str, asyncio.Task[None]] = {}
        self._domains: dict[tuple[str, str], asyncio.Future[Any]] = {}  # (domain, tool) -> its Toolbox
        self._file_lists: list[asyncio.Task[None]] = []
        loop = asyncio.get_running_loop()
        self.last_line = loop.time()  # when the last line was read (the SDK loads once the session is idle)
        self._files: asyncio.Future[ResourceProvider] = loop.create_future()
        self._started: asyncio.Future[Started] = loop.create_future()
        self._declared: asyncio.Future[list[Declared] | None] = loop.create_future()
        self._ready: asyncio.Future[Ready] = loop.create_future()
        self._sdk: asyncio.Queue[bytes] = asyncio.Queue()

    # start-up ------------------------------------------------------------------
    def workspace(self, provider: ResourceProvider, started: Started) -> None:
        """The runtime is started (its roots restored): the resource lists
        can be answered, and read-only calls run by their domain's tools,
        before the tool model and the catalog are loaded."""
        if not self._files.done():
            self._files.set_result(provider)
        if not self._started.done():
            self._started.set_result(started)

    async def files_settled(self) -> None:
        """Wait for the resource lists asked so far (their walk goes before the
        start-up thread's next, heavier step takes the CPU)."""
        await asyncio.gather(*self._file_lists, return_exceptions=True)

    async def domains_settled(self) -> None:
        """Wait for the domains being built for the calls taken so far (the
        start-up thread's next steps serve nobody waiting yet)."""
        await asyncio.gather(*self._domains.values(), return_exceptions=True)

    def declared(self, tools: list[Declared] | None) -> None:
        """The catalog's tools from the shipped declarations
        (:mod:`tooldeck.mcp.declared`), or None: ``tools/list`` waits for the
        catalog."""
        if not self._declared.done():
            self._declared.set_result(tools)
        if tools is not None:  # as built() would: the next start can build just the domain of a call
            self._domains_known({d.name: d.domain for d in tools})

    def wants_declared(self) -> bool:
        """Whether the shipped declarations are needed: not when the handshake
        cache answers ``tools/list`` for the version negotiated and knows
        each tool's domain (a warm start: a call builds its tool from that
        alone, and the cached list is what the front serves)."""
        if self._cached("tools/list") is None or self.cache is None:
            return True
        known = self.cache.data.get(DOMAINS_KEY)
        return not (isinstance(known, dict) and known)

    def ready(self, ready: Ready) -> None:
        if not self._ready.done():
            self._ready.set_result(ready)

    def built(self, box: Any) -> None:
        """The whole catalog is built: remember which domain serves each tool,
        so the next start can build just that one for an early call."""
        origin = getattr(box, "origin", None)
        if self.cache is not None and origin and self.cache.data.get(DOMAINS_KEY) != origin:
            self.cache.data[DOMAINS_KEY] = dict(origin)
            self.dirty = True

    def _domains_known(self, domains: dict[str, str]) -> None:
        """Tool domains learnt before the catalog is built (the declarations)."""
        known = self.cache.data.get(DOMAINS_KEY) if self.cache is not None else None
        known = known if isinstance(known, dict) else {}
        if self.cache is not None and {**known, **domains} != known:
            self.cache.data[DOMAINS_KEY] = {**known, **domains}
            self.dirty = True

    def failed(self) -> None:
        """The start-up failed before the catalog: nothing more is taken early."""
        self.stopped = True
        self.declared(None)

    async def handoff(self) -> Readline:
        """Switch to the SDK; returns the ``readline`` its reader uses."""
        if self._lists:
            await asyncio.gather(*self._lists, return_exceptions=True)  # the Tap needs what was sent
        self.handed = True
        for line in self._deferred:
            self._sdk.put_nowait(line)
        self._deferred.clear()
        if self.eof:
            self._sdk.put_nowait(b"")
        return self._sdk.get

    async def calls_done(self) -> None:
        """Wait for the calls taken early (the end of input waits for them)."""
        while self._calls:
            await asyncio.gather(*list(self._calls.values()), return_exceptions=True)
            await asyncio.sleep(0)  # the done callbacks run

    async def settle(self) -> bool:
        """At the end of input: wait for every answer the front owes; True
        when nothing is left for the SDK to answer."""
        while self._lists or self._calls:
            await asyncio.gather(*self._lists, *self._calls.values(), return_exceptions=True)
            await asyncio.sleep(0)  # the done callbacks run
            self._lists = [t for t in self._lists if not t.done()]
        return self._owed == 0

    def _record(self, method: str, result: dict[str, Any]) -> None:
        """An answer the front built (:mod:`tooldeck.mcp.wire`, the functions
        the SDK's handlers return) goes into the handshake cache, so a short
        session that never needed the SDK still warms the next start; once
        the SDK runs, the Tap compares and corrects it with the SDK's own."""
        if self.cache is None or self.version is None or self.cache.result(method, self.version) == result:
            return
        self.cache.set_versions(list(HANDSHAKE_VERSIONS), LATEST_HANDSHAKE)
        self.cache.record(method, self.version, result)
        self.dirty = True

    # reading -------------------------------------------------------------------
    async def pump(self, readline: Readline) -> None:
        while True:
            line = await readline()
            if not line:
                self.eof = True
                if self.handed:
                    self._sdk.put_nowait(b"")
                self._check_finished()
                return
            if self.handed:
                if not self._cancel(line):
                    self._sdk.put_nowait(line)
            else:
                self.route(line)

    @property
    def busy(self) -> bool:
        """Whether an answer of the front's is still being made."""
        return bool(self._calls) or not all(t.done() for t in self._lists)

    def route(self, line: bytes) -> None:
        self.last_line = asyncio.get_running_loop().time()
        text = repair_surrogate_escapes(line.decode("utf-8", "replace"))
        if not text.strip():
            return
        try:
            message = json.loads(text)
        except (ValueError, RecursionError):
            self._spawn(self._send(error_reply(text).encode() + b"\n"), self._lists)
            return
        if self.stopped or not isinstance(message, dict):
            self._defer(line, message)
        elif self.version is None:
            self._initialize(line, message)
        elif plain_list(message):
            self.answered[id_token(message["id"])] = (message["method"], {})
            self._spawn(self._list(message), self._lists)
            self._deferred.append(line)  # the SDK answers too; the Tap swallows and records it
        elif self.version in BUILT_VERSIONS and plain_list(message, ("ping",)):  # answered at once, SDK or not
            self._spawn(self._send(reply(message["id"], {})), self._lists)
        elif message.get("method") == "resources/list" and plain_id(message.get("id")) and _first_page(message):
            self._spawn(self._resources(message), self._lists)
            self._file_lists.append(self._lists[-1])
        elif message.get("method") == "tools/call" and self._takes(message):
            key = id_token(message["id"])
            task = self._calls[key] = asyncio.get_running_loop().create_task(self._call(message, line))
            task.add_done_callback(lambda t, k=key: self._call_done(k, t))  # cancelled unstarted too
        elif not self._cancel(line, message):
            self._defer(line, message)

    def _defer(self, line: bytes, message: object) -> None:
        self._deferred.append(line)
        if isinstance(message, dict) and "id" in message and "method" in message:
            self._owed += 1
            self.sdk_wanted.set()

    def _cancel(self, line: bytes, message: object = None) -> bool:
        """A ``notifications/cancelled`` of a call taken here: cancel it (a
        cancelled request gets no answer, as from the SDK)."""
        if b"notifications/cancelled" not in line or not self._calls:
            return False
        if message is None:
            try:
                message = json.loads(line)
            except (ValueError, RecursionError):
                return False
        params = message.get("params") if isinstance(message, dict) else None
        if not isinstance(params, dict) or message.get("method") != "notifications/cancelled":  # type: ignore[union-attr]
            return False
        task = self._calls.get(id_token(params.get("requestId")))
        if task is None:
            return False
        task.cancel()
        return True

    def _spawn(self, coro: Any, into: list[asyncio.Task[None]]) -> None:
        into.append(asyncio.get_running_loop().create_task(coro))

    # answers -------------------------------------------------------------------
    def _initialize(self, line: bytes, message: dict[str, Any]) -> None:
        params = plain_initialize(message)
        result = self._init_result(params["protocolVersion"]) if params is not None else None
        if result is None:
            self.stopped = True  # the SDK answers this first line, and everything after it
            self._defer(line, message)
            return
        self.version = result["protocolVersion"]
        self.answered[id_token(message["id"])] = ("initialize", result)
        self._deferred.append(line)  # replayed to the SDK: its session state
        self._spawn(self._send(reply(message["id"], result)), self._lists)

    def _init_result(self, requested: str) -> dict[str, Any] | None:
        if self.cache is not None:
            version = self.cache.negotiate(requested)
            cached = self.cache.result("initialize", version) if version is not None else None
            if cached is not None and cached.get("protocolVersion") == version:
                return cached
        version = negotiate(requested)
        if version not in BUILT_VERSIONS:
            return None
        result = initialize_result(version, self.prompts)
        self.version = version
        self._record("initialize", result)
        return result

    def _cached(self, method: str) -> dict[str, Any] | None:
        if self.cache is None or self.version is None:
            return None
        return self.cache.result(method, self.version)

    async def _list(self, message: dict[str, Any]) -> None:
        method, key = message["method"], id_token(message["id"])
        result = self._cached(method)
        if result is None:
            result = await self._build_list(method)
            self._record(method, result)
        self.answered[key] = (method, result)
        await self._send(reply(message["id"], result))

    async def _build_list(self, method: str) -> dict[str, Any]:
        if method == "resources/templates/list":
            return (await self._files).templates()
        if method == "prompts/list":
            if not self.prompts:
                return {"prompts": []}  # no prompts folder: what ServerExtras.prompts_wire says
            ready = await self._ready
            return await asyncio.to_thread(ready.extras.prompts_wire)  # type: ignore[no-any-return]
        assert method == "tools/list" and method in LISTS
        built = self._ready.result().catalog.built() if self._ready.done() else None
        declared = None if built is not None else await self._declared
        if declared is None:
            ready = await self._ready
            tools = [tool_wire(t) for t in await ready.catalog.get()]
        else:
            tools = [d.wire for d in declared]
        if self.prompts:  # the prompt-backed agent tools, after the catalog's own
            ready = await self._ready
            tools += [tool_wire(t) for t in (ready.extras.tools() or ())]
        return {"tools": tools}

    async def check_answers(self) -> None:
        """Once the catalog is built, each answer given from the cache or the
        declarations is built again: one that differs corrects the cache, and
        a ``tools/list`` is followed by ``notifications/tools/list_changed``
        (the Tap's check, which a session that never needs the SDK skips)."""
        for key, (method, sent) in list(self.answered.items()):
            if method == "initialize":  # built here only for the versions the front can build
                version = sent.get("protocolVersion")
                real = initialize_result(version, self.prompts) if version in BUILT_VERSIONS else sent
            else:
                real = await self._build_list(method)
            if real != sent and key in self.answered:
                self.answered[key] = (method, real)
                self._record(method, real)
                if method == "tools/list":
                    log.info("tooldeck: the tool list served early was stale; sent tools/list_changed")
                    await self._send(LIST_CHANGED.encode() + b"\n")

    async def _resources(self, message: dict[str, Any]) -> None:
        provider = await self._files
        result = await asyncio.to_thread(provider.list, None)
        await self._send(reply(message["id"], result))

    def _takes(self, message: dict[str, Any]) -> bool:
        """A call the front runs: plain, a fresh id, a read-only tool (as the
        built catalog says, or before it is built, the tool list served: the
        cached one or the shipped declarations; with neither, :meth:`_call`
        decides once the catalog is built)."""
        if not plain_id(message.get("id")) or not plain_call(message) or id_token(message["id"]) in self._calls:
            return False
        name = message["params"]["name"]
        ready = self._ready.result() if self._ready.done() else None
        box = ready.catalog.built() if ready is not None else None
        if box is not None:
            return early_tool(box.get(name), getattr(box, "origin", {}).get(name))
        listed = self._listed()
        if listed is None:
            return True  # decided once the catalog is built (else it goes to the SDK then)
        for tool in listed[0]:
            if tool.get("name") == name:
                hints = tool.get("annotations") or {}
                safe = hints.get("readOnlyHint") is True and hints.get("openWorldHint") is False
                return safe and early_domain(listed[1].get(name))
        return False

    def _listed(self) -> tuple[list[dict[str, Any]], dict[str, str]] | None:
        """(the tools served, tool name -> its catalog domain) before the
        catalog is built: from the handshake cache, else from the shipped
        declarations; None while neither is known."""
        cached = self._cached("tools/list")
        if cached is not None:
            domains = (self.cache.data.get(DOMAINS_KEY) or {}) if self.cache is not None else {}
            return list(cached.get("tools") or []), domains
        declared = self._declared.result() if self._declared.done() else None
        if declared is None:
            return None
        return [d.wire for d in declared], {d.name: d.domain for d in declared}

    def _domain_of(self, name: str) -> str | None:
        """The catalog domain of ``name`` if the list served has that tool."""
        listed = self._listed()
        if listed is None or not any(t.get("name") == name for t in listed[0]):
            return None  # a tool switched off is in no list: never built alone for a call
        domain = listed[1].get(name)
        return domain if isinstance(domain, str) else None

    def _call_done(self, key: str, task: asyncio.Task[None]) -> None:
        if self._calls.get(key) is task:
            del self._calls[key]
        self._check_finished()

    async def _call(self, message: dict[str, Any], line: bytes) -> None:
        try:
            started = await self._started  # the runtime is up; the core loads with the domain's tools
            # lazy: the front answers before the core loads; by a call, the start-up thread has it
            from tooldeck.core.invocation import Invocation

            box, domain = await self._box_for(started, message["params"]["name"])
            tool = box.get(message["params"]["name"]) if box is not None else None
            if not early_tool(tool, domain):  # the list was stale, or the tool may not run early
                self._late_defer(line)
                return
            started.worker()  # a call counts tokens: in the worker from now on
            started.activity.request_started()
            try:
                name, args = message["params"]["name"], message["params"].get("arguments")
                result = to_call_result(await box.call(name, args, invocation=Invocation.silent()))
            except Exception as exc:  # never let one call kill the server
                log.exception("tools/call %s failed", message["params"]["name"])
                result = internal_error(exc)
            finally:
                started.activity.request_finished()
            await self._send(reply(message["id"], result))
        except asyncio.CancelledError:
            pass  # notifications/cancelled: no answer
        except Exception as exc:  # the front itself failed: still one answer
            log.exception("early tools/call failed")
            await self._send(reply(message["id"], internal_error(exc)))

    async def _box_for(self, started: Started, name: str) -> tuple[Any, str | None]:
        """(Toolbox, the domain of ``name`` in it): the whole catalog when
        built; before that, a Toolbox of ``name`` alone when its domain can
        build it so, else of its domain (shared with the catalog's build): a
        fraction of the catalog's imports; None when the catalog failed to
        build."""
        ready = self._ready.result() if self._ready.done() else None
        box = ready.catalog.built() if ready is not None else None
        domain = self._domain_of(name)
        if box is None and domain is not None:
            task = self._domains.get((domain, name))
            if task is None:
                build = asyncio.to_thread(started.domain, domain, name)
                task = self._domains[(domain, name)] = asyncio.ensure_future(build)
            try:
                part = await asyncio.shield(task)
            except Exception:
                part = None
            if part is not None and name in part:
                return part, domain
        try:
            box = await (await self._ready).catalog.get()
        except Exception:
            return None, None
        return box, getattr(box, "origin", {}).get(name)

    def _late_defer(self, line: bytes) -> None:
        if self.handed:
            self._sdk.put_nowait(line)
        else:
            self._deferred.append(line)
            self._owed += 1
            self.sdk_wanted.set()

    async def _send(self, data: bytes) -> None:
        await self.writer.write(data.decode())
        await self.writer.flush()

    def _check_finished(self) -> None:
        if self.eof and not self.handed and self._owed == 0:
            self.finished.set()
