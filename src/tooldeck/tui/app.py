"""The chat screen: the transcript, the approval panel, the input box, the status line.

The screen owns no conversation logic. A backend (:class:`~tooldeck.tui.local.LocalChat`
or :class:`~tooldeck.tui.remote.RemoteChat`) runs the conversation on the
engine thread and reports through a queue; :meth:`ChatApp._drain` empties the
queue 30 times a second on the UI loop, applies the events to the timeline
(coalescing streamed text into one redraw per tick) and lets the view render
only what is on screen. Keys: Enter sends, Esc or Ctrl-C cancels the running
turn (Ctrl-C with nothing running quits), Ctrl-Q quits, Ctrl-O expands or
collapses every tool result, PageUp/PageDown/Ctrl-End scroll.
"""

from __future__ import annotations

import gc
import queue
import time
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Any, Protocol

from textual.app import App, ComposeResult
from textual.binding import Binding

from tooldeck.tui.ask import AskPanel
from tooldeck.tui.composer import Composer
from tooldeck.tui.events import (
    Added,
    Ask,
    Busy,
    Event,
    Failed,
    Notice,
    Opened,
    Reloaded,
    Settled,
    Stream,
    Tokens,
    ToolState,
)
from tooldeck.tui.status import StatusLine
from tooldeck.tui.view import ChatView

if TYPE_CHECKING:
    from tooldeck.tui.timeline import Timeline

DRAIN_EVERY = 1 / 30
MAX_EVENTS_PER_TICK = 2000
FULL_GC_NEVER = 10**9  # gen-2 threshold: no automatic full collection...
FULL_GC_EVERY = 60.0  # ...but one a minute at most, when nothing runs
IDLE_AFTER = 3.0  # seconds without typing
IDLE_CHECK = 5.0


class Backend(Protocol):
    def open(self) -> None: ...
    def send(self, text: str) -> None: ...
    def cancel(self) -> None: ...
    def close(self) -> None: ...


def coalesce(events: list[Event]) -> list[Event]:
    """Consecutive streamed deltas of one kind as one (a tick may hold hundreds)."""
    out: list[Event] = []
    for e in events:
        last = out[-1] if out else None
        if isinstance(e, Stream) and isinstance(last, Stream) and last.kind == e.kind:
            out[-1] = e if e.replace else Stream(e.kind, last.text + e.text, last.replace)
        else:
            out.append(e)
    return out


