"""The MCP server: a Toolbox adapted to the official SDK's low-level Server.

The low-level ``Server`` is used (not ``MCPServer``) because tooldeck already
owns its schemas, decoding and errors; this module only translates:

* Tool → ``types.Tool`` with annotations (custom tools, which MCP lacks, become
  function tools taking ``{"input": string}``);
* a call → ``Toolbox.call``; a ToolError → an ``isError`` result carrying
  ``error [code]: message``; an Output → text/image content plus
  ``structuredContent`` when the tool provides it;
* tool progress → ``notifications/progress`` when the client sent a progress
  token (progress may come from worker threads; it is handed to the event loop).

Nothing a client sends can stop the server: every handler catches everything.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Callable
from typing import Any

import mcp_types as types
from mcp.server.lowlevel import Server

from tooldeck import __version__
from tooldeck.core.invocation import Append, Invocation, Progress
from tooldeck.core.output import ImagePart, TextPart
from tooldeck.core.tool import Tool
from tooldeck.core.toolbox import Toolbox, ToolResult

log = logging.getLogger("tooldeck.mcp")

CUSTOM_INPUT_SCHEMA: dict[str, Any] = {
    "type": "object",
    "properties": {"input": {"type": "string", "description": "The raw tool input (see the description)."}},
    "required": ["input"],
    "additionalProperties": False,
}

INSTRUCTIONS = (
    "tooldeck: safe, token-efficient tools over this workspace. Start with get_file_tree, "
    "then file_search / get_code_structure, read_file for exact text, apply_patch or apply_edits to change "
    "files. Errors read `error [code]: message`; the message says how to recover."
)


def to_mcp_tool(t: Tool) -> types.Tool:
    ann = t.annotations
    schema = t.parameters if t.kind == "function" else CUSTOM_INPUT_SCHEMA
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
        wire["structuredContent"] = result.output.structured
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


def create_server(
    toolbox: Toolbox,
    *,
    name: str = "tooldeck",
    instructions: str = INSTRUCTIONS,
    on_first_list: Callable[[], None] | None = None,
) -> Server:
    """``on_first_list`` runs once, after the handshake, when the client first
    lists tools: the place for warm-ups that must not slow down start-up."""
    listed = [to_mcp_tool(t) for t in toolbox]
    pending_warmup = [on_first_list] if on_first_list else []

    async def list_tools(ctx: Any, params: Any) -> types.ListToolsResult:
        while pending_warmup:
            pending_warmup.pop()()
        return types.ListToolsResult(tools=listed)

    async def call_tool(ctx: Any, params: types.CallToolRequestParams) -> dict[str, Any]:
        relay: ProgressRelay | None = None
        try:
            invocation = None
            if _has_progress_token(ctx):
                relay = ProgressRelay(ctx)
                invocation = Invocation.create(relay)
            # custom tools receive the {"input": ...} object; their decoders unwrap it
            result = await toolbox.call(params.name, params.arguments, invocation=invocation)
            return to_call_result(result)
        except Exception as exc:  # never let one call kill the server
            log.exception("tools/call %s failed", params.name)
            text = f"error [internal_error]: {type(exc).__name__}: {exc}"
            return {"content": [{"type": "text", "text": text}], "isError": True}
        finally:
            if relay is not None:
                await relay.close()

    return Server(
        name,
        version=__version__,
        instructions=instructions,
        on_list_tools=list_tools,
        on_call_tool=call_tool,
    )
