"""Invocation: how a running tool reports progress and nested traces.

The Python counterpart of ochat's ``Ochat_function.Invocation`` (seed 001):

* progress is transient display data on a channel (assistant, reasoning,
  stdout, stderr, activity), either ``Append(text)`` or ``Replace(text)``;
* traces describe nested tool calls (started / progress / finished);
* observers run synchronously and must return promptly; an observer that
  raises is logged and ignored, so it can never change a tool's final output;
* :data:`SILENT` discards everything; ``is_observed`` lets a tool skip
  display-only work when nobody listens.

An Invocation also carries a cancellation flag that sync tools (run in worker
threads, which cannot be killed) poll with :meth:`Invocation.check_cancelled`.
"""

from __future__ import annotations

import logging
import threading
from collections.abc import Callable
from dataclasses import dataclass
from enum import StrEnum
from typing import Any, Literal

from tooldeck.core.errors import ErrorCode, ToolError

log = logging.getLogger("tooldeck.invocation")


class Channel(StrEnum):
    ASSISTANT = "assistant"
    REASONING = "reasoning"
    STDOUT = "stdout"
    STDERR = "stderr"
    ACTIVITY = "activity"


@dataclass(frozen=True, slots=True)
class Append:
    """Extend the channel with ``text``."""

    text: str


@dataclass(frozen=True, slots=True)
class Replace:
    """Replace the channel's latest replaceable update with ``text``."""

    text: str


@dataclass(frozen=True, slots=True)
class Progress:
    channel: Channel
    update: Append | Replace


@dataclass(frozen=True, slots=True)
class ToolStarted:
    call_id: str
    name: str
    kind: Literal["function", "custom"]
    payload: str


@dataclass(frozen=True, slots=True)
class ToolProgress:
    call_id: str
    progress: Progress


@dataclass(frozen=True, slots=True)
class ToolFinished:
    call_id: str
    outcome: Literal["returned", "raised", "cancelled"]
    output: Any = None


TraceEvent = ToolStarted | ToolProgress | ToolFinished
ProgressCallback = Callable[[Progress], None]
TraceCallback = Callable[[TraceEvent], None]


def _valid_utf8(text: str) -> bool:
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        return False
    return True


class Invocation:
    """Per-call observation channel. Create one with :meth:`create`,
    :meth:`create_with_trace`, or use :data:`SILENT`."""

    __slots__ = ("_cancel", "_parent", "_progress", "_trace")

    def __init__(self, progress: ProgressCallback | None = None, trace: TraceCallback | None = None) -> None:
        self._progress = progress
        self._trace = trace
        self._cancel = threading.Event()
        self._parent: Invocation | None = None

    @classmethod
    def create(cls, progress: ProgressCallback) -> Invocation:
        return cls(progress, None)

    @classmethod
    def create_with_trace(cls, progress: ProgressCallback, trace: TraceCallback) -> Invocation:
        return cls(progress, trace)

    @classmethod
    def silent(cls) -> Invocation:
        """A fresh invocation with no observer (each call gets its own cancel flag)."""
        return cls(None, None)

    def child(self) -> Invocation:
        """An invocation for one call: the same observers, its own cancel
        flag. Cancelling the child (a timeout) leaves this one untouched;
        cancelling this one reaches every child. The toolbox gives each call
        its own child, so a timed-out call never cancels a shared invocation."""
        inv = Invocation(self._progress, self._trace)
        inv._parent = self
        return inv

    @property
    def is_observed(self) -> bool:
        return self._progress is not None or self._trace is not None

    @property
    def is_traced(self) -> bool:
        """Whether a trace observer listens (lets hosts skip building trace payloads)."""
        return self._trace is not None

    def emit(self, progress: Progress) -> None:
        """Deliver ``progress`` to the observer. Invalid UTF-8 is rejected;
        observer exceptions are logged and swallowed."""
        if not _valid_utf8(progress.update.text):
            raise ValueError("progress text must be valid UTF-8")
        if self._progress is None:
            return
        try:
            self._progress(progress)
        except Exception:  # an observer must never change the tool's result
            log.exception("progress observer raised; ignored")

    def emit_text(self, channel: Channel | str, text: str, *, replace: bool = False) -> None:
        """Convenience: ``emit(Progress(channel, Append|Replace(text)))``."""
        update: Append | Replace = Replace(text) if replace else Append(text)
        self.emit(Progress(Channel(channel), update))

    def emit_trace(self, event: TraceEvent) -> None:
        if self._trace is None:
            return
        try:
            self._trace(event)
        except Exception:
            log.exception("trace observer raised; ignored")

    # cancellation -----------------------------------------------------------
    def cancel(self) -> None:
        self._cancel.set()

    @property
    def cancelled(self) -> bool:
        inv: Invocation | None = self
        while inv is not None:
            if inv._cancel.is_set():
                return True
            inv = inv._parent
        return False

    def check_cancelled(self) -> None:
        """Raise :class:`~tooldeck.core.errors.ToolError` ``cancelled`` if the
        call was cancelled; long sync loops call this between steps."""
        if self.cancelled:
            raise ToolError(ErrorCode.CANCELLED, "the call was cancelled")


class _Silent(Invocation):
    """The shared silent invocation: nothing can cancel it (a call made with
    it runs on its own child, which is what a timeout cancels)."""

    __slots__ = ()

    def cancel(self) -> None:
        return None


SILENT: Invocation = _Silent(None, None)
"""A shared silent invocation for callers that never cancel."""
