"""The MCP server: a Toolbox adapted to the official SDK's low-level Server.

The low-level ``Server`` is used (not ``MCPServer``) because tooldeck already
owns its schemas, decoding and errors; this module only translates:

* Tool → ``types.Tool`` with annotations (custom tools, which MCP lacks, become
  function tools taking ``{"input": string}``);
* a call → ``Toolbox.call``; a ToolError → an ``isError`` result carrying
  ``error [code]: message``; an Output → text/image content plus
  ``structuredContent`` when the tool provides it, always carrying the text
  too (Codex and Claude Code show the model the structured part alone);
* tool progress → ``notifications/progress`` when the client sent a progress
  token (progress may come from worker threads; it is handed to the event loop).

Nothing a client sends can stop the server: every handler catches everything.
"""

from __future__ import annotations

import asyncio
import json
import logging
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

import mcp_types as types
from mcp.server.lowlevel import NotificationOptions, Server
from mcp.server.subscriptions import InMemorySubscriptionBus, ListenHandler
from mcp_types.version import MODERN_PROTOCOL_VERSIONS

from tooldeck import __version__
from tooldeck.core.invocation import Append, Invocation, Progress
from tooldeck.core.output import ImagePart, TextPart
from tooldeck.core.tool import CUSTOM_INPUT_SCHEMA, Tool
from tooldeck.core.toolbox import Toolbox, ToolResult
from tooldeck.mcp.elicit import approver_for
from tooldeck.mcp.lifecycle import InFlight
from tooldeck.mcp.person import CURRENT_CALL, PersonAsker, tools_changed
from tooldeck.mcp.schema_wire import compact_schema
from tooldeck.shell.approval import approver_scope

if TYPE_CHECKING:
    from tooldeck.mcp.server_extras import ServerExtras

log = logging.getLogger("tooldeck.mcp")

INSTRUCTIONS = (
    "tooldeck: safe, token-efficient coding tools over this workspace (RepoPrompt/ochat tool names). "
    "Read: get_file_tree, read_file, file_search (grep), get_code_structure (codemaps), find_symbol, git. "
    "Change: apply_patch (V4A, several files), apply_edits (one file), file_actions. Run: shell. "
    "Errors read `error [code]: message`; the message says how to recover."
)


def to_mcp_tool(t: Tool) -> types.Tool:
    ann = t.annotations
    schema = compact_schema(t.parameters) if t.kind == "function" else CUSTOM_INPUT_SCHEMA
    description = t.description
    if t.kind == "custom":
        description += "\nPass the raw input as the `input` string."
    return types.Tool(
        name=t.name,
        description=description,
        input_schema=schema,
        annotations=types.ToolAnnotations(
            title=ann.title,
            read_only_hint=ann.read_only,
            destructive_hint=ann.destructive,
            idempotent_hint=ann.idempotent,
            open_world_hint=ann.open_world,
        ),
    )


def to_call_result(result: ToolResult) -> dict[str, Any]:
    """The ``tools/call`` result in wire form (camelCase keys).

    A plain dict, not a ``types.CallToolResult``: the SDK validates a handler's
    result against the protocol surface anyway, so building a model first
    would only validate and dump the same data twice on every call."""
    if result.error is not None:
        text = f"error [{result.error.code}]: {result.error.message}"
        return {"content": [{"type": "text", "text": text}], "isError": True}
    assert result.output is not None
    content: list[dict[str, Any]] = []
    for part in result.output.parts:
        if isinstance(part, TextPart):
            content.append({"type": "text", "text": part.text})
        elif isinstance(part, ImagePart):
            content.append({"type": "image", "data": part.base64_data, "mimeType": part.mime_type})
    wire: dict[str, Any] = {"content": content}
    if result.output.structured is not None:
        wire["structuredContent"] = with_text(result.output.structured, result.output.as_text())
    return wire


