"""Tool errors: values with stable names.

A tool never crashes its host. It raises :class:`ToolError` with a stable
``code`` (documented in ``docs/errors.md``) and a message that tells the model
how to recover. Hosts turn it into their own shape (an MCP ``isError`` result,
exit status 1 on the CLI, a ``<tool_response>`` in ChatMD).
"""

from __future__ import annotations

from enum import StrEnum
from typing import Any


class ErrorCode(StrEnum):
    """The stable error codes. Clients may branch on them; never rename one."""

    INVALID_ARGUMENTS = "invalid_arguments"
    UNKNOWN_TOOL = "unknown_tool"
    NOT_FOUND = "not_found"
    ALREADY_EXISTS = "already_exists"
    OUTSIDE_ROOTS = "outside_roots"
    READ_ONLY = "read_only"
    NOT_A_FILE = "not_a_file"
    NOT_A_DIRECTORY = "not_a_directory"
    BINARY_FILE = "binary_file"
    CONFLICT = "conflict"
    AMBIGUOUS = "ambiguous"
    NO_MATCH = "no_match"
    PATCH_SYNTAX = "patch_syntax"
    CONTEXT_MISMATCH = "context_mismatch"
    DENIED = "denied"
    PROTECTED = "protected"
    TIMEOUT = "timeout"
    CANCELLED = "cancelled"
    TOO_LARGE = "too_large"
    UNSUPPORTED = "unsupported"
    IO_ERROR = "io_error"
    GIT_ERROR = "git_error"
    INTERNAL = "internal_error"
    MODEL_ERROR = "model_error"
    DEPTH_LIMIT = "depth_limit"
    PROMPT_ERROR = "prompt_error"
    HTTP_ERROR = "http_error"
    NETWORK_ERROR = "network_error"
    TOO_MANY_REDIRECTS = "too_many_redirects"
    SANDBOX_UNAVAILABLE = "sandbox_unavailable"
    MODEL_MISMATCH = "model_mismatch"
    REMOTE_ERROR = "remote_error"
    UNAVAILABLE = "unavailable"


class ToolError(Exception):
    """A failure the model can act on.

    ``code`` is one of :class:`ErrorCode` (a plain string is accepted for custom
    tools); ``message`` says what went wrong and what to do next; ``details`` is
    optional machine-readable context (e.g. candidate line numbers).
    """

    def __init__(self, code: ErrorCode | str, message: str, details: dict[str, Any] | None = None) -> None:
        super().__init__(message)
        self.code = str(code)
        self.message = message
        self.details = details or {}

    def __str__(self) -> str:
        return f"[{self.code}] {self.message}"

    def to_dict(self) -> dict[str, Any]:
        data: dict[str, Any] = {"code": self.code, "message": self.message}
        if self.details:
            data["details"] = self.details
        return data


def invalid_arguments(message: str, **details: Any) -> ToolError:
    """Shorthand for the most common error: the call's arguments are wrong.
    ``field="x"`` (or ``fields=[...]``) names the culprit; details always
    carry the list under ``fields`` so clients read one key."""
    if "field" in details and "fields" not in details:
        details["fields"] = [details["field"]]
    return ToolError(ErrorCode.INVALID_ARGUMENTS, message, details or None)
