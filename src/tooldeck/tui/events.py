"""What a backend (local or connected) tells the screen, through one queue.

Why a queue of small values and not calls into widgets: the backend runs on
its own thread (the model loop, tools, the transcript writes), and Textual's
widgets belong to the UI loop. The screen drains the queue a few dozen times a
second and coalesces what it finds (a burst of text deltas is one redraw).
"""

from __future__ import annotations

import concurrent.futures
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal

if TYPE_CHECKING:  # annotations only: the screen imports this before its first frame
    from tooldeck.llm.types import Item, Usage


@dataclass(frozen=True, slots=True)
class Opened:
    """The conversation is loaded: what the status line and the view need."""

    path: Path
    exists: bool  # False: a new conversation, created at the first message
    model: str
    roots: tuple[str, ...]
    items: tuple[Item, ...]
    where: str = "local"  # "local", or the server's URL and workspace
    notices: tuple[str, ...] = ()


@dataclass(frozen=True, slots=True)
class Failed:
    """The conversation cannot be opened or run (a file or configuration error)."""

    message: str


@dataclass(frozen=True, slots=True)
class Added:
    """An item is now in the file (or the server's transcript): show it for good."""

    item: Item


@dataclass(frozen=True, slots=True)
class Reloaded:
    """The file changed outside the chat: these are its items now."""

    items: tuple[Item, ...]


@dataclass(frozen=True, slots=True)
class Stream:
    """Live text of the turn being generated: appended, or (``replace``) the whole."""

    kind: Literal["text", "reasoning"]
    text: str
    replace: bool = False


@dataclass(frozen=True, slots=True)
class ToolState:
    """A tool call started, printed progress, or returned (``done``: ``text`` is
    its result). Its result item follows with the turn's other results."""

    call_id: str
    name: str
    state: Literal["running", "progress", "done"]
    text: str = ""
    is_error: bool = False


@dataclass(frozen=True, slots=True)
class Tokens:
    usage: Usage
    known: bool  # False when the endpoint sent no usage


@dataclass(frozen=True, slots=True)
class Busy:
    """A turn started (``busy``) or ended, how, and what to tell the person."""

    busy: bool
    outcome: Literal["running", "answer", "cancelled", "error", "waiting"] = "running"
    message: str = ""


@dataclass(frozen=True, slots=True)
class Settled:
    """The engine finished its start-up (imports, the model client): what exists now lives long."""


@dataclass(frozen=True, slots=True)
class Notice:
    text: str
    level: Literal["info", "warning", "error"] = "info"


@dataclass
class Ask:
    """A question for the person; ``answer`` is resolved by the screen.

    ``kind``: ``shell`` (a shell command the policy asks about), ``approval``
    (an agent session's approval), ``question`` / ``user_input`` (ask_user).
    The answer is a dict: ``{"response": "accept" | "accept_for_session" |
    "decline", "reason": ...}`` or ``{"response": TEXT}`` / ``{"skip": True}``."""

    kind: Literal["shell", "approval", "question", "user_input"]
    title: str
    body: str
    options: tuple[str, ...] = ()
    answer: concurrent.futures.Future[dict[str, Any]] = field(default_factory=concurrent.futures.Future)


Event = Opened | Failed | Added | Reloaded | Stream | ToolState | Tokens | Busy | Notice | Ask | Settled