def with_text(structured: dict[str, Any], text: str) -> dict[str, Any]:
    """``structured`` carrying everything the text says: clients that show the
    model ``structuredContent`` instead of the content (Codex, Claude Code)
    must not lose the summary line, notes or advice of the text. The text is
    added as ``text`` unless it is the JSON of the data itself (a tool that
    returned a dict) or already there."""
    if not text or any(v == text for v in structured.values()):
        return structured
    if text[:1] in "{[":
        try:
            if json.loads(text) == structured:
                return structured
        except ValueError:
            pass
    key = "text" if "text" not in structured else "output_text"
    return {key: text, **structured}


def _for_version(ctx: Any, wire: dict[str, Any]) -> dict[str, Any]:
    """Protocol 2026-07-28 requires ``resultType`` on every result (the SDK
    adds it to typed results, not to the plain dicts this host returns);
    older versions do not know the field."""
    if getattr(ctx, "protocol_version", None) in MODERN_PROTOCOL_VERSIONS:
        wire["resultType"] = "complete"
    return wire


class ProgressRelay:
    """Turns Invocation progress (possibly from a worker thread) into MCP
    progress notifications sent from the event loop, in order."""

    def __init__(self, ctx: Any) -> None:
        self._ctx = ctx
        self._loop = asyncio.get_running_loop()
        self._queue: asyncio.Queue[Progress | None] = asyncio.Queue()
        self._count = 0
        self._task = self._loop.create_task(self._pump())

    def __call__(self, progress: Progress) -> None:
        self._loop.call_soon_threadsafe(self._queue.put_nowait, progress)

    async def _pump(self) -> None:
        while True:
            item = await self._queue.get()
            if item is None:
                return
            self._count += 1
            prefix = "" if isinstance(item.update, Append) else "\u21bb "
            try:
                message = f"{item.channel}: {prefix}{item.update.text}"
                await self._ctx.session.report_progress(self._count, None, message)
            except Exception:  # a client that went away must not fail the call
                log.debug("progress notification failed", exc_info=True)

    async def close(self) -> None:
        self._queue.put_nowait(None)
        try:
            await asyncio.wait_for(self._task, 5)
        except (TimeoutError, asyncio.CancelledError):
            self._task.cancel()


def _has_progress_token(ctx: Any) -> bool:
    meta = getattr(ctx, "meta", None)
    if meta is None:
        return False
    token = getattr(meta, "progress_token", None)
    if token is None and isinstance(meta, dict):
        token = meta.get("progressToken") or meta.get("progress_token")
    return token is not None


class Catalog:
    """The Toolbox behind a server, possibly still being built.

    Building the catalog (importing every tool domain, generating schemas)
    takes a noticeable share of start-up. ``initialize`` does not need it, so
    the stdio host starts the build in a worker thread as soon as it serves
    and the SDK answers the handshake meanwhile; ``tools/list`` and
    ``tools/call`` wait for it. A build failure is reported by those requests
    (and logged), never a silent empty catalog."""

    def __init__(self, source: Toolbox | Callable[[], Toolbox]) -> None:
        self._box: Toolbox | None = source if isinstance(source, Toolbox) else None
        self._factory = None if isinstance(source, Toolbox) else source
        self._future: asyncio.Future[Toolbox] | None = None

    def start(self) -> None:
        """Begin building (call on the event loop); a no-op once started or built."""
        if self._box is None and self._future is None:
            assert self._factory is not None
            self._future = asyncio.get_running_loop().run_in_executor(None, self._build)

    def _build(self) -> Toolbox:
        assert self._factory is not None
        try:
            return self._factory()
        except Exception:
            log.exception("building the tool catalog failed")
            raise

    async def get(self) -> Toolbox:
        if self._box is None:
            self.start()
            assert self._future is not None
            self._box = await asyncio.shield(self._future)
        return self._box


TRIM_IDLE = 2.0  # seconds without a request before freed heap is handed back


