"""The status line: model, tokens, time, where the conversation lives.

Tokens are the endpoint's own counts summed over the session's model calls;
an endpoint that sends no usage shows "unknown" rather than a made-up zero.
The time is the running turn's (or the last one's), updated every second.
"""

from __future__ import annotations

import time
from typing import TYPE_CHECKING

from rich.text import Text
from textual.widgets import Static

if TYPE_CHECKING:
    from tooldeck.llm.types import Usage


class StatusLine(Static):
    DEFAULT_CSS = """
    StatusLine { height: 1; background: $panel; color: $text-muted; padding: 0 1; }
    """

    def __init__(self, **kwargs: object) -> None:
        super().__init__("starting…", **kwargs)  # type: ignore[arg-type]
        self.model = "…"
        self.where = ""
        self.roots: tuple[str, ...] = ()
        self.file = ""
        self.tokens_in = 0
        self.tokens_out = 0
        self.usage_known: bool | None = None  # None: no model call yet
        self.state = "loading"
        self._turn_start: float | None = None
        self._last_turn = 0.0

    def on_mount(self) -> None:
        self.set_interval(1.0, self._tick)

    def _tick(self) -> None:
        if self._turn_start is not None:
            self.redraw()

    def turn(self, running: bool) -> None:
        if running:
            self._turn_start = time.monotonic()
        elif self._turn_start is not None:
            self._last_turn = time.monotonic() - self._turn_start
            self._turn_start = None
        self.redraw()

    def add_usage(self, usage: Usage, known: bool) -> None:
        self.tokens_in += usage.input_tokens
        self.tokens_out += usage.output_tokens
        self.usage_known = bool(self.usage_known) or known
        self.redraw()

    def tokens_text(self) -> str:
        if not self.usage_known:
            return "tokens unknown" if self.usage_known is False else "tokens –"
        return f"tokens in {self.tokens_in:,} / out {self.tokens_out:,}"

    def redraw(self) -> None:
        elapsed = (time.monotonic() - self._turn_start) if self._turn_start is not None else self._last_turn
        parts = [
            (self.model, "bold"),
            (self.state, "yellow" if self.state not in ("ready", "idle") else "green"),
            (self.tokens_text(), ""),
            (f"{elapsed:.1f}s", ""),
            (self.file, ""),
            (self.where, "dim"),
            ("roots " + ", ".join(self.roots) if self.roots else "", "dim"),
        ]
        text = Text()
        for i, (part, style) in enumerate(p for p in parts if p[0]):
            if i:
                text.append(" · ", "dim")
            text.append(part, style)
        self.update(text)
