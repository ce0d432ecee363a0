"""Chat Completions: items -> ``messages``, and a response (whole or streamed) -> Turn.

Why a module per wire API: each translation reads top to bottom next to the
shape it targets, and the provider only picks one.
"""

from __future__ import annotations

import weakref
from collections.abc import AsyncIterator, Callable, Sequence
from typing import Any

from tooldeck.core.tool import CUSTOM_INPUT_SCHEMA, Tool
from tooldeck.llm.errors import ModelError
from tooldeck.llm.strict import function_schema
from tooldeck.llm.types import (
    Event,
    FunctionCall,
    FunctionResult,
    ImageInput,
    Item,
    Message,
    Reasoning,
    ReasoningDelta,
    RequestOptions,
    TextDelta,
    Turn,
    Usage,
)

_STRICT_CUSTOM = function_schema(CUSTOM_INPUT_SCHEMA, True)
_specs: weakref.WeakKeyDictionary[Tool, tuple[dict[str, Any], bool]] = weakref.WeakKeyDictionary()


def tool_spec(t: Tool) -> tuple[str, str, dict[str, Any], bool]:
    """(name, description, JSON schema, strict) as a model sees it: custom
    tools take ``{input}``; a strict tool's schema in the strict subset, or
    ``strict`` false when its schema has none (:mod:`tooldeck.llm.strict`)."""
    if t.kind == "custom":
        schema, strict = _STRICT_CUSTOM
        return t.name, t.description + "\nPass the raw input as the `input` string.", schema, strict
    known = _specs.get(t)
    if known is None:  # a tool's schema never changes: convert it once (every request sends it)
        known = _specs[t] = function_schema(t.parameters, t.strict)
    return t.name, t.description, *known


def _image_part(img: ImageInput) -> dict[str, Any]:
    return {"type": "image_url", "image_url": {"url": img.data_uri, "detail": img.detail}}


def _images_message(results: list[FunctionResult]) -> dict[str, Any]:
    """The user message that carries the images of the tool results just
    before it: a ``tool`` message takes text only."""
    parts: list[dict[str, Any]] = []
    for r in results:
        n = len(r.images)
        parts.append({"type": "text", "text": f"{n} image{'s' if n != 1 else ''} returned by {r.name} "
                                              f"(call {r.call_id}):"})  # fmt: skip
        parts.extend(_image_part(img) for img in r.images)
    return {"role": "user", "content": parts}


def _content(msg: Message) -> str | list[dict[str, Any]]:
    if not msg.images:
        return msg.text
    parts: list[dict[str, Any]] = [{"type": "text", "text": msg.text}] if msg.text else []
    parts.extend(_image_part(img) for img in msg.images)
    return parts


def messages(items: Sequence[Item]) -> list[dict[str, Any]]:
    """Consecutive function calls become one assistant message with ``tool_calls``.
    Images of tool results follow the group of ``tool`` messages as one user
    message (the API wants the tool messages right after the calls)."""
    out: list[dict[str, Any]] = []
    pictured: list[FunctionResult] = []
    for item in items:
        if pictured and not isinstance(item, FunctionResult):
            out.append(_images_message(pictured))
            pictured = []
        if isinstance(item, Message):
            out.append({"role": item.role, "content": _content(item)})
        elif isinstance(item, FunctionCall):
            call = {
                "id": item.call_id,
                "type": "function",
                "function": {"name": item.name, "arguments": item.arguments},
            }
            last = out[-1] if out else None
            if last is not None and last["role"] == "assistant" and not last.get("_closed"):
                last.setdefault("tool_calls", []).append(call)
                if last.get("content") == "":
                    last["content"] = None
            else:
                out.append({"role": "assistant", "content": None, "tool_calls": [call]})
        elif isinstance(item, FunctionResult):
            if out and out[-1]["role"] == "assistant":
                out[-1]["_closed"] = True
            out.append({"role": "tool", "tool_call_id": item.call_id, "content": item.output})
            if item.images:
                pictured.append(item)
        elif isinstance(item, Reasoning):
            continue  # summaries are for the reader; the API does not take them back
    if pictured:
        out.append(_images_message(pictured))
    for m in out:
        m.pop("_closed", None)
    return out


