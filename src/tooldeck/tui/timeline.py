"""Conversation items and live events -> blocks on the view.

Why a separate stage: the same items arrive from a file being opened, from
the local model loop and from a server's transcript; the view only wants
blocks. Consecutive tool calls are one turn's calls: they share a block and
sit side by side; results find their call by id. An assistant message is
cut into pieces (:func:`~tooldeck.tui.blocks.chunks`), one block each, so a
streamed reply re-renders only its last piece per delta and a long message
draws a piece at a time; its finished item settles the same blocks.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from typing import Protocol

from tooldeck.llm.types import FunctionCall, FunctionResult, Item, Message, Reasoning
from tooldeck.tui.blocks import Block, Call, MessageBlock, NoticeBlock, ReasoningBlock, ToolsBlock, chunks


def awaiting_answer(items: Sequence[Item]) -> bool:
    """The conversation ends with what the model has not answered: a user message, or tool results."""
    last = items[-1] if items else None
    return isinstance(last, FunctionResult) or (isinstance(last, Message) and last.role == "user")


class Sink(Protocol):
    def append(self, block: Block) -> None: ...
    def insert_after(self, anchor: Block, block: Block) -> None: ...
    def remove(self, block: Block) -> None: ...
    def changed(self, block: Block) -> None: ...
    def reset(self, blocks: list[Block]) -> None: ...


class _Collect:
    """A sink that only gathers blocks (loading a whole conversation at once)."""

    def __init__(self) -> None:
        self.blocks: list[Block] = []

    def append(self, block: Block) -> None:
        self.blocks.append(block)

    def insert_after(self, anchor: Block, block: Block) -> None:
        self.blocks.insert(self.blocks.index(anchor) + 1, block)

    def remove(self, block: Block) -> None:
        self.blocks.remove(block)

    def changed(self, block: Block) -> None:
        return None

    def reset(self, blocks: list[Block]) -> None:
        self.blocks = list(blocks)


class Timeline:
    def __init__(self, sink: Sink) -> None:
        self.sink = sink
        self._calls: dict[str, tuple[ToolsBlock, Call]] = {}
        self._group: ToolsBlock | None = None  # the turn whose calls are still arriving
        self._live_parts: list[MessageBlock] = []
        self._live_text = ""
        self._live_reasoning: ReasoningBlock | None = None

    # whole conversations ------------------------------------------------------------
    def load(self, items: Iterable[Item]) -> None:
        target, self.sink = self.sink, _Collect()
        try:
            self._calls.clear()
            self._group, self._live_reasoning = None, None
            self._live_parts, self._live_text = [], ""
            for item in items:
                self.add(item)
            blocks = self.sink.blocks  # type: ignore[attr-defined]
        finally:
            self.sink = target
        self.sink.reset(blocks)

    # finished items ----------------------------------------------------------------------
    def add(self, item: Item) -> None:
        if isinstance(item, Message) and item.role == "assistant":
            self._group = None
            parts, self._live_parts, self._live_text = self._live_parts, [], ""
            self._set_parts(parts, chunks(item.text), streaming=False)
            return
        if isinstance(item, Reasoning) and self._live_reasoning is not None:
            rblock, self._live_reasoning = self._live_reasoning, None
            rblock.text, rblock.streaming = item.text, False
            self._touch(rblock)
            return
        if isinstance(item, FunctionResult) and item.call_id in self._calls:
            self._result(item)
            return
        block = self._place(item)
        if block is not None:
            self.sink.append(block)

    def _place(self, item: Item) -> Block | None:
        """The block for ``item``, or None when it joined an existing one."""
        if isinstance(item, FunctionCall):
            call = Call(item.call_id, item.name, item.arguments)
            if self._group is not None:
                self._group.calls.append(call)
                self._calls[item.call_id] = (self._group, call)
                self._touch(self._group)
                return None
            self._group = ToolsBlock(calls=[call])
            self._calls[item.call_id] = (self._group, call)
            return self._group
        if isinstance(item, FunctionResult):
            orphan = Call(item.call_id, item.name, "", "error" if item.is_error else "done", result=item.output)
            return ToolsBlock(calls=[orphan])
        self._group = None
        if isinstance(item, Reasoning):
            return ReasoningBlock(text=item.text)
        return MessageBlock(role=item.role, text=item.text)

    def _set_parts(self, parts: list[MessageBlock], texts: list[str], *, streaming: bool) -> list[MessageBlock]:
        """Make ``parts`` show ``texts``: changed pieces redrawn, new ones added after the last, extra removed."""
        last = len(texts) - 1
        for i, text in enumerate(texts):
            if i < len(parts):
                b = parts[i]
                if (b.text, b.streaming, b.last) != (text, streaming and i == 0, i == last):
                    b.text, b.streaming, b.last = text, streaming and i == 0, i == last
                    self._touch(b)
                continue
            b = MessageBlock(role="assistant", text=text, streaming=streaming and i == 0, first=i == 0, last=i == last)
            if parts:
                self.sink.insert_after(parts[-1], b)
            else:
                self.sink.append(b)
            parts.append(b)
        for extra in parts[len(texts) :]:
            self.sink.remove(extra)
        del parts[len(texts) :]
        return parts

    def _touch(self, block: Block) -> None:
        block.touch()
        self.sink.changed(block)

    def _result(self, item: FunctionResult) -> None:
        block, call = self._calls[item.call_id]
        call.result = item.output
        call.state = "error" if item.is_error else "done"
        self._touch(block)

    # live ------------------------------------------------------------------------------
    def stream(self, kind: str, text: str, replace: bool = False) -> None:
        if kind == "reasoning":
            if self._live_reasoning is None:
                self._live_reasoning = ReasoningBlock(streaming=True)
                self.sink.append(self._live_reasoning)
            r = self._live_reasoning
            r.text = text if replace else r.text + text
            self._touch(r)
            return
        self._live_text = text if replace else self._live_text + text
        if self._live_text:
            self._group = None
            r = self._live_reasoning
            if r is not None and r.streaming:  # the answer has begun: the thinking is over
                r.streaming = False
                self._touch(r)
            self._set_parts(self._live_parts, chunks(self._live_text), streaming=True)

    def tool(self, call_id: str, state: str, text: str = "", is_error: bool = False) -> None:
        found = self._calls.get(call_id)
        if found is None:
            return
        block, call = found
        if state == "running" and call.state == "pending":
            call.state = "running"
        elif state == "progress":
            call.progress = (call.progress + text)[-4000:]
        elif state == "done":
            call.result, call.state = text, "error" if is_error else "done"
        self._touch(block)

    def end_turn(self, note: str = "") -> None:
        """The turn ended: a half-streamed reply stays on screen, marked, but it is not in the file."""
        if self._live_parts:
            head = self._live_parts[0]
            head.streaming, head.note = False, note
            self._touch(head)
        if self._live_reasoning is not None:
            self._live_reasoning.streaming = False
            self._touch(self._live_reasoning)
        self._live_parts, self._live_text, self._live_reasoning = [], "", None
        for block, call in self._calls.values():
            if call.state in ("pending", "running"):
                call.state = "interrupted"
                call.result = call.result or "interrupted before it returned"
                self._touch(block)

    def notice(self, text: str, level: str = "info") -> None:
        self._group = None
        self.sink.append(NoticeBlock(text=text, level=level))
