"""MCP answers in wire form, built without the SDK.

Both hosts of the stdio server use these functions: the early front
(:mod:`tooldeck.mcp.early`, which answers while the SDK is still loading)
writes what they return as it is, and the SDK's handlers
(:mod:`tooldeck.mcp.server`, :mod:`tooldeck.mcp.server_extras`) return the
same dicts, which the SDK then validates and sieves for the negotiated
protocol version. One function per answer, so the two paths cannot drift;
``tests/mcp/test_early_front.py`` compares both paths' answers on the wire.

Standard library and tooldeck's core only: this module is on the start-up
path, imported before the SDK (~0.4 s) is.
"""

from __future__ import annotations

import json
from typing import TYPE_CHECKING, Any

from tooldeck import __version__
from tooldeck.mcp.schema_wire import compact_schema

if TYPE_CHECKING:
    from tooldeck.core.tool import Tool
    from tooldeck.core.toolbox import ToolResult

SERVER_NAME = "tooldeck"
INSTRUCTIONS = (
    "tooldeck: safe, token-efficient coding tools over this workspace (RepoPrompt/ochat tool names). "
    "Read: get_file_tree, read_file, file_search (grep), get_code_structure (codemaps), find_symbol, git. "
    "Change: apply_patch (V4A, several files), apply_edits (one file), file_actions. Run: shell. "
    "Errors read `error [code]: message`; the message says how to recover."
)

# The SDK's handshake versions (mcp_types.version; a test holds them equal) and
# the ones whose answers the front builds itself: those where a test compared
# them with the SDK's, field for field. Any other version is the SDK's to answer.
HANDSHAKE_VERSIONS = ("2024-11-05", "2025-03-26", "2025-06-18", "2025-11-25")
LATEST_HANDSHAKE = "2025-11-25"
BUILT_VERSIONS = ("2025-03-26", "2025-06-18", "2025-11-25")


def negotiate(requested: object) -> str:
    """The SDK's rule (``ServerRunner._negotiate_initialize``): the requested
    version when it is a handshake version, else the newest one."""
    return requested if isinstance(requested, str) and requested in HANDSHAKE_VERSIONS else LATEST_HANDSHAKE


def initialize_result(version: str, prompts_changed: bool, resources: bool = True) -> dict[str, Any]:
    """What the SDK answers to ``initialize`` for tooldeck's server: the
    capabilities follow from the handlers it registers (prompts and tools
    always, resources unless switched off) and the notification flags."""
    caps: dict[str, Any] = {"prompts": {"listChanged": prompts_changed}}
    if resources:
        caps["resources"] = {"listChanged": False, "subscribe": False}
    caps["tools"] = {"listChanged": True}
    return {
        "capabilities": caps,
        "instructions": INSTRUCTIONS,
        "protocolVersion": version,
        "serverInfo": {"name": SERVER_NAME, "version": __version__},
    }


def tool_wire(t: Tool) -> dict[str, Any]:
    """A catalog tool as an MCP ``Tool`` (custom tools, which MCP lacks,
    become function tools taking ``{"input": string}``)."""
    # lazy: the early front imports this module before the tool model (pydantic) loads
    from tooldeck.core.tool import CUSTOM_INPUT_SCHEMA

    ann = t.annotations
    schema = compact_schema(t.parameters) if t.kind == "function" else CUSTOM_INPUT_SCHEMA
    description = t.description
    if t.kind == "custom":
        description += "\nPass the raw input as the `input` string."
    hints: dict[str, Any] = {} if ann.title is None else {"title": ann.title}
    hints |= {
        "readOnlyHint": ann.read_only,
        "destructiveHint": ann.destructive,
        "idempotentHint": ann.idempotent,
        "openWorldHint": ann.open_world,
    }
    return {"name": t.name, "description": description, "inputSchema": schema, "annotations": hints}


def tools_result(tools: list[dict[str, Any]]) -> dict[str, Any]:
    return {"tools": tools}


def to_call_result(result: ToolResult) -> dict[str, Any]:
    """The ``tools/call`` result in wire form (camelCase keys).

    A plain dict, not a ``types.CallToolResult``: the SDK validates a handler's
    result against the protocol surface anyway, so building a model first
    would only validate and dump the same data twice on every call."""
    # lazy: the early front imports this module before the tool model (pydantic) loads
    from tooldeck.core.output import ImagePart, TextPart

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


def internal_error(exc: BaseException) -> dict[str, Any]:
    """The result of a call whose handling itself failed (never a dead server)."""
    text = f"error [internal_error]: {type(exc).__name__}: {exc}"
    return {"content": [{"type": "text", "text": text}], "isError": True}


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