class ChatApp(App[int]):
    TITLE = "tooldeck chat"
    CSS = """
    Screen { layout: vertical; }
    """
    BINDINGS = [
        Binding("escape", "cancel_turn", "cancel the turn", show=False),
        Binding("ctrl+c", "interrupt", "cancel / quit", show=False, priority=True),
        Binding("ctrl+q", "quit_chat", "quit", show=False, priority=True),
        Binding("ctrl+o", "toggle_results", "expand results", show=False, priority=True),
        Binding("pageup", "page('up')", show=False, priority=True),
        Binding("pagedown", "page('down')", show=False, priority=True),
        Binding("ctrl+end", "page('end')", show=False, priority=True),
    ]

    def __init__(self, make_backend: Callable[[Callable[[Event], None]], Backend], file_label: str) -> None:
        super().__init__()
        self.inbox: queue.SimpleQueue[Event] = queue.SimpleQueue()
        self._make_backend = make_backend
        self.backend: Backend | None = None
        self.file_label = file_label
        self.busy = False
        self.opened: Opened | None = None
        self.failed: str | None = None
        self._expanded = False
        self._last_input = self._last_collect = time.monotonic()

    def compose(self) -> ComposeResult:
        yield ChatView(id="view")
        yield AskPanel(id="ask")
        yield Composer(id="composer")
        yield StatusLine(id="status")

    def on_mount(self) -> None:
        self.chat_view = self.query_one(ChatView)
        self.status_line = self.query_one(StatusLine)
        self.composer = self.query_one(Composer)
        self.ask_panel = self.query_one(AskPanel)
        self.status_line.file = self.file_label
        self.status_line.redraw()
        self.composer.focus()
        self.set_interval(DRAIN_EVERY, self._drain)
        gc.freeze()  # Textual and the screen: long-lived (see _opened)
        # A full collection walks every object not frozen (rendered lines, items): tens of ms the
        # screen cannot draw or take a key. It runs when the person is idle instead (_collect_idle).
        self._gc_threshold = gc.get_threshold()
        gc.set_threshold(self._gc_threshold[0], self._gc_threshold[1], FULL_GC_NEVER)
        self.set_interval(IDLE_CHECK, self._collect_idle)
        self.call_after_refresh(self._start_backend)  # the first frame is drawn before any engine work

    def _start_backend(self) -> None:
        from tooldeck.tui.timeline import Timeline  # lazy: the conversation's types load after the first frame

        self.timeline: Timeline = Timeline(self.chat_view)
        self.backend = self._make_backend(self.inbox.put)
        self.backend.open()

    # events from the engine ------------------------------------------------------------
    def _drain(self) -> None:
        if self.backend is None:
            return
        batch: list[Event] = []
        while len(batch) < MAX_EVENTS_PER_TICK:
            try:
                batch.append(self.inbox.get_nowait())
            except queue.Empty:
                break
        for event in coalesce(batch):
            self._apply(event)
        got = len(batch)
        if self.ask_panel.queue:
            self.ask_panel.prune()
        if got:
            self.chat_view.sync()

    def _apply(self, event: Event) -> None:
        tl = self.timeline
        if isinstance(event, Stream):
            tl.stream(event.kind, event.text, event.replace)
        elif isinstance(event, Added):
            tl.add(event.item)
            self._remember(event.item)
        elif isinstance(event, ToolState):
            tl.tool(event.call_id, event.state, event.text, event.is_error)
        elif isinstance(event, Tokens):
            self.status_line.add_usage(event.usage, event.known)
        elif isinstance(event, Busy):
            self._busy(event)
        elif isinstance(event, Ask):
            self.ask_panel.push(event)
        elif isinstance(event, Notice):
            tl.notice(event.text, event.level)
        elif isinstance(event, Opened):
            self._opened(event)
        elif isinstance(event, Reloaded):
            tl.load(event.items)
            for item in event.items:
                self._remember(item)
        elif isinstance(event, Settled):
            gc.freeze()  # see _opened
        elif isinstance(event, Failed):
            self.failed = event.message
            self.status_line.state = "error"
            self.status_line.redraw()
            tl.notice(event.message, "error")

    def _opened(self, event: Opened) -> None:
        self.opened = event
        self.timeline.load(event.items)
        for item in event.items:
            self._remember(item)
        self.status_line.model = event.model
        self.status_line.roots = event.roots
        self.status_line.where = event.where if event.where != "local" else ""
        self.status_line.file = _label(event.path) + ("" if event.exists else " (new: created when you send)")
        self.status_line.state = "ready"
        self.status_line.redraw()
        for text in event.notices:
            self.timeline.notice(text, "warning")
        # lazy: as Timeline: a module-level import would load it before the first frame
        from tooldeck.tui.timeline import awaiting_answer

        if awaiting_answer(event.items):
            self.timeline.notice("the conversation has no answer yet: press Enter on the empty box to ask for one")
        # What exists now (the screen, the engine's modules, the conversation) lives as long as the
        # app: out of the collector's sight, a full collection no longer walks it (it took ~200 ms
        # with a 1,000-message conversation open: a frozen screen, bench/chat_stall.py)
        gc.freeze()

    def _remember(self, item: Any) -> None:
        from tooldeck.llm.types import Message  # lazy: the model loop's types load after the first frame

        if isinstance(item, Message) and item.role == "user":
            self.composer.remember(item.text)

    def _busy(self, event: Busy) -> None:
        self.busy = event.busy
        self.status_line.state = {"running": "running", "waiting": "waiting for you", "answer": "ready",
                             "cancelled": "cancelled", "error": "error"}.get(event.outcome, event.outcome)  # fmt: skip
        self.status_line.turn(event.busy)
        if not event.busy:
            note = "(cancelled: not in the file)" if event.outcome == "cancelled" else ""
            if event.outcome == "error":
                note = "(interrupted: not in the file)"
            self.timeline.end_turn(note)
            if event.message:
                self.timeline.notice(event.message, "error" if event.outcome == "error" else "info")

    def _collect_idle(self) -> None:
        now = time.monotonic()
        if self.busy or now - self._last_input < IDLE_AFTER or now - self._last_collect < FULL_GC_EVERY:
            return
        gc.collect()
        self._last_collect = now

    # the person -------------------------------------------------------------------------
    def on_text_area_changed(self) -> None:
        self._last_input = time.monotonic()

    def on_composer_submitted(self, message: Composer.Submitted) -> None:
        if self.backend is None or self.opened is None:
            self.timeline.notice(self.failed or "still opening the conversation…", "warning")
            self.chat_view.sync()
            return
        self.chat_view.scroll_to_end()
        self.backend.send(message.text)

    def action_cancel_turn(self) -> None:
        if self.busy and self.backend is not None:
            self.backend.cancel()

    def action_interrupt(self) -> None:
        if self.busy:
            self.action_cancel_turn()
        else:
            self.action_quit_chat()

    def action_quit_chat(self) -> None:
        self.exit(0)

    def action_toggle_results(self) -> None:
        self._expanded = not self._expanded
        self.chat_view.expand_all(self._expanded)

    def action_page(self, where: str) -> None:
        if where == "end":
            self.chat_view.scroll_to_end()
        elif where == "up":
            self.chat_view.scroll_page_up(animate=False)
        else:
            self.chat_view.scroll_page_down(animate=False)

    def on_unmount(self) -> None:
        if self.backend is not None:
            self.backend.close()
        gc.set_threshold(*self._gc_threshold)  # the process may go on (tests, an embedding program)
        gc.unfreeze()


def _label(path: Path) -> str:
    """The file as the person would type it: relative to here when it is below here."""
    try:
        return str(path.relative_to(Path.cwd()))
    except ValueError:
        return str(path)


def run_app(make_backend: Callable[[Callable[[Event], None]], Backend], file: Path | str) -> int:
    return ChatApp(make_backend, str(file)).run() or 0
