"""The model loop: model -> tool calls (in parallel) -> results -> model, until an answer.

Independent of files and formats: the ChatMD runner, chats and agent
sessions all call :func:`run_conversation` with a list of items, a Provider
and a Toolbox, and observe it through two callbacks: ``on_event`` (live:
text deltas, tool progress, retries) and ``on_item`` (each finished item,
in conversation order, so a caller can persist at item boundaries).

The running conversation is published in a context variable
(:func:`current_branch`) so a tool such as ``fork`` can branch it and agent
tools can respect the nesting depth, without the loop knowing those tools.
"""

from __future__ import annotations

import asyncio
import contextvars
import dataclasses
import logging
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field

from tooldeck.core.invocation import Invocation, Progress
from tooldeck.core.output import ImagePart
from tooldeck.core.toolbox import Toolbox, ToolResult
from tooldeck.imaging import image_refusal
from tooldeck.llm.errors import ModelError
from tooldeck.llm.provider import Provider
from tooldeck.llm.types import (
    Event,
    FunctionCall,
    FunctionResult,
    ImageInput,
    Item,
    Message,
    RequestOptions,
    ToolDone,
    ToolOutput,
    ToolStart,
    TurnDone,
    Usage,
)

MAX_TURNS = 64
MAX_IMAGES = 8  # images of one tool result sent to the model (each at most imaging.MAX_SEND_BYTES)
log = logging.getLogger("tooldeck.llm")


@dataclass
class Result:
    """What a conversation produced: its new items, final answer and token usage."""

    items: list[Item] = field(default_factory=list)
    text: str = ""
    usage: Usage = field(default_factory=Usage)
    turns: int = 0
    stopped: str = "answer"  # "answer" | "max_turns"


@dataclass
class Branch:
    """The conversation a tool call runs inside (for ``fork`` and depth limits)."""

    provider: Provider
    toolbox: Toolbox
    opts: RequestOptions
    history: list[Item]  # the conversation before the turn that made the current calls
    depth: int = 0
    parallel: bool = True
    on_event: Callable[[Event], None] | None = None


_branch: contextvars.ContextVar[Branch | None] = contextvars.ContextVar("tooldeck_llm_branch", default=None)


def current_branch() -> Branch | None:
    """The conversation the calling tool runs inside, or None outside any loop."""
    return _branch.get()


def _emitter(on_event: Callable[[Event], None] | None) -> Callable[[Event], None]:
    def emit(event: Event) -> None:
        if on_event is None:
            return
        try:
            on_event(event)
        except Exception:  # a display error must not end the conversation
            log.exception("event observer raised; ignored")

    return emit


async def run_conversation(
    provider: Provider,
    items: Sequence[Item],
    toolbox: Toolbox,
    *,
    opts: RequestOptions | None = None,
    parallel: bool = True,
    on_event: Callable[[Event], None] | None = None,
    on_item: Callable[[Item], None] | None = None,
    max_turns: int = MAX_TURNS,
    depth: int = 0,
    inbox: Callable[[], list[Item]] | None = None,
) -> Result:
    """Run until the model answers without calling a tool (or ``max_turns``).

    Raises :class:`ModelError` for endpoint errors; items produced before the
    error were already handed to ``on_item``.

    ``inbox`` (agent sessions: steering) is drained before every model turn;
    its items join the conversation, and an answer given while the inbox
    holds more does not end the run: the model sees the new items first."""
    emit = _emitter(on_event)
    opts = opts or provider.options()
    if opts.parallel_tool_calls != parallel:
        opts = dataclasses.replace(opts, parallel_tool_calls=parallel)
    history: list[Item] = list(items)
    result = Result()

    def add(item: Item) -> None:
        history.append(item)
        result.items.append(item)
        if on_item is not None:
            on_item(item)

    tools = list(toolbox)

    def drain() -> bool:
        got = inbox() if inbox is not None else []
        for item in got:
            add(item)
        return bool(got)

    while result.turns < max_turns:
        drain()
        turn = await provider.complete(history, tools, opts, emit)
        result.turns += 1
        result.usage.add(turn.usage)
        emit(TurnDone(turn))
        before = list(history)
        if turn.reasoning is not None:
            add(turn.reasoning)
        if turn.text or not turn.calls:
            add(Message("assistant", turn.text))
            result.text = turn.text
        if not turn.calls:
            if drain():  # steered while the model answered: let it see the new message
                continue
            return result
        for call in turn.calls:
            add(call)
        branch = Branch(provider, toolbox, opts, before, depth, parallel, on_event)
        token = _branch.set(branch)
        try:
            results = await run_calls(toolbox, turn.calls, parallel=parallel, emit=emit, depth=depth)
        finally:
            _branch.reset(token)
        for r in results:
            add(r)
    result.stopped = "max_turns"
    return result


def _to_result(call: FunctionCall, res: ToolResult) -> FunctionResult:
    """The loop's item for a tool's result: its text, and its image parts for
    the model to see (held to the inline ``<img>`` size limit; an image over
    it is named in the text instead)."""
    if res.output is None or not any(isinstance(p, ImagePart) for p in res.output.parts):
        return FunctionResult(call.call_id, call.name, res.text, res.is_error)
    images: list[ImageInput] = []
    notes: list[str] = []
    for part in res.output.parts:
        if not isinstance(part, ImagePart):
            continue
        full = len(images) >= MAX_IMAGES
        refused = f"over {MAX_IMAGES} images in one result" if full else image_refusal(part.data_uri)
        if refused is None:
            images.append(ImageInput(part.data_uri, part.detail))
        else:
            notes.append(f"[an image of {call.name} was not sent to the model: {refused}]")
    text = "\n".join([res.text, *notes])
    return FunctionResult(call.call_id, call.name, text, res.is_error, tuple(images))


async def run_calls(
    toolbox: Toolbox,
    calls: Sequence[FunctionCall],
    *,
    parallel: bool = True,
    emit: Callable[[Event], None],
    depth: int = 0,
) -> list[FunctionResult]:
    """Run the calls of one turn (bounded parallelism); results in call order.

    Each call gets its own Invocation, so its progress reaches ``emit``
    tagged with the call's id and channel."""
    gate = asyncio.Semaphore(max(1, toolbox.max_concurrency) if parallel else 1)

    async def one(call: FunctionCall) -> FunctionResult:
        async with gate:
            emit(ToolStart(call, depth))

            def progress(p: Progress, c: FunctionCall = call) -> None:
                emit(ToolOutput(c.call_id, c.name, str(p.channel), p.update.text))

            inv = Invocation.create(progress)
            res = await toolbox.call(call.name, call.arguments or None, invocation=inv, call_id=call.call_id)
            out = _to_result(call, res)
            emit(ToolDone(out))
            return out

    return list(await asyncio.gather(*(one(c) for c in calls)))


__all__ = ["Branch", "ModelError", "Result", "current_branch", "run_calls", "run_conversation"]
