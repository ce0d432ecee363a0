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
    call_id: str
    name: str
    output: str
    is_error: bool = False


Item = Message | Reasoning | FunctionCall | FunctionResult


@dataclass(slots=True)
class Usage:
    input_tokens: int = 0
    output_tokens: int = 0
    reasoning_tokens: int = 0

    @property
    def total_tokens(self) -> int:
        return self.input_tokens + self.output_tokens

    def add(self, other: Usage) -> None:
        self.input_tokens += other.input_tokens
        self.output_tokens += other.output_tokens
        self.reasoning_tokens += other.reasoning_tokens


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
    """The provider waits before retrying (429 or 5xx)."""

    status: int | None
    wait_seconds: float
    attempt: int


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
