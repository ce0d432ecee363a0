"""Live progress of a run in the terminal (rich): streamed text, tool calls, usage.

Why a separate observer: the model loop only emits events; the runner shows
them. Tool progress can come from worker threads; rich's Console serialises
its writes, so lines from parallel calls never tear.
"""

from __future__ import annotations

import json

from rich.console import Console
from rich.text import Text

from tooldeck.llm.types import (
    Event,
    ReasoningDelta,
    Retrying,
    TextDelta,
    ToolDone,
    ToolOutput,
    ToolStart,
    TurnDone,
    Usage,
)


def _short(text: str, limit: int = 160) -> str:
    try:
        text = json.dumps(json.loads(text), ensure_ascii=False)
    except (ValueError, TypeError):
        pass
    text = text.replace("\n", "⏎")
    return text if len(text) <= limit else text[: limit - 1] + "…"


class Display:
    def __init__(self, console: Console | None = None) -> None:
        self.console = console or Console(highlight=False)
        self._streamed = False  # text of the current turn already printed by deltas
        self._mid_line = False
        self._last: type | None = None  # the kind of the last streamed delta

    def end_line(self) -> None:
        """End a half-printed streamed line (before an error message)."""
        self._newline()

    def _newline(self) -> None:
        if self._mid_line:
            self.console.print()
            self._mid_line = False

    def __call__(self, event: Event) -> None:
        c = self.console
        if isinstance(event, (TextDelta, ReasoningDelta)):
            if self._last is not None and self._last is not type(event):
                self._newline()
            self._last = type(event)
        if isinstance(event, TextDelta):
            c.print(Text(event.text), end="")
            self._streamed = self._mid_line = True
        elif isinstance(event, ReasoningDelta):
            c.print(Text(event.text, style="dim italic"), end="")
            self._mid_line = True
        elif isinstance(event, TurnDone):
            if not self._streamed and event.turn.text:
                self._newline()
                c.print(Text(event.turn.text))
            self._newline()
            self._streamed = False
            self._last = None
        elif isinstance(event, ToolStart):
            self._newline()
            indent = "  " * event.depth
            c.print(Text(f"{indent}→ {event.call.name} ", style="cyan") + Text(_short(event.call.arguments), "dim"))
        elif isinstance(event, ToolOutput):
            text = event.text.rstrip("\n")
            if text:
                c.print(Text(f"  │ {event.name} [{event.channel}] ", style="dim") + Text(_short(text, 200), "dim"))
        elif isinstance(event, ToolDone):
            r = event.result
            if r.is_error:
                c.print(Text(f"✗ {r.name}: ", style="red") + Text(_short(r.output, 200)))
            else:
                c.print(Text(f"✓ {r.name} ", style="green") + Text(f"({len(r.output)} chars)", style="dim"))
        elif isinstance(event, Retrying):
            self._newline()
            what = f"HTTP {event.status}" if event.status else "connection error"
            c.print(Text(f"model endpoint: {what}; retry {event.attempt} in {event.wait_seconds:.1f}s", "yellow"))

    def usage(self, usage: Usage, turns: int) -> None:
        self._newline()
        extra = f", reasoning {usage.reasoning_tokens}" if usage.reasoning_tokens else ""
        self.console.print(
            Text(
                f"tokens: input {usage.input_tokens}, output {usage.output_tokens}{extra} "
                f"(total {usage.total_tokens}) over {turns} model call{'s' if turns != 1 else ''}",
                style="dim",
            )
        )
