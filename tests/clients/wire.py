"""The three model wires the agent clients speak, for the scripted model server.

Each wire knows how to read a request (which tools it offers, which tool
results it carries back, is it the agent's main turn) and how to render a
scripted turn (one tool call, or a final answer) the way the real API does:

- ``responses``: OpenAI Responses, streamed as SSE (Codex CLI);
- ``anthropic``: Anthropic Messages, SSE or plain JSON (Claude Code);
- ``gemini``: Gemini ``generateContent`` / ``streamGenerateContent?alt=sse`` (Gemini CLI).

A turn is a tool call ``(name, arguments)`` or a text answer ``str``.
"""

from __future__ import annotations

import itertools
import json
from collections.abc import Iterator
from typing import Any

Turn = tuple[str, dict[str, Any]] | str
_ids = itertools.count(1)


def _text_of(content: Any) -> str:
    """Every text inside a tool result's content, however the wire nests it."""
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        return "\n".join(_text_of(c) for c in content)
    if isinstance(content, dict):
        for key in ("text", "output", "content", "response", "result"):
            if key in content:
                return _text_of(content[key])
        return json.dumps(content)
    return "" if content is None else json.dumps(content)


# requests ---------------------------------------------------------------------------
def tool_names(wire: str, body: dict[str, Any]) -> list[str]:
    """The names of the function tools a request offers the model (``namespace::name`` in a namespace)."""
    names: list[str] = []

    def walk(tools: Any, space: str = "") -> None:
        for t in tools or []:
            if not isinstance(t, dict):
                continue
            if t.get("type") == "namespace":  # Codex: a server's tools inside one namespace
                walk(t.get("tools"), f"{t.get('name')}::")
                continue
            if isinstance(t.get("name"), str):
                names.append(space + t["name"])
            for key in ("tools", "functionDeclarations", "function_declarations"):
                walk(t.get(key))
            fn = t.get("function")
            if isinstance(fn, dict) and isinstance(fn.get("name"), str):
                names.append(fn["name"])

    walk(body.get("tools"))
    return names


def tool_results(wire: str, body: dict[str, Any]) -> list[str]:
    """The text of each tool result the request carries back, in order."""
    out: list[str] = []
    if wire == "responses":
        for item in body.get("input") or []:
            if isinstance(item, dict) and item.get("type") in ("function_call_output", "custom_tool_call_output"):
                out.append(_text_of(item.get("output")))
    elif wire == "anthropic":
        for msg in body.get("messages") or []:
            for block in msg.get("content") or [] if isinstance(msg.get("content"), list) else []:
                if isinstance(block, dict) and block.get("type") == "tool_result":
                    out.append(_text_of(block.get("content")))
    else:
        for msg in body.get("contents") or []:
            for part in msg.get("parts") or []:
                if isinstance(part, dict) and "functionResponse" in part:
                    out.append(_text_of(part["functionResponse"].get("response")))
    return out


def wants_json(wire: str, body: dict[str, Any]) -> dict[str, Any] | None:
    """The JSON schema a side request (Gemini's next-speaker check, router) asks the answer to follow."""
    cfg = body.get("generationConfig") or body.get("generation_config") or {}
    return cfg.get("responseJsonSchema") or cfg.get("responseSchema") or None


def sample_of(schema: dict[str, Any]) -> Any:
    """A small value that follows ``schema`` (first enum value, empty strings)."""
    if "enum" in schema:
        return schema["enum"][0]
    kind = str(schema.get("type", "object")).lower()
    if kind == "object":
        props = schema.get("properties") or {}
        return {k: sample_of(v) for k, v in props.items()}
    if kind == "array":
        return []
    if kind in ("number", "integer"):
        return schema.get("minimum", 1)
    if kind == "boolean":
        return False
    return "scripted"


