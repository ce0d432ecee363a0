"""Responses API: items -> ``input``, and a response (whole or streamed) -> Turn.

Streaming uses the deltas only for live display; the turn itself is read
from the final ``response.completed`` event, the same shape as a
non-streamed response, so both paths share :func:`parse`.
"""

from __future__ import annotations

from collections.abc import AsyncIterator, Callable, Sequence
from typing import Any

from tooldeck.core.tool import Tool
from tooldeck.llm.errors import ModelError
from tooldeck.llm.types import (
    Event,
    FunctionCall,
    FunctionResult,
    Item,
    Message,
    Reasoning,
    ReasoningDelta,
    RequestOptions,
    TextDelta,
    Turn,
    Usage,
)
from tooldeck.llm.wire_chat import tool_spec


def _message(msg: Message) -> dict[str, Any]:
    if msg.role == "assistant":
        return {"role": "assistant", "content": [{"type": "output_text", "text": msg.text}]}
    parts: list[dict[str, Any]] = [{"type": "input_text", "text": msg.text}] if msg.text or not msg.images else []
    for img in msg.images:
        parts.append({"type": "input_image", "image_url": img.data_uri, "detail": img.detail})
    return {"role": msg.role, "content": parts}


def _output(result: FunctionResult) -> str | list[dict[str, Any]]:
    """A function call's output: its text, or text and images as content parts."""
    if not result.images:
        return result.output
    parts: list[dict[str, Any]] = [{"type": "input_text", "text": result.output}]
    parts.extend({"type": "input_image", "image_url": i.data_uri, "detail": i.detail} for i in result.images)
    return parts


def input_items(items: Sequence[Item]) -> list[dict[str, Any]]:
    out: list[dict[str, Any]] = []
    for item in items:
        if isinstance(item, Message):
            out.append(_message(item))
        elif isinstance(item, FunctionCall):
            out.append(
                {"type": "function_call", "call_id": item.call_id, "name": item.name, "arguments": item.arguments}
            )
        elif isinstance(item, FunctionResult):
            out.append({"type": "function_call_output", "call_id": item.call_id, "output": _output(item)})
        elif isinstance(item, Reasoning):
            continue  # a summary alone cannot be replayed (the API wants the encrypted item)
    return out


def request(items: Sequence[Item], tools: Sequence[Tool], opts: RequestOptions, stream: bool) -> dict[str, Any]:
    kw: dict[str, Any] = {"model": opts.model, "input": input_items(items), "stream": stream, "store": False}
    if tools:
        kw["tools"] = [
            {"type": "function", "name": n, "description": d, "parameters": p, "strict": st}
            for n, d, p, st in map(tool_spec, tools)
        ]
        kw["parallel_tool_calls"] = opts.parallel_tool_calls
    if opts.max_tokens is not None:
        kw["max_output_tokens"] = opts.max_tokens
    if opts.temperature is not None:
        kw["temperature"] = opts.temperature
    if opts.reasoning_effort is not None:
        kw["reasoning"] = {"effort": opts.reasoning_effort, "summary": "auto"}
    return kw


def _usage(u: Any) -> Usage:
    if u is None:
        return Usage()
    details = getattr(u, "output_tokens_details", None)
    return Usage(
        input_tokens=getattr(u, "input_tokens", 0) or 0,
        output_tokens=getattr(u, "output_tokens", 0) or 0,
        reasoning_tokens=(getattr(details, "reasoning_tokens", 0) or 0) if details is not None else 0,
        reported=1,
    )


def parse(resp: Any) -> Turn:
    status = getattr(resp, "status", None)
    if status == "failed":
        err = getattr(resp, "error", None)
        raise ModelError("server", "the model response failed", remote=str(getattr(err, "message", None) or ""))
    turn = Turn(usage=_usage(getattr(resp, "usage", None)), finish_reason=status)
    text: list[str] = []
    summary: list[str] = []
    reasoning_id: str | None = None
    for n, item in enumerate(getattr(resp, "output", None) or []):
        kind = getattr(item, "type", None)
        if kind == "message":
            for part in item.content or []:
                if getattr(part, "type", None) == "output_text":
                    text.append(part.text)
        elif kind == "reasoning":
            reasoning_id = getattr(item, "id", None)
            summary.extend(s.text for s in (getattr(item, "summary", None) or []) if getattr(s, "text", None))
        elif kind == "function_call":
            name = getattr(item, "name", None)
            if not name:
                raise ModelError("malformed", f"the model sent output item #{n + 1} (function_call) without a name")
            call_id = getattr(item, "call_id", None) or getattr(item, "id", None) or f"call_{n + 1}"
            turn.calls.append(FunctionCall(call_id, name, getattr(item, "arguments", None) or ""))
    turn.text = "".join(text)
    if summary:
        turn.reasoning = Reasoning("\n\n".join(summary), reasoning_id)
    return turn


async def consume(stream: AsyncIterator[Any], emit: Callable[[Event], None]) -> Turn:
    final: Any = None
    async for event in stream:
        kind = getattr(event, "type", "")
        if kind == "response.output_text.delta":
            emit(TextDelta(event.delta))
        elif kind == "response.reasoning_summary_text.delta":
            emit(ReasoningDelta(event.delta))
        elif kind in ("response.completed", "response.incomplete", "response.failed"):
            final = event.response
        elif kind == "error":
            raise ModelError("server", "the model stream reported an error", remote=str(getattr(event, "message", "")))
    if final is None:
        raise ModelError("malformed", "the model stream ended without a response.completed event")
    return parse(final)
