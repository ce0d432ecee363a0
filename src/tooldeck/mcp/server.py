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
import logging
from typing import TYPE_CHECKING, Any

import mcp_types as types
from mcp.server.lowlevel import NotificationOptions, Server
from mcp.server.subscriptions import InMemorySubscriptionBus, ListenHandler
from mcp_types.version import MODERN_PROTOCOL_VERSIONS

from tooldeck import __version__
from tooldeck.core.invocation import Append, Invocation, Progress
from tooldeck.core.tool import Tool
from tooldeck.core.toolbox import Toolbox, ToolResult
from tooldeck.mcp.elicit import approver_for
from tooldeck.mcp.host import Activity, Catalog
from tooldeck.mcp.lifecycle import InFlight
from tooldeck.mcp.person import CURRENT_CALL, PersonAsker, tools_changed
from tooldeck.mcp.wire import INSTRUCTIONS, internal_error, to_call_result, tool_wire, with_text
from tooldeck.shell.approval import approver_scope

if TYPE_CHECKING:
    from tooldeck.mcp.server_extras import ServerExtras

log = logging.getLogger("tooldeck.mcp")

__all__ = ["INSTRUCTIONS", "Activity", "Catalog", "create_server", "to_call_result", "to_mcp_tool", "with_text"]


def to_mcp_tool(t: Tool) -> types.Tool:
    """The SDK's model of :func:`~tooldeck.mcp.wire.tool_wire` (for cost and search tests)."""
    return types.Tool.model_validate(tool_wire(t), by_name=False)


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


def _reads_only(box: Any, name: str) -> bool:
    """Whether the tool declares it changes nothing (its MCP ``readOnlyHint``)."""
    tool = box.get(name) if hasattr(box, "get") else None
    return bool(tool is not None and tool.annotations.read_only)


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

    async def list_tools(ctx: Any, params: Any) -> types.ListToolsResult:  # counted by InFlightRequests
        box = await catalog.get()
        attach_person(box)
        if not listed:
            listed.extend(to_mcp_tool(t) for t in box)
        agents = extras.tools() if extras is not None else None
        if agents is not None:
            return types.ListToolsResult(tools=listed + [to_mcp_tool(t) for t in agents])
        return types.ListToolsResult(tools=listed)

    async def call_tool(ctx: Any, params: types.CallToolRequestParams) -> dict[str, Any]:  # counted as above
        relay: ProgressRelay | None = None
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
            if extras is not None and not _reads_only(box, params.name):
                await extras.rescan()  # a prompt it wrote is listed now, not at the next poll
            return _for_version(ctx, to_call_result(result))
        except Exception as exc:  # never let one call kill the server
            log.exception("tools/call %s failed", params.name)
            return _for_version(ctx, internal_error(exc))
        finally:
            if relay is not None:
                await relay.close()

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
    server.middleware.append(InFlightRequests(activity))
    if extras is not None:
        extras.install(server)
    return server


class InFlightRequests:
    """SDK middleware: every request counts in ``activity`` while it runs, so
    the end of input waits for its answer (:meth:`Activity.settled`) before
    the SDK cancels what still runs, and the idle warm-up waits for it. Only
    the tool handlers used to count themselves: a ``prompts/list`` still in its worker thread at the
    end of input was cancelled and answered ``Connection closed``, which the
    handshake Tap then took for the server's answer and dropped from the
    cache. ``subscriptions/listen`` lasts the session: it is not waited for."""

    def __init__(self, activity: Activity) -> None:
        self.activity = activity

    async def __call__(self, ctx: Any, call_next: Any) -> Any:
        if getattr(ctx, "request_id", None) is None or getattr(ctx, "method", None) == "subscriptions/listen":
            return await call_next(ctx)
        self.activity.request_started()
        try:
            return await call_next(ctx)
        finally:
            self.activity.request_finished()


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
