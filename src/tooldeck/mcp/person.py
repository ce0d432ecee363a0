"""What the MCP host adds to the trust boundary: asking the person, and telling
the client that the tools changed.

* :class:`PersonAsker` is the ``rt.ask_person`` hook (see
  :mod:`tooldeck.workspace.trust`). A tool asks from its worker thread; the
  question goes to the client of the call in progress as an
  ``elicitation/create`` request (form mode, one boolean), if that client
  declared the elicitation capability. Otherwise it answers None ("cannot
  ask") and the boundary refuses with ``denied``.
* :func:`tools_changed` sends ``notifications/tools/list_changed`` on the
  call's own stream after a call changed the roots (the tools that describe
  the roots were rebuilt).
"""

from __future__ import annotations

import asyncio
import contextvars
import logging
from typing import Any

import mcp_types as types
from mcp.server.subscriptions import SubscriptionBus, ToolsListChanged
from mcp_types.version import MODERN_PROTOCOL_VERSIONS

from tooldeck.mcp.elicit import can_elicit

log = logging.getLogger("tooldeck.mcp")

# The request context of the tools/call being served (copied into the tool's worker thread).
CURRENT_CALL: contextvars.ContextVar[Any] = contextvars.ContextVar("tooldeck_mcp_call", default=None)

ANSWER_TIMEOUT = 300.0  # the person may be away; no answer in time is a no
QUESTION_SCHEMA: dict[str, Any] = {
    "type": "object",
    "properties": {
        "allow": {"type": "boolean", "title": "Allow", "description": "Allow access to this folder", "default": False}
    },
    "required": ["allow"],
}


async def _ask(ctx: Any, question: str) -> bool:
    result = await ctx.session.elicit_form(question, QUESTION_SCHEMA, related_request_id=ctx.request_id)
    if result.action != "accept":
        return False
    content = result.content or {}
    return content.get("allow") is True


class PersonAsker:
    """``rt.ask_person`` for an MCP server running on ``loop``."""

    def __init__(self, loop: asyncio.AbstractEventLoop) -> None:
        self.loop = loop

    def __call__(self, question: str) -> bool | None:
        ctx = CURRENT_CALL.get()
        if ctx is None or not can_elicit(ctx):
            return None
        try:
            running: asyncio.AbstractEventLoop | None = asyncio.get_running_loop()
        except RuntimeError:
            running = None
        if running is self.loop:  # an async tool on the loop itself: waiting here would deadlock
            return None
        future = asyncio.run_coroutine_threadsafe(_ask(ctx, question), self.loop)
        try:
            return future.result(timeout=ANSWER_TIMEOUT)
        except Exception as exc:  # no answer, a client error: the person did not say yes
            future.cancel()
            log.info("elicitation failed or timed out: %s", exc)
            return False


async def tools_changed(ctx: Any, bus: SubscriptionBus | None = None) -> None:
    """``notifications/tools/list_changed`` on the stream of the call in
    progress (over HTTP it reaches the client that made the change before the
    call's response). Protocol 2026-07-28 delivers change notifications only
    on the ``subscriptions/listen`` streams clients open: the event goes to
    the server's ``bus``, which feeds every such stream."""
    if getattr(ctx, "protocol_version", None) in MODERN_PROTOCOL_VERSIONS:
        if bus is not None:
            await bus.publish(ToolsListChanged())
        return
    try:
        await ctx.session.send_notification(types.ToolListChangedNotification(), related_request_id=ctx.request_id)
    except Exception:  # a client that went away must not fail the call
        log.debug("tools/list_changed notification failed", exc_info=True)
