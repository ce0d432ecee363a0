"""Model errors with a message a person can act on.

Why a type of our own: the runner must tell "your key is wrong" (401) from
"the provider is overloaded" (429/5xx, already retried) from "the model sent a
tool call we cannot read", and print one clear line for each, whatever SDK
exception carried it.
"""

from __future__ import annotations

from typing import Literal

ErrorKind = Literal["auth", "rate_limit", "server", "connection", "bad_request", "malformed", "config"]


class ModelError(RuntimeError):
    def __init__(self, kind: ErrorKind, message: str, status: int | None = None) -> None:
        self.kind = kind
        self.status = status
        self.message = message
        super().__init__(message)