class Activity:
    """Requests in flight; a warm-up run once, when the server has been
    idle for a moment; and the freed heap handed back after each burst.

    The tokenizer takes ~0.6 s to load and holds the GIL meanwhile (measured:
    a ticking thread stalls for the whole load), so warming it up in a
    background thread still freezes the server. Started right after the
    handshake it delayed the first tools/list by that much. Between calls,
    while the model is thinking, nobody waits for it."""

    def __init__(self, warm_up: Callable[[], None] | None = None, idle: float = 1.0) -> None:
        self._fn = warm_up
        self._idle = idle
        self._busy = 0
        self._last = 0.0
        self._task: asyncio.Task[None] | None = None
        self._trim: asyncio.Task[None] | None = None

    @property
    def busy(self) -> int:
        return self._busy

    async def settled(self, timeout: float) -> None:
        """Wait until no request is in flight (requests just read included:
        the SDK dispatches them a few loop turns later), at most ``timeout``."""
        loop = asyncio.get_running_loop()
        deadline = loop.time() + timeout
        quiet = 0
        while quiet < 3 and loop.time() < deadline:
            await asyncio.sleep(0.005)  # a few loop turns: the end of input must not hold the exit
            quiet = quiet + 1 if self._busy == 0 else 0

    def request_started(self) -> None:
        self._busy += 1

    def request_finished(self) -> None:
        self._busy -= 1
        loop = asyncio.get_running_loop()
        self._last = loop.time()
        if self._fn is not None and self._task is None:
            self._task = loop.create_task(self._wait_then_run())
        if self._trim is None:
            self._trim = loop.create_task(self._trim_when_idle())

    async def _trim_when_idle(self) -> None:
        """Once a burst of requests is over (:data:`TRIM_IDLE` s without one),
        hand the heap they freed back to the system: glibc keeps freed pages
        mapped, so a server's RSS would stay at its busiest (measured: +60 MB
        after three minutes of churn, back within 15 % of idle after a trim)."""
        loop = asyncio.get_running_loop()
        try:
            while self._busy or loop.time() - self._last < TRIM_IDLE:
                await asyncio.sleep(TRIM_IDLE / 2)
            from tooldeck.context.memory import release_freed_memory

            await asyncio.to_thread(release_freed_memory)
        except Exception:
            log.debug("heap trim failed", exc_info=True)
        finally:
            self._trim = None

    async def _wait_then_run(self) -> None:
        loop = asyncio.get_running_loop()
        while True:
            await asyncio.sleep(self._idle)
            if self._busy == 0 and loop.time() - self._last >= self._idle:
                break
        fn, self._fn = self._fn, None
        if fn is not None:
            try:
                await asyncio.to_thread(fn)
            except Exception:
                log.debug("warm-up failed", exc_info=True)


def create_server(
    toolbox: Toolbox | Catalog,
    *,
    name: str = "tooldeck",
    instructions: str = INSTRUCTIONS,
    activity: Activity | None = None,
    extras: ServerExtras | None = None,
    inflight: InFlight | None = None,
) -> Server:
    """``activity`` counts the requests in flight and runs its warm-up once
    the server has been idle (the place for warm-ups that must slow down
    neither start-up nor a call). ``extras`` adds prompts, resources and the
    prompt-backed agent tools (:mod:`tooldeck.mcp.server_extras`). ``inflight``
    registers each running call, so a dropped connection can cancel it
    (:mod:`tooldeck.mcp.lifecycle`)."""
    inflight = inflight if inflight is not None else InFlight()
    catalog = toolbox if isinstance(toolbox, Catalog) else Catalog(toolbox)
    listed: list[types.Tool] = []
    activity = activity if activity is not None else Activity()

    async def list_tools(ctx: Any, params: Any) -> types.ListToolsResult:
        activity.request_started()
        try:
            box = await catalog.get()
            attach_person(box)
            if not listed:
                listed.extend(to_mcp_tool(t) for t in box)
            agents = extras.tools() if extras is not None else None
            if agents is not None:
                return types.ListToolsResult(tools=listed + [to_mcp_tool(t) for t in agents])
            return types.ListToolsResult(tools=listed)
        finally:
            activity.request_finished()

    async def call_tool(ctx: Any, params: types.CallToolRequestParams) -> dict[str, Any]:
        relay: ProgressRelay | None = None
        activity.request_started()
        try:
            box = await catalog.get()
            attach_person(box)  # before a prompt-backed agent tool may take the call
            agents = extras.tools() if extras is not None else None
            if agents is not None and params.name not in box and params.name in agents:
                box = agents
            if _has_progress_token(ctx):
                relay = ProgressRelay(ctx)
            # the call's own cancel signal: set by notifications/cancelled (via the toolbox) or a dropped connection
            invocation = Invocation.create(relay) if relay is not None else Invocation.silent()
            attach_person(box)
            generation = getattr(box, "generation", 0)
            result = await _run_call(box, params, ctx, invocation, inflight)
            if result is None:  # its connection dropped: nobody reads the answer
                return _for_version(ctx, {"content": [{"type": "text", "text": DROPPED}], "isError": True})
            if getattr(box, "generation", 0) != generation:  # the roots changed: tools were rebuilt
                listed.clear()
                await tools_changed(ctx, bus)
            return _for_version(ctx, to_call_result(result))
        except Exception as exc:  # never let one call kill the server
            log.exception("tools/call %s failed", params.name)
            text = f"error [internal_error]: {type(exc).__name__}: {exc}"
            return _for_version(ctx, {"content": [{"type": "text", "text": text}], "isError": True})
        finally:
            if relay is not None:
                await relay.close()
            activity.request_finished()

    bus = InMemorySubscriptionBus()  # change events for protocol 2026-07-28 `subscriptions/listen` streams
    server = ToolDeckServer(
        name,
        version=__version__,
        instructions=instructions,
        on_list_tools=list_tools,
        on_call_tool=call_tool,
        on_subscriptions_listen=ListenHandler(bus),
    )
    server.bus = bus
    if extras is not None:
        extras.install(server)
    return server


