"""Approvals: how an ``ask`` decision reaches a person, and what is remembered.

The shell service does not know which host it runs in. A host that can ask
somebody installs an :class:`Approver` for the duration of a call with
:func:`approver_scope` (a context variable, so concurrent calls in one server
each ask their own client): the CLI and the ChatMD runner prompt on the
terminal (:class:`TerminalApprover`), the MCP server sends an
``elicitation/create`` request when the client declared the capability.
When nobody can be asked, ``ask`` means deny.

Scopes: ``once`` approves this request only; ``session`` also approves every
later request with the same runtime and argv for the life of the
:class:`SessionApprovals` (one per process/session).
"""

from __future__ import annotations

import asyncio
import contextlib
import contextvars
import threading
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Literal, Protocol, TextIO

Scope = Literal["once", "session"]


@dataclass(frozen=True, slots=True)
class ApprovalRequest:
    tool: str
    runtime: str
    mode: str
    command: str  # what would run, shown to the person (argvs joined)
    reason: str  # why the policy asks
    rationale: str | None = None  # the model's stated reason, if the tool takes one


@dataclass(frozen=True, slots=True)
class ApprovalAnswer:
    approved: bool
    scope: Scope = "once"
    by: str = "host"  # who answered: terminal, mcp-elicitation, session memory...
    reason: str | None = None  # the person's words with a denial (the model reads them)


class Approver(Protocol):
    """A host's way to ask a person; must not raise (a failure is a denial)."""

    async def approve(self, request: ApprovalRequest) -> ApprovalAnswer: ...


_current: contextvars.ContextVar[Approver | None] = contextvars.ContextVar("tooldeck_shell_approver", default=None)


@contextlib.contextmanager
def approver_scope(approver: Approver | None) -> Iterator[None]:
    """Make ``approver`` the one asked by shell calls made inside the block."""
    token = _current.set(approver)
    try:
        yield
    finally:
        _current.reset(token)


def current_approver() -> Approver | None:
    return _current.get()


class SessionApprovals:
    """Approvals with scope ``session``, keyed by runtime and exact command."""

    def __init__(self) -> None:
        self._keys: set[tuple[str, str]] = set()
        self._lock = threading.Lock()

    def remember(self, request: ApprovalRequest) -> None:
        with self._lock:
            self._keys.add((request.runtime, request.command))

    def covers(self, request: ApprovalRequest) -> bool:
        with self._lock:
            return (request.runtime, request.command) in self._keys


def format_request(request: ApprovalRequest) -> str:
    lines = [
        f"tooldeck: the {request.tool} tool wants to run (runtime {request.runtime}, mode {request.mode}):",
        f"  {request.command}",
        f"policy: {request.reason}",
    ]
    if request.rationale:
        lines.append(f"rationale: {request.rationale}")
    return "\n".join(lines)


class TerminalApprover:
    """Asks on a terminal: ``y`` once, ``s`` for the session, anything else denies.

    The streams are parameters so the prompt can be driven by any text
    stream (a tty, or a test's fake input); one prompt at a time."""

    def __init__(self, stdin: TextIO, stdout: TextIO) -> None:
        self._in = stdin
        self._out = stdout
        self._lock = threading.Lock()

    def _ask(self, request: ApprovalRequest) -> ApprovalAnswer:
        with self._lock:
            self._out.write(format_request(request) + "\nallow? [y]es once / [s]ession / [N]o: ")
            self._out.flush()
            answer = self._in.readline().strip().lower()
        if answer in ("y", "yes"):
            return ApprovalAnswer(True, "once", "terminal")
        if answer in ("s", "session"):
            return ApprovalAnswer(True, "session", "terminal")
        return ApprovalAnswer(False, "once", "terminal")

    async def approve(self, request: ApprovalRequest) -> ApprovalAnswer:
        try:
            return await asyncio.to_thread(self._ask, request)
        except Exception:
            return ApprovalAnswer(False, "once", "terminal")


def terminal_approver_if_tty() -> TerminalApprover | None:
    """A TerminalApprover on /dev/tty when the process has a terminal, else None."""
    import sys

    if not (sys.stdin.isatty() and sys.stderr.isatty()):
        return None
    return TerminalApprover(sys.stdin, sys.stderr)
