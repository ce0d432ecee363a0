"""The few MCP calls connected mode makes to a ``tooldeck serve --http``.

Through the MCP SDK's own streamable-HTTP client (no host of ours in
between). The bearer token goes in the ``Authorization`` header of requests
to the one endpoint the person named and nowhere else: the HTTP client
ignores proxy and netrc settings from the environment (``trust_env=False``),
the SDK follows a redirect only within the endpoint's origin, and the token
appears in no message, log or file of ours.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

from tooldeck.llm.types import FunctionCall, FunctionResult, Item, Message, Reasoning
from tooldeck.workspace.person_files import read_named_text

MAX_TOKEN_BYTES = 64 * 1024


class RemoteError(Exception):
    """Something the person must fix (a missing workspace, a refused token...)."""


def read_token(token_file: Path | None) -> str | None:
    """``--token-file`` (first line), else ``TOOLDECK_HTTP_TOKEN``, else none."""
    if token_file is not None:
        return read_named_text(token_file, MAX_TOKEN_BYTES).strip().splitlines()[0].strip() or None
    return os.environ.get("TOOLDECK_HTTP_TOKEN") or None


def endpoint(url: str) -> str:
    """``http://HOST:PORT`` → its ``/mcp`` endpoint. Refuses a URL with credentials in it."""
    parts = urlsplit(url.strip())
    if parts.scheme not in ("http", "https") or not parts.hostname:
        raise RemoteError(f"--connect takes http://HOST:PORT (a tooldeck serve --http address), not {url!r}")
    if parts.username or parts.password:
        raise RemoteError("put the token in TOOLDECK_HTTP_TOKEN or --token-file, not in the URL")
    path = parts.path.rstrip("/")
    return f"{parts.scheme}://{parts.netloc}{path if path.endswith('/mcp') else path + '/mcp'}"


def shown(url: str) -> str:
    """The server as the screen names it."""
    parts = urlsplit(url)
    return f"{parts.scheme}://{parts.netloc}"


def entry_of(item: Item) -> dict[str, Any]:
    """A conversation item as ``agent_run start history`` takes it (images stay local)."""
    if isinstance(item, Message):
        return {"kind": "message", "role": item.role, "text": item.text}
    if isinstance(item, Reasoning):
        return {"kind": "reasoning", "text": item.text}
    if isinstance(item, FunctionCall):
        return {"kind": "call", "name": item.name, "call_id": item.call_id, "text": item.arguments}
    return {"kind": "result", "name": item.name, "call_id": item.call_id, "text": item.output,
            "is_error": item.is_error}  # fmt: skip


def item_of(entry: dict[str, Any]) -> Item:
    """An ``agent_manage get_log`` entry as a conversation item."""
    kind, text = entry.get("kind"), str(entry.get("text") or "")
    if kind == "message":
        return Message(entry.get("role") or "user", text)
    if kind == "reasoning":
        return Reasoning(text)
    if kind == "call":
        return FunctionCall(str(entry.get("call_id") or ""), str(entry.get("name") or ""), text)
    return FunctionResult(str(entry.get("call_id") or ""), str(entry.get("name") or ""), text,
                          bool(entry.get("is_error")))  # fmt: skip


class Server:
    """agent_run / agent_manage / manage_workspaces over one MCP session."""

    def __init__(self, session: Any, url: str) -> None:
        self.session = session
        self.url = url

    async def call(self, name: str, args: dict[str, Any]) -> dict[str, Any]:
        res = await self.session.call_tool(name, args)
        text = " ".join(getattr(c, "text", "") for c in res.content or []).strip()
        if res.is_error:
            if "unknown_tool" in text or "no tool named" in text.lower():
                raise RemoteError(f"{shown(self.url)} does not offer {name}; serve it with the full tool profile")
            raise RemoteError(text or f"{name} failed")
        return dict(res.structured_content or {})

    async def workspaces(self) -> list[dict[str, Any]]:
        return list((await self.call("manage_workspaces", {"action": "list"})).get("workspaces") or [])

    async def start(self, **args: Any) -> dict[str, Any]:
        return await self.call("agent_run", {"op": "start", "detach": True, **args})

    async def poll(self, sid: str) -> dict[str, Any]:
        return await self.call("agent_run", {"op": "poll", "session_id": sid})

    async def changed(self, sid: str, version: int, timeout: float = 25.0) -> dict[str, Any]:
        return await self.call("agent_run", {"op": "wait", "session_id": sid, "changed_since": version,
                                             "timeout": timeout})  # fmt: skip

    async def log(self, sid: str, offset: int) -> list[dict[str, Any]]:
        got = await self.call("agent_manage", {"op": "get_log", "session_id": sid, "offset": offset})
        return list(got.get("items") or [])

    async def steer(self, sid: str, message: str) -> dict[str, Any]:
        return await self.call("agent_run", {"op": "steer", "session_id": sid, "message": message})

    async def cancel(self, sid: str) -> None:
        await self.call("agent_run", {"op": "cancel", "session_id": sid})

    async def respond(self, sid: str, interaction_id: str, answer: dict[str, Any]) -> None:
        args = {k: v for k, v in answer.items() if v is not None and k in ("response", "reason", "skip", "answers")}
        await self.call("agent_run", {"op": "respond", "session_id": sid, "interaction_id": interaction_id, **args})
