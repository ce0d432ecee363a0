"""Where authority may come from (SPEC §3), and what tooldeck says when it refuses some.

Authority is anything that runs a command outside the sandbox (a stdio MCP
server, a ``command=`` tool, a hook), widens a sandbox or a policy, passes an
environment variable or a secret, names an endpoint that receives
credentials, or reads outside the roots. It is honoured only from the person:
their own config file, command-line flags and environment, files they name on
the command line, and files they approved by content (:mod:`tooldeck.state.approvals`,
``tooldeck trust allow``). A file the model could have written (a project
``.tooldeck.toml``, a prompt folder inside a root, a ``.chatmd`` agent or
import inside a root) loads *without* authority: what it asks beyond the safe
subset is refused with a :class:`Notice` naming the file, the line, what it
asked for and the command that would allow it.

Notices are also collected per process (:func:`report`, :func:`notices`) so a
host can name, once, every file it is ignoring (at start-up, in ``tooldeck
trust list``).
"""

from __future__ import annotations

import os
import shlex
import threading
from collections.abc import Callable
from dataclasses import dataclass

from tooldeck.state.approvals import Approvals


@dataclass(frozen=True, slots=True)
class Notice:
    """One declaration refused for want of authority."""

    path: str  # the file that asked
    what: str  # what it asked for, in the person's words ("a stdio MCP server `sh -c …`")
    line: int | None = None

    @property
    def where(self) -> str:
        return f"{self.path}:{self.line}" if self.line else self.path

    @property
    def fix(self) -> str:
        return f"tooldeck trust allow {shlex.quote(self.path)}"

    def text(self) -> str:
        return (
            f"{self.where}: {self.what} needs authority this file does not have (a file inside a root could "
            f"have been written by the model), so it is ignored. If you wrote it and want it, run "
            f"`{self.fix}` (the approval holds for the file's current content only)."
        )


def has_authority(
    path: str | os.PathLike[str],
    content: bytes,
    *,
    person_named: bool = False,
    state_dir: str | os.PathLike[str] | None = None,
) -> bool:
    """True when ``content`` (the bytes about to be used) of the file at ``path``
    may grant authority: the person named the file on the command line, or
    approved exactly these bytes."""
    return person_named or Approvals(state_dir).approves(path, content)


_lock = threading.Lock()
_seen: dict[tuple[str, str, int | None], Notice] = {}
_sinks: list[Callable[[Notice], None]] = []


def report(notice: Notice) -> bool:
    """Record ``notice`` for this process; True the first time it is seen (say it once).
    A new notice also goes to every sink a host registered (:func:`announce_to`)."""
    key = (notice.path, notice.what, notice.line)
    with _lock:
        if key in _seen:
            return False
        _seen[key] = notice
        sinks = list(_sinks)
    for sink in sinks:
        sink(notice)
    return True


def announce_to(sink: Callable[[Notice], None]) -> None:
    """Send every notice, those already recorded and those to come, to ``sink``
    once each: a host's stderr (never stdout: a stdio MCP server speaks there),
    so the person learns at start-up which declarations are ignored and why."""
    with _lock:
        past = list(_seen.values())
        _sinks.append(sink)
    for notice in past:
        sink(notice)


def notices() -> list[Notice]:
    """Every notice recorded in this process, in the order first seen."""
    with _lock:
        return list(_seen.values())
