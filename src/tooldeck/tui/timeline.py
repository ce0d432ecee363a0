"""Conversation items and live events -> blocks on the view.

Why a separate stage: the same items arrive from a file being opened, from
the local model loop and from a server's transcript; the view only wants
blocks. Consecutive tool calls are one turn's calls: they share a block and
sit side by side; results find their call by id; streamed text lives in a
block marked ``streaming`` until its finished item replaces it.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Protocol

from tooldeck.llm.types import FunctionCall, FunctionResult, Item, Message, Reasoning
from tooldeck.tui.blocks import Block, Call, MessageBlock, NoticeBlock, ReasoningBlock, ToolsBlock


class Sink(Protocol):
    def append(self, block: Block) -> None: ...
    def changed(self, block: Block) -> None: ...
    def reset(self, blocks: list[Block]) -> None: ...


class Timeline:
    def __init__(self, sink: Sink) -> None:
        self.sink = sink
        self._calls: dict[str, tuple[ToolsBlock, Call]] = {}
        self._group: ToolsBlock | None = None  # the turn whose calls are still arriving
        self._live_text: MessageBlock | None = None
        self._live_reasoning: ReasoningBlock | None = None

    # whole conversations ------------------------------------------------------------
    def load(self, items: Iterable[Item]) -> None:
        self._calls.clear()
        self._group = self._live_text = self._live_reasoning = None
        blocks: list[Block] = []
        for item in items:
            block = self._place(item)
            if block is not None:
                blocks.append(block)
        self.sink.reset(blocks)

    # finished items ----------------------------------------------------------------------
    def add(self, item: Item) -> None:
        if isinstance(item, Message) and item.role == "assistant" and self._live_text is not None:
            block, self._live_text = self._live_text, None
            block.text, block.streaming = item.text, False
            block.touch()
            self.sink.changed(block)
            self._group = None
            return
        if isinstance(item, Reasoning) and self._live_reasoning is not None:
            rblock, self._live_reasoning = self._live_reasoning, None
            rblock.text, rblock.streaming = item.text, False
            rblock.touch()
            self.sink.changed(rblock)
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
                self._group.touch()
                self.sink.changed(self._group)
                return None
            self._group = ToolsBlock(calls=[call])
            self._calls[item.call_id] = (self._group, call)
            return self._group
        if isinstance(item, FunctionResult):
            if item.call_id in self._calls:
                self._result(item)
                return None
            orphan = Call(item.call_id, item.name, "", "error" if item.is_error else "done", result=item.output)
            return ToolsBlock(calls=[orphan])
        self._group = None
        if isinstance(item, Reasoning):
            return ReasoningBlock(text=item.text)
        return MessageBlock(role=item.role, text=item.text)

    def _result(self, item: FunctionResult) -> None:
        block, call = self._calls[item.call_id]
        call.result = item.output
        call.state = "error" if item.is_error else "done"
        block.touch()
        self.sink.changed(block)

    # live ------------------------------------------------------------------------------
    def stream(self, kind: str, text: str, replace: bool = False) -> None:
        if kind == "reasoning":
            if self._live_reasoning is None:
                self._live_reasoning = ReasoningBlock(streaming=True)
                self.sink.append(self._live_reasoning)
            r = self._live_reasoning
            r.text = text if replace else r.text + text
            r.touch()
            self.sink.changed(r)
            return
        if self._live_text is None:
            if not text:
                return
            self._live_text = MessageBlock(role="assistant", streaming=True)
            self.sink.append(self._live_text)
        m = self._live_text
        m.text = text if replace else m.text + text
        m.touch()
        self.sink.changed(m)

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
        block.touch()
        self.sink.changed(block)

    def end_turn(self, note: str = "") -> None:
        """The turn ended: a half-streamed reply stays on screen, marked, but it is not in the file."""
        for live in (self._live_text, self._live_reasoning):
            if live is not None:
                live.streaming = False
                if isinstance(live, MessageBlock) and note:
                    live.note = note
                live.touch()
                self.sink.changed(live)
        self._live_text = self._live_reasoning = None
        for block, call in self._calls.values():
            if call.state in ("pending", "running"):
                call.state = "interrupted"
                call.result = call.result or "interrupted before it returned"
                block.touch()
                self.sink.changed(block)

    def notice(self, text: str, level: str = "info") -> None:
        self._group = None
        self.sink.append(NoticeBlock(text=text, level=level))
