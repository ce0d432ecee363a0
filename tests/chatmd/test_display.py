"""The terminal display: streamed text, tool lines, progress joined into lines, usage."""

from __future__ import annotations

import io

from rich.console import Console

from tooldeck.chatmd.display import Display
from tooldeck.llm.types import (
    FunctionCall,
    FunctionResult,
    ReasoningDelta,
    TextDelta,
    ToolDone,
    ToolOutput,
    ToolStart,
    Turn,
    TurnDone,
    Usage,
)


def test_display_streams_text_and_joins_tool_progress_into_lines() -> None:
    buf = io.StringIO()
    d = Display(Console(file=buf, width=200, soft_wrap=True, color_system=None))
    d(ReasoningDelta("think"))
    d(TextDelta("Hel"))
    d(TextDelta("lo"))
    d(TurnDone(Turn(text="Hello")))
    call = FunctionCall("c1", "triage", '{"input": "x"}')
    d(ToolStart(call))
    for chunk in ("tri", "aged\nsec", "ond"):
        d(ToolOutput("c1", "triage", "assistant", chunk))
    d(ToolDone(FunctionResult("c1", "triage", "triaged second")))
    d(ToolDone(FunctionResult("c2", "read_file", "error [not_found]: no such file", True)))
    d.usage(Usage(10, 5, 2), 2)
    out = buf.getvalue()
    assert out.startswith("think\nHello\n")
    assert '→ triage {"input": "x"}' in out
    assert "│ triage [assistant] triaged\n" in out and "│ triage [assistant] second\n" in out
    assert "✓ triage (14 chars)" in out and "✗ read_file: error [not_found]: no such file" in out
    assert "tokens: input 10, output 5, reasoning 2 (total 15) over 2 model calls" in out


def test_non_streamed_turn_prints_its_text_once() -> None:
    buf = io.StringIO()
    d = Display(Console(file=buf, width=200, color_system=None))
    d(TurnDone(Turn(text="whole answer")))
    assert buf.getvalue() == "whole answer\n"
