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
    """``console`` shows the conversation; ``err`` (stderr by default) what
    went wrong on the way, such as the model endpoint's retries."""

    def __init__(self, console: Console | None = None, err: Console | None = None) -> None:
        self.console = console or Console(highlight=False)
        self.err = err or Console(stderr=True, highlight=False, soft_wrap=True)
        self._streamed = False  # text of the current turn already printed by deltas
        self._mid_line = False
        self._last: type | None = None  # the kind of the last streamed delta
        self._partial: dict[tuple[str, str], str] = {}  # (call id, channel) -> text before its newline

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
            key = (event.call_id, event.channel)
            *lines, rest = (self._partial.pop(key, "") + event.text).split("\n")
            if rest:
                self._partial[key] = rest
            for line in lines:
                self._tool_line(event.name, event.channel, line)
        elif isinstance(event, ToolDone):
            r = event.result
            for key in [k for k in self._partial if k[0] == r.call_id]:
                self._tool_line(r.name, key[1], self._partial.pop(key))
            if r.is_error:
                c.print(Text(f"✗ {r.name}: ", style="red") + Text(_short(r.output, 200)))
            else:
                c.print(Text(f"✓ {r.name} ", style="green") + Text(f"({len(r.output)} chars)", style="dim"))
        elif isinstance(event, Retrying):
            self._newline()
            what = event.reason or (f"HTTP {event.status}" if event.status else "connection error")
            line = f"model endpoint: {what}; retry {event.attempt} in {event.wait_seconds:.1f}s"
            self.err.print(Text(line, "yellow"))

    def _tool_line(self, name: str, channel: str, line: str) -> None:
        """One line of a running tool's progress (streamed chunks are joined into lines)."""
        if line.strip():
            self._newline()
            self.console.print(Text(f"  │ {name} [{channel}] ", style="dim") + Text(_short(line, 200), "dim"))

    def usage(self, usage: Usage, turns: int) -> None:
        self._newline()
        calls = f"{turns} model call{'s' if turns != 1 else ''}"
        self.console.print(Text(f"tokens: {usage.summary()} over {calls}", style="dim"))
