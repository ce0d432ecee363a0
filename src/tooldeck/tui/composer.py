"""The input box: multi-line, Enter sends, history on Up/Down.

Enter sends (a person types a message more often than a newline); Enter
on an empty box asks for an answer to the file as it stands (a file that
ends with a ``<user>`` message written elsewhere, as ``tooldeck run`` does);
Ctrl-J, Alt-Enter or Shift-Enter (where the terminal tells it apart) start a
new line, and a paste keeps its newlines. Up on the first line and Down on
the last walk through the messages already sent (this file's and this
session's), as a shell does; what was being typed comes back at the end.
"""

from __future__ import annotations

from textual import events
from textual.message import Message
from textual.widgets import TextArea

NEWLINE_KEYS = ("ctrl+j", "shift+enter", "alt+enter")


class Composer(TextArea):
    DEFAULT_CSS = """
    Composer { height: auto; min-height: 3; max-height: 12; border: round $accent; padding: 0 1; }
    Composer:focus { border: round $accent-lighten-2; }
    """

    class Submitted(Message):
        def __init__(self, text: str) -> None:
            super().__init__()
            self.text = text

    def __init__(self, **kwargs: object) -> None:
        super().__init__(
            soft_wrap=True, tab_behavior="focus", highlight_cursor_line=False,
            placeholder="Message · Enter sends · Ctrl-J new line · Esc cancels the turn · Ctrl-Q quits",
            **kwargs,  # type: ignore[arg-type]
        )  # fmt: skip
        self.sent: list[str] = []
        self._at: int | None = None  # index into history while walking it
        self._draft = ""

    def remember(self, text: str) -> None:
        if text.strip() and (not self.sent or self.sent[-1] != text):
            self.sent.append(text)

    async def _on_key(self, event: events.Key) -> None:
        if event.key == "enter":
            event.stop()
            event.prevent_default()
            text = self.text
            if text.strip():
                self.remember(text)
                self._at = None
                self.clear()
            self.post_message(self.Submitted(text if text.strip() else ""))  # empty: run what the file holds
            return
        if event.key in NEWLINE_KEYS:
            event.stop()
            event.prevent_default()
            self.insert("\n")
            return
        await super()._on_key(event)

    def action_cursor_up(self, select: bool = False) -> None:
        if not select and self.cursor_location[0] == 0 and self.sent:
            if self._at is None:
                self._draft, self._at = self.text, len(self.sent)
            if self._at > 0:
                self._at -= 1
                self._show(self.sent[self._at])
            return
        super().action_cursor_up(select)

    def action_cursor_down(self, select: bool = False) -> None:
        last = self.document.line_count - 1
        if not select and self._at is not None and self.cursor_location[0] == last:
            self._at += 1
            if self._at >= len(self.sent):
                self._at = None
                self._show(self._draft)
            else:
                self._show(self.sent[self._at])
            return
        super().action_cursor_down(select)

    def _show(self, text: str) -> None:
        self.load_text(text)
        self.move_cursor(self.document.end)