# responses --------------------------------------------------------------------------
def render_responses(turn: Turn, model: str) -> Iterator[str]:
    """OpenAI Responses SSE frames for one turn."""
    if isinstance(turn, str):
        item: dict[str, Any] = {
            "type": "message", "id": f"msg_{next(_ids)}", "role": "assistant", "status": "completed",
            "content": [{"type": "output_text", "text": turn, "annotations": []}],
        }  # fmt: skip
    else:
        space, _, name = turn[0].rpartition("::")
        item = {"type": "function_call", "id": f"fc_{next(_ids)}", "call_id": f"call_{next(_ids)}",
                "name": name, "arguments": json.dumps(turn[1]), "status": "completed"}  # fmt: skip
        if space:
            item["namespace"] = space
    rid = f"resp_{next(_ids)}"
    usage = {"input_tokens": 10, "output_tokens": 5, "total_tokens": 15, "input_tokens_details": {"cached_tokens": 0},
             "output_tokens_details": {"reasoning_tokens": 0}}  # fmt: skip
    base = {"id": rid, "object": "response", "created_at": 0, "model": model, "output": []}
    events = [
        {"type": "response.created", "response": {**base, "status": "in_progress"}},
        {"type": "response.output_item.added", "output_index": 0, "item": item},
        {"type": "response.output_item.done", "output_index": 0, "item": item},
        {"type": "response.completed", "response": {**base, "status": "completed", "output": [item], "usage": usage}},
    ]
    for seq, ev in enumerate(events):
        yield f"event: {ev['type']}\ndata: {json.dumps({**ev, 'sequence_number': seq})}\n\n"


# anthropic --------------------------------------------------------------------------
def anthropic_message(turn: Turn, model: str) -> dict[str, Any]:
    if isinstance(turn, str):
        block: dict[str, Any] = {"type": "text", "text": turn}
    else:
        block = {"type": "tool_use", "id": f"toolu_{next(_ids):06d}", "name": turn[0], "input": turn[1]}
    return {
        "id": f"msg_{next(_ids):06d}", "type": "message", "role": "assistant", "model": model,
        "content": [block], "stop_reason": "end_turn" if isinstance(turn, str) else "tool_use",
        "stop_sequence": None, "usage": {"input_tokens": 10, "output_tokens": 5},
    }  # fmt: skip


def render_anthropic(turn: Turn, model: str) -> Iterator[str]:
    """Anthropic Messages SSE frames for one turn."""
    msg = anthropic_message(turn, model)
    block = msg["content"][0]
    start = {**block, "text": ""} if block["type"] == "text" else {**block, "input": {}}
    delta = (
        {"type": "text_delta", "text": block["text"]}
        if block["type"] == "text"
        else {"type": "input_json_delta", "partial_json": json.dumps(block["input"])}
    )
    events = [
        {"type": "message_start", "message": {**msg, "content": [], "stop_reason": None,
                                              "usage": {"input_tokens": 10, "output_tokens": 1}}},
        {"type": "content_block_start", "index": 0, "content_block": start},
        {"type": "content_block_delta", "index": 0, "delta": delta},
        {"type": "content_block_stop", "index": 0},
        {"type": "message_delta", "delta": {"stop_reason": msg["stop_reason"], "stop_sequence": None},
         "usage": {"output_tokens": 5}},
        {"type": "message_stop"},
    ]  # fmt: skip
    for ev in events:
        yield f"event: {ev['type']}\ndata: {json.dumps(ev)}\n\n"


# gemini -----------------------------------------------------------------------------
def gemini_response(turn: Turn | dict[str, Any]) -> dict[str, Any]:
    if isinstance(turn, dict):  # a JSON answer to a side request
        part: dict[str, Any] = {"text": json.dumps(turn)}
    elif isinstance(turn, str):
        part = {"text": turn}
    else:
        part = {"functionCall": {"name": turn[0], "args": turn[1]}}
    return {
        "candidates": [{"content": {"role": "model", "parts": [part]}, "finishReason": "STOP", "index": 0}],
        "usageMetadata": {"promptTokenCount": 10, "candidatesTokenCount": 5, "totalTokenCount": 15},
        "modelVersion": "scripted",
    }


def render_gemini(turn: Turn | dict[str, Any]) -> Iterator[str]:
    yield f"data: {json.dumps(gemini_response(turn))}\n\n"
