"""What each part of a conversation looks like: a Rich renderable per block.

A block is one thing the person reads: a message, a reasoning summary, the
tool calls of one model turn (side by side when they ran in parallel), a
notice. Blocks know nothing of Textual; the view (:mod:`tooldeck.tui.view`)
renders them to lines at its width, caches the lines, and renders only the
blocks on screen. Each change bumps ``version`` so the view knows to redraw.
"""

from __future__ import annotations

import itertools
import json
from dataclasses import dataclass, field
from typing import Literal

from rich import box
from rich.console import Group, RenderableType
from rich.padding import Padding
from rich.panel import Panel
from rich.table import Table
from rich.text import Text

_keys = itertools.count(1)
CODE_THEME = "monokai"
COLLAPSED_LINES = 3
EXPANDED_LINES = 60
COLUMNS = 3  # calls side by side per row


WARM_LANGUAGES = ("python", "json", "bash", "javascript", "typescript", "diff", "toml", "yaml", "rust", "go")


def warm_up() -> None:
    """Import and compile what rendering needs, off the UI thread, before the first
    message is drawn: markdown, and the highlighters of common languages (each
    lexer's first use imports its module and compiles its rules: 10-30 ms)."""
    from rich.console import Console

    sample = "\n\n".join(f"```{lang}\nx = 1\n```" for lang in WARM_LANGUAGES)
    from rich.markdown import Markdown

    console = Console(width=80, file=_Null(), color_system="truecolor", force_terminal=True)
    console.print(Markdown("# t\n\n- a `b` **c**\n\n" + sample, code_theme=CODE_THEME))


class _Null:
    def write(self, _: str) -> int:
        return 0

    def flush(self) -> None:
        return None


def chunks(text: str, lines: int = 24) -> list[str]:
    """Markdown cut into pieces of about ``lines`` lines, each of which renders alone.

    Why: a block is the unit the view renders and caches. A long reply as one
    block would be re-rendered whole (markdown, every code block highlighted)
    for each streamed delta, and drawn whole to show a screenful. A cut is made
    only before a line that starts a new top-level block (not indented, not
    blank, outside a code fence, after a blank line), so every piece is valid
    markdown, and a cut never moves as more text streams in."""
    out: list[str] = []
    cur: list[str] = []
    fence: str | None = None
    blank_before = False
    for line in text.split("\n"):
        stripped = line.strip()
        starts = stripped and not line[:1].isspace()
        if fence is None and starts and blank_before and len(cur) >= lines:
            out.append("\n".join(cur).strip("\n"))
            cur = []
        cur.append(line)
        if stripped.startswith(("```", "~~~")):
            fence = stripped[:3] if fence is None else (None if stripped.startswith(fence) else fence)
        blank_before = not stripped
    out.append("\n".join(cur).strip("\n"))
    return [c for c in out if c] or [""]


def _lines(text: str, limit: int) -> tuple[str, int]:
    lines = text.splitlines()
    return "\n".join(lines[:limit]), max(0, len(lines) - limit)


