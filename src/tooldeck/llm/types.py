"""The conversation as the model loop sees it, independent of any file format.

Why our own small types and not the SDK's: two wire APIs (Chat Completions
and Responses) spell the same conversation differently, and the callers
(the ChatMD runner, chats, agent sessions) should not care which one a model
speaks. A conversation is a list of items; the provider translates.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Literal

Role = Literal["system", "developer", "user", "assistant"]


@dataclass(frozen=True, slots=True)
class ImageInput:
    data_uri: str
    detail: str = "auto"


@dataclass(frozen=True, slots=True)
class Message:
    """A message; ``images`` are only meaningful on user messages."""

    role: Role
    text: str
    images: tuple[ImageInput, ...] = ()


@dataclass(frozen=True, slots=True)
class Reasoning:
    """A reasoning summary the model produced (shown and kept, never sent back)."""

    text: str
    id: str | None = None


@dataclass(frozen=True, slots=True)
class FunctionCall:
    call_id: str
    name: str
    arguments: str  # the raw JSON (or raw text, for a custom tool) the model sent


@dataclass(frozen=True, slots=True)
class FunctionResult:
    """A tool's answer. ``images`` are the image parts of its output (a
    screenshot from ``import_image``): each wire API sends them to the model
    the way it can (see :mod:`tooldeck.llm.wire_chat`, :mod:`~tooldeck.llm.wire_responses`)."""

    call_id: str
    name: str
    output: str
    is_error: bool = False
    images: tuple[ImageInput, ...] = ()


Item = Message | Reasoning | FunctionCall | FunctionResult


@dataclass(slots=True)
class Usage:
    """Token usage of one model call, or of several added up.

    ``reported`` counts the model calls whose endpoint sent usage at all:
    many local servers send none, and zeros would read as "free". A host
    shows :meth:`summary`, which says "unknown" then (the terminal runner
    and the chat TUI both do)."""

    input_tokens: int = 0
    output_tokens: int = 0
    reasoning_tokens: int = 0
    reported: int = 0  # model calls that reported their usage
    calls: int = 0  # model calls added up here (0 for a single call's own usage)

    @property
    def total_tokens(self) -> int:
        return self.input_tokens + self.output_tokens

    @property
    def known(self) -> bool:
        """Whether any model call reported its usage (or counts were set by hand)."""
        return self.reported > 0 or self.total_tokens > 0

    def add(self, other: Usage) -> None:
        self.input_tokens += other.input_tokens
        self.output_tokens += other.output_tokens
        self.reasoning_tokens += other.reasoning_tokens
        self.reported += other.reported
        self.calls += max(other.calls, 1)

    def summary(self) -> str:
        """``input 11, output 7 (total 18)``; ``unknown (...)`` when no call
        reported usage; a partial sum says how many calls it leaves out."""
        if not self.known:
            return "unknown (the model endpoint reported no usage)"
        extra = f", reasoning {self.reasoning_tokens}" if self.reasoning_tokens else ""
        text = f"input {self.input_tokens}, output {self.output_tokens}{extra} (total {self.total_tokens})"
        missing = self.calls - self.reported
        if missing > 0:
            text += f"; {missing} of {self.calls} model calls reported no usage"
        return text


@dataclass(slots=True)
class Turn:
    """One model response: text, reasoning, the tool calls it asked for."""

    text: str = ""
    reasoning: Reasoning | None = None
    calls: list[FunctionCall] = field(default_factory=list)
    usage: Usage = field(default_factory=Usage)
    finish_reason: str | None = None


@dataclass(frozen=True, slots=True)
class RequestOptions:
    """What one conversation asks of the model (from ``<config>`` or a preset)."""

    model: str
    max_tokens: int | None = None
    temperature: float | None = None
    reasoning_effort: str | None = None
    parallel_tool_calls: bool = True


# live events ------------------------------------------------------------------
@dataclass(frozen=True, slots=True)
class TextDelta:
    text: str


@dataclass(frozen=True, slots=True)
class ReasoningDelta:
    text: str


@dataclass(frozen=True, slots=True)
class Retrying:
    """The provider waits before retrying (429, 5xx, a connection reset)."""

    status: int | None
    wait_seconds: float
    attempt: int
    reason: str = ""  # why, in a few words ("HTTP 429 rate limited", "connection reset")


@dataclass(frozen=True, slots=True)
class ToolStart:
    call: FunctionCall
    depth: int = 0


@dataclass(frozen=True, slots=True)
class ToolOutput:
    """A progress chunk a running tool emitted on ``channel``."""

    call_id: str
    name: str
    channel: str
    text: str


@dataclass(frozen=True, slots=True)
class ToolDone:
    result: FunctionResult


@dataclass(frozen=True, slots=True)
class TurnDone:
    turn: Turn


Event = TextDelta | ReasoningDelta | Retrying | ToolStart | ToolOutput | ToolDone | TurnDone