def request(items: Sequence[Item], tools: Sequence[Tool], opts: RequestOptions, stream: bool) -> dict[str, Any]:
    kw: dict[str, Any] = {"model": opts.model, "messages": messages(items), "stream": stream}
    if tools:
        kw["tools"] = [
            {"type": "function", "function": {"name": n, "description": d, "parameters": p, "strict": st}}
            for n, d, p, st in map(tool_spec, tools)
        ]
        kw["parallel_tool_calls"] = opts.parallel_tool_calls
    if opts.max_tokens is not None:
        kw["max_completion_tokens"] = opts.max_tokens
    if opts.temperature is not None:
        kw["temperature"] = opts.temperature
    if opts.reasoning_effort is not None:
        kw["reasoning_effort"] = opts.reasoning_effort
    if stream:
        kw["stream_options"] = {"include_usage": True}
    return kw


def _usage(u: Any) -> Usage:
    if u is None:
        return Usage()
    details = getattr(u, "completion_tokens_details", None)
    return Usage(
        input_tokens=u.prompt_tokens or 0,
        output_tokens=u.completion_tokens or 0,
        reasoning_tokens=(getattr(details, "reasoning_tokens", 0) or 0) if details is not None else 0,
        reported=1,
    )


def _call(index: int, call_id: str | None, name: str | None, arguments: str | None) -> FunctionCall:
    if not name:
        raise ModelError("malformed", f"the model sent tool call #{index + 1} without a function name")
    return FunctionCall(call_id or f"call_{index + 1}", name, arguments or "")


def _reasoning_of(obj: Any) -> str | None:
    """``reasoning_content`` (vLLM, DeepSeek) or ``reasoning`` (Ollama, llama.cpp), if any."""
    extra = getattr(obj, "model_extra", None) or {}
    value = extra.get("reasoning_content") or extra.get("reasoning")
    return value if isinstance(value, str) and value else None


def parse(resp: Any) -> Turn:
    if not resp.choices:
        raise ModelError("malformed", "the model response has no choices")
    choice = resp.choices[0]
    msg = choice.message
    turn = Turn(text=msg.content or "", usage=_usage(resp.usage), finish_reason=choice.finish_reason)
    reasoning = _reasoning_of(msg)
    if reasoning:
        turn.reasoning = Reasoning(reasoning)
    for i, tc in enumerate(msg.tool_calls or []):
        fn = getattr(tc, "function", None)
        turn.calls.append(_call(i, tc.id, getattr(fn, "name", None), getattr(fn, "arguments", None)))
    return turn


async def consume(stream: AsyncIterator[Any], emit: Callable[[Event], None]) -> Turn:
    """Fold streamed chunks into a Turn, emitting text and reasoning as they come."""
    text: list[str] = []
    thinking: list[str] = []
    calls: dict[int, list[Any]] = {}  # index -> [id, name, [argument chunks]]
    turn = Turn()
    async for chunk in stream:
        if getattr(chunk, "usage", None) is not None:
            turn.usage = _usage(chunk.usage)
        for choice in chunk.choices or []:
            delta = choice.delta
            if choice.finish_reason:
                turn.finish_reason = choice.finish_reason
            if delta is None:
                continue
            r = _reasoning_of(delta)
            if r:
                thinking.append(r)
                emit(ReasoningDelta(r))
            if delta.content:
                text.append(delta.content)
                emit(TextDelta(delta.content))
            for tc in delta.tool_calls or []:
                slot = calls.setdefault(tc.index if tc.index is not None else len(calls), [None, None, []])
                if tc.id:
                    slot[0] = tc.id
                fn = tc.function
                if fn is not None and fn.name:
                    slot[1] = fn.name
                if fn is not None and fn.arguments:
                    slot[2].append(fn.arguments)
    turn.text = "".join(text)
    if thinking:
        turn.reasoning = Reasoning("".join(thinking))
    for n, index in enumerate(sorted(calls)):
        cid, name, chunks = calls[index]
        turn.calls.append(_call(n, cid, name, "".join(chunks)))
    return turn