def _wrapped(text: str, width: int) -> int:
    """Lines ``text`` takes at ``width`` (an estimate: markdown may differ)."""
    width = max(10, width)
    return sum(max(1, -(-len(line) // width)) for line in text.splitlines() or [""])


@dataclass(eq=False)
class Block:
    key: int = field(default_factory=lambda: next(_keys), init=False)
    version: int = field(default=0, init=False)
    expanded: bool = field(default=False, init=False)

    def touch(self) -> None:
        self.version += 1

    def toggle(self) -> None:
        self.expanded = not self.expanded
        self.touch()

    def renderable(self) -> RenderableType:
        raise NotImplementedError

    def estimate(self, width: int) -> int:
        return 3


def _head(label: str, style: str, extra: str = "") -> Text:
    t = Text("▍", style=style) + Text(f" {label}", style=f"bold {style}")
    if extra:
        t += Text(f"  {extra}", style="dim")
    return t


@dataclass(eq=False)
class MessageBlock(Block):
    """A user, assistant, system or developer message; the assistant's is markdown."""

    role: str = "user"
    text: str = ""
    streaming: bool = False
    note: str = ""
    first: bool = True  # a long assistant message is several blocks (see chunks): one header
    last: bool = True

    STYLES = {"user": "cyan", "assistant": "green", "system": "magenta", "developer": "magenta"}

    def renderable(self) -> RenderableType:
        style = self.STYLES.get(self.role, "white")
        extra = ("streaming…" if self.streaming else "") + (f" {self.note}" if self.note else "")
        body: RenderableType
        if self.role == "assistant":
            from rich.markdown import Markdown  # ~30 ms to import: the engine thread warms it (warm_up)

            body = Markdown(self.text or " ", code_theme=CODE_THEME, hyperlinks=False)
        elif self.role in ("system", "developer") and not self.expanded:
            shown, more = _lines(self.text, COLLAPSED_LINES)
            body = Text(shown, style="dim") + (Text(f"\n… {more} more lines (click to expand)", "dim") if more else "")
        else:
            body = Text(self.text)
        padded = Padding(body, (0, 0, 1 if self.last else 0, 2))
        return Group(_head(self.role, style, extra.strip()), padded) if self.first else padded

    def estimate(self, width: int) -> int:
        text = self.text if self.role in ("user", "assistant") or self.expanded else _lines(self.text, 4)[0]
        return int(self.first) + int(self.last) + _wrapped(text, width - 2)


@dataclass(eq=False)
class ReasoningBlock(Block):
    text: str = ""
    streaming: bool = False

    def renderable(self) -> RenderableType:
        shown, more = (self.text, 0) if self.expanded else _lines(self.text, 6)
        body = Text(shown, style="dim italic")
        if more:
            body += Text(f"\n… {more} more lines (click to expand)", style="dim")
        return Group(_head("reasoning", "bright_black", "thinking…" if self.streaming else ""),
                     Padding(body, (0, 0, 1, 2)))  # fmt: skip

    def estimate(self, width: int) -> int:
        return 2 + _wrapped(self.text if self.expanded else _lines(self.text, 7)[0], width - 2)


def _scalar(v: object) -> bool:
    return isinstance(v, str | int | float | bool) or v is None


def pretty_arguments(raw: str) -> str:
    """A call's arguments as ``key: value`` lines when they are flat (a list of plain values
    on one line), else indented JSON; raw text (a custom tool's input) as it is."""
    try:
        value = json.loads(raw)
    except (ValueError, TypeError):
        return raw
    flat = isinstance(value, dict) and all(
        _scalar(v) or (isinstance(v, list) and all(_scalar(x) for x in v)) for v in value.values()
    )
    if flat:
        return "\n".join(f"{k}: {v if isinstance(v, str) else json.dumps(v, ensure_ascii=False)}"
                         for k, v in value.items())  # fmt: skip
    return json.dumps(value, ensure_ascii=False, indent=1)


@dataclass(eq=False)
class Call:
    call_id: str
    name: str
    arguments: str
    state: Literal["pending", "running", "done", "error", "interrupted"] = "pending"
    progress: str = ""
    result: str = ""

    def panel(self, expanded: bool) -> Panel:
        limit = EXPANDED_LINES if expanded else COLLAPSED_LINES
        args, more = _lines(pretty_arguments(self.arguments), limit)
        parts: list[RenderableType] = [Text(args, style="dim") + (Text(f"\n… {more} more", "dim") if more else "")]
        border, mark = {"pending": ("yellow", "…"), "running": ("yellow", "⠿"), "done": ("green", "✓"),
                        "error": ("red", "✗"), "interrupted": ("red", "✗")}[self.state]  # fmt: skip
        if self.state in ("pending", "running"):
            last = self.progress.rstrip().splitlines()[-1:] if self.progress.strip() else []
            parts.append(Text(f"{mark} running" + (f": {last[0][:200]}" if last else ""), style="yellow"))
        else:
            shown, more = _lines(self.result, limit)
            size = f"{len(self.result):,} chars"
            if self.state == "done" and not expanded:
                first = shown.splitlines()[0][:200] if shown else ""
                parts.append(Text(f"{mark} {size}", style="green") + Text(f"  {first}", style="dim"))
            else:
                style = "green" if self.state == "done" else "red"
                parts.append(Text(f"{mark} {size}", style=style))
                parts.append(Text(shown, style="red" if self.state != "done" else ""))
                if more:
                    parts.append(Text(f"… {more} more lines", style="dim"))
        title = Text(self.name, style=f"bold {border}")
        return Panel(Group(*parts), title=title, title_align="left", border_style=border, box=box.ROUNDED)


@dataclass(eq=False)
class ToolsBlock(Block):
    """The tool calls of one model turn, side by side (click: results in full)."""

    calls: list[Call] = field(default_factory=list)

    def find(self, call_id: str) -> Call | None:
        return next((c for c in self.calls if c.call_id == call_id), None)

    def renderable(self) -> RenderableType:
        rows: list[RenderableType] = []
        for i in range(0, len(self.calls), COLUMNS):
            chunk = self.calls[i : i + COLUMNS]
            grid = Table.grid(expand=True, padding=(0, 1))
            for _ in chunk:
                grid.add_column(ratio=1)
            grid.add_row(*(c.panel(self.expanded) for c in chunk))
            rows.append(grid)
        hint = "" if self.expanded else "click for full results"
        label = "tool call" if len(self.calls) == 1 else f"{len(self.calls)} tool calls"
        return Group(_head(label, "yellow", hint), Padding(Group(*rows), (0, 0, 1, 2)))

    def estimate(self, width: int) -> int:
        per_row = (COLLAPSED_LINES + 3) if not self.expanded else EXPANDED_LINES
        return 2 + per_row * (-(-len(self.calls) // COLUMNS))


@dataclass(eq=False)
class NoticeBlock(Block):
    text: str = ""
    level: str = "info"

    def renderable(self) -> RenderableType:
        style = {"info": "dim", "warning": "yellow", "error": "bold red"}.get(self.level, "dim")
        return Padding(Text(self.text, style=style), (0, 0, 1, 0))

    def estimate(self, width: int) -> int:
        return 1 + _wrapped(self.text, width)
