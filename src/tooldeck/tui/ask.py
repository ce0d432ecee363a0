"""Approvals and questions, answered inline above the input box.

One panel, one question at a time (parallel calls that each ask wait their
turn, in order). An approval (a shell command the policy asks about, an
agent session's approval) takes ``a`` accept once, ``s`` accept for the
session, ``d`` decline; a reason typed in the box goes with a decline and
the model reads it. A question (``ask_user``) takes the typed answer, one of
the offered options, or Skip. A question withdrawn by the engine (the turn
was cancelled) leaves the panel by itself.
"""

from __future__ import annotations

from typing import Any

from rich.text import Text
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Horizontal, Vertical
from textual.widgets import Button, Input, Static

from tooldeck.tui.events import Ask

APPROVALS = ("shell", "approval")


class AskPanel(Vertical):
    DEFAULT_CSS = """
    AskPanel { height: auto; max-height: 60%; display: none; border: heavy $warning; padding: 0 1; }
    AskPanel.-open { display: block; }
    AskPanel #ask-body { max-height: 16; overflow-y: auto; }
    AskPanel Horizontal { height: auto; }
    AskPanel Button { margin-right: 1; min-width: 10; }
    """
    BINDINGS = [
        Binding("a", "answer('accept')", "accept", show=False),
        Binding("s", "answer('accept_for_session')", "accept for session", show=False),
        Binding("d", "decline", "decline", show=False),
    ]

    def __init__(self, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self.queue: list[Ask] = []
        self._built = False
        self._shown: Ask | None = None

    def _parts(self) -> ComposeResult:
        """Built at the first question, not at start-up: the first frame must not wait for it."""
        yield Static(id="ask-title")
        yield Static(id="ask-body")
        yield Horizontal(
            Button("Accept (a)", id="accept", variant="success"),
            Button("Accept for session (s)", id="accept_for_session", variant="primary"),
            Button("Decline (d)", id="decline", variant="error"),
            Button("Skip", id="skip"),
            id="ask-buttons",
        )
        yield Horizontal(id="ask-options")
        yield Input(id="ask-text")

    @property
    def current(self) -> Ask | None:
        """The question first in line (it may not be on screen yet: see ``shown``)."""
        return self.queue[0] if self.queue else None

    @property
    def shown(self) -> Ask | None:
        """The question on screen, waiting for the person's keys."""
        return self._shown if self.has_class("-open") else None

    def push(self, ask: Ask) -> None:
        self.queue.append(ask)
        self.app.run_worker(self._update(), group="ask")

    async def _update(self) -> None:
        if not self._built:
            self._built = True
            await self.mount_all(self._parts())
        if self.current is not self._shown:
            self._show()

    def prune(self) -> None:
        """Drop questions the engine withdrew (a cancelled turn)."""
        self.queue = [a for a in self.queue if not a.answer.done()]
        if self._built and self.current is not self._shown:
            self._show()

    def _show(self) -> None:
        ask = self._shown = self.current
        if ask is None:
            self.remove_class("-open")
            self.app.set_focus(self.app.query_one("Composer"))
            return
        approval = ask.kind in APPROVALS
        self.query_one("#ask-title", Static).update(Text(ask.title, style="bold yellow"))
        self.query_one("#ask-body", Static).update(Text(ask.body))
        for bid in ("accept", "accept_for_session", "decline"):
            self.query_one(f"#{bid}", Button).display = approval
        self.query_one("#skip", Button).display = not approval
        options = self.query_one("#ask-options", Horizontal)
        options.remove_children()
        if not approval:
            options.mount_all(Button(o[:40], name=o, classes="option") for o in ask.options)
        box = self.query_one("#ask-text", Input)
        box.value = ""
        box.placeholder = ("optional reason for declining · Enter declines" if approval
                           else "your answer · Enter sends")  # fmt: skip
        self.add_class("-open")
        self.app.set_focus(self.query_one("#accept", Button) if approval else box)

    def _resolve(self, answer: dict[str, Any]) -> None:
        ask = self.current
        if ask is None:
            return
        if not ask.answer.done():
            ask.answer.set_result(answer)
        self.queue.pop(0)
        self._show()

    def action_answer(self, response: str) -> None:
        if self.current is not None and self.current.kind in APPROVALS:
            self._resolve({"response": response})

    def action_decline(self) -> None:
        if self.current is not None and self.current.kind in APPROVALS:
            reason = self.query_one("#ask-text", Input).value.strip()
            self._resolve({"response": "decline", "reason": reason or None})

    def on_button_pressed(self, event: Button.Pressed) -> None:
        event.stop()
        bid = event.button.id or ""
        if bid in ("accept", "accept_for_session"):
            self.action_answer(bid)
        elif bid == "decline":
            self.action_decline()
        elif bid == "skip":
            self._resolve({"skip": True})
        elif event.button.name:
            self._resolve({"response": event.button.name})

    def on_input_submitted(self, event: Input.Submitted) -> None:
        event.stop()
        if self.current is None:
            return
        if self.current.kind in APPROVALS:
            self.action_decline()
        elif event.value.strip():
            self._resolve({"response": event.value})