DROPPED = "error [cancelled]: the call was cancelled (its connection closed)"


async def _run_call(
    box: Any, params: types.CallToolRequestParams, ctx: Any, inv: Invocation, inflight: InFlight
) -> ToolResult | None:
    token = CURRENT_CALL.set(ctx)  # for rt.ask_person, in the tool's worker thread
    try:
        # custom tools receive the {"input": ...} object; their decoders unwrap it
        with approver_scope(approver_for(ctx)):  # shell `ask` → elicitation, if the client can
            call = asyncio.ensure_future(box.call(params.name, params.arguments, invocation=inv))
        return await _awaited(call, ctx, inv, inflight)
    finally:
        CURRENT_CALL.reset(token)


async def _awaited(call: asyncio.Task[ToolResult], ctx: Any, inv: Invocation, inflight: InFlight) -> ToolResult | None:
    """The call's result; None when a dropped connection cancelled it. A
    cancellation of this handler itself (notifications/cancelled, the
    session closing) propagates, and reaches the call and its invocation."""
    with inflight.track(_session_of(ctx), getattr(ctx, "request_id", None), inv, call):
        try:
            return await call
        except asyncio.CancelledError:
            task = asyncio.current_task()
            if task is not None and task.cancelling():
                raise
            return None


def _session_of(ctx: Any) -> str | None:
    """The session id the request came with: its ``mcp-session-id`` header,
    the key :class:`~tooldeck.mcp.lifecycle.DropWatch` reports a dropped
    connection under (the SDK's request context has no ``session_id``:
    without the header every call was tracked under "" and no drop reached
    its call)."""
    headers = getattr(getattr(ctx, "request", None), "headers", None)
    sid = headers.get("mcp-session-id") if headers is not None else None
    return sid or getattr(ctx, "session_id", None)


class ToolDeckServer(Server):
    """Advertises ``tools.listChanged``: the tools that describe the roots
    change after ``manage_workspaces`` switches or changes folders. ``bus``
    carries those changes to protocol 2026-07-28 clients, which receive them
    only on the ``subscriptions/listen`` streams they open."""

    bus: InMemorySubscriptionBus

    def create_initialization_options(self, notification_options: Any = None, *args: Any, **kwargs: Any) -> Any:
        options = notification_options or NotificationOptions(tools_changed=True)
        return super().create_initialization_options(options, *args, **kwargs)


def attach_person(box: Toolbox) -> None:
    """Give the catalog's runtime the ``ask_person`` hook (once): the trust
    boundary may then ask the person through MCP elicitation."""
    rt = getattr(box, "runtime", None)
    if rt is not None and getattr(rt, "ask_person", None) is None:
        rt.ask_person = PersonAsker(asyncio.get_running_loop())
