"""Model errors with a message a person can act on.

Why a type of our own: the runner must tell "your key is wrong" (401) from
"the provider is overloaded" (429/5xx, already retried) from "the model sent a
tool call we cannot read", and print one clear line for each, whatever SDK
exception carried it.

``remote`` holds text the endpoint itself wrote (a failed response's error
message) until :class:`~tooldeck.llm.provider.Provider`, which knows the
endpoint's address, decides what of it may be shown
(:mod:`tooldeck.remote_errors`); ``message`` never carries it.
"""

from __future__ import annotations

from typing import Literal

ErrorKind = Literal["auth", "rate_limit", "server", "connection", "bad_request", "malformed", "config"]


class ModelError(RuntimeError):
    def __init__(self, kind: ErrorKind, message: str, status: int | None = None, *, remote: str | None = None) -> None:
        self.kind = kind
        self.status = status
        self.message = message
        self.remote = remote
        super().__init__(message)
