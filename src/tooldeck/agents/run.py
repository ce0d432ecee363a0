"""One agent run: the live state behind a session's control snapshot.

A Run lives on the session manager's event loop. Its fields are what
``agent_run`` reports (status, status_text, partial assistant text, the
pending interaction); ``inject`` and ``cancel_soon`` may be called from any
thread and hop onto the loop. Every state change calls ``notify`` so waiters
(``op=wait``, the dashboard's event stream) wake at once.
"""

from __future__ import annotations

import asyncio
import threading
import uuid
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any, Literal

from tooldeck.llm.types import Item, Message, Usage

Kind = Literal["approval", "question", "user_input"]
APPROVAL_RESPONSES = ("accept", "accept_for_session", "accept_with_amendment", "decline", "cancel")


@dataclass
class Interaction:
    kind: Kind
    prompt: str
    details: dict[str, Any] = field(default_factory=dict)
    id: str = field(default_factory=lambda: uuid.uuid4().hex[:12])
    future: asyncio.Future[dict[str, Any]] | None = None

    def to_dict(self) -> dict[str, Any]:
        out: dict[str, Any] = {"id": self.id, "kind": self.kind, "prompt": self.prompt}
        if self.kind == "approval":
            out["responses"] = list(APPROVAL_RESPONSES)
        if self.details:
            out["details"] = self.details
        return out


TERMINAL = ("completed", "failed", "cancelled")


@dataclass
class Run:
    session_id: str
    number: int
    policy: str
    loop: asyncio.AbstractEventLoop
    notify: Callable[[Run], None]
    status: str = "running"
    status_text: str = "queued"
    assistant_text: str = ""
    failure_reason: str | None = None
    interaction: Interaction | None = None
    approved_all: bool = False
    task: asyncio.Task[None] | None = None
    item_count: int = 0
    version: int = 0
    live_text: str = ""  # the model turn being streamed (reset when the turn ends)
    live_reasoning: str = ""
    usage: Usage = field(default_factory=Usage)  # the endpoint's counts over this run
    usage_known: bool = False  # False while the endpoint has sent no usage
    _inbox: list[Item] = field(default_factory=list)
    _lock: threading.Lock = field(default_factory=threading.Lock)

    @property
    def active(self) -> bool:
        return self.status not in TERMINAL

    def set(self, **fields: Any) -> None:
        for k, v in fields.items():
            setattr(self, k, v)
        self.version += 1
        self.notify(self)

    # steering -----------------------------------------------------------------
    def inject(self, text: str) -> None:
        with self._lock:
            self._inbox.append(Message("user", text))
        self.set(status_text="steered: the instruction joins the conversation at the next model turn")

    def drain(self) -> list[Item]:
        with self._lock:
            got, self._inbox = self._inbox, []
        return got

    # interactions -------------------------------------------------------------
    async def ask(self, interaction: Interaction) -> dict[str, Any]:
        """Publish ``interaction``, wait for ``respond``, return the answer."""
        interaction.future = self.loop.create_future()
        self.set(interaction=interaction, status="waiting_for_input", status_text=interaction.prompt[:200])
        try:
            return await interaction.future
        finally:
            self.set(interaction=None, status="running", status_text="running")

    def resolve(self, interaction_id: str, answer: dict[str, Any]) -> bool:
        """From any thread: answer the pending interaction if its id matches."""
        pending = self.interaction
        if pending is None or pending.id != interaction_id or pending.future is None:
            return False
        fut = pending.future

        def done() -> None:
            if not fut.done():
                fut.set_result(answer)

        self.loop.call_soon_threadsafe(done)
        return True

    def cancel_soon(self) -> None:
        task = self.task
        if task is not None:
            self.loop.call_soon_threadsafe(task.cancel)
