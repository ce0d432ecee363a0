"""The trust boundary (SPEC §3): which folders model-facing tools may turn into roots.

Roots are set by the person, never by the model. What the person said is
collected here as the **allowed parents** of one process: its launch roots,
``allow_roots`` from the user's config file, ``--allow-root DIR`` on the
command line, and folders the person approved during this session (MCP
elicitation). ``manage_workspaces`` may create, switch to or extend a
workspace only with folders inside them; anything else is refused with
``denied`` unless the host can ask the person (:data:`AskPerson`) and the
person says yes.

The boundary belongs to the process, not to the store: a workspace stored by
one server (started with a wider ``--allow-root``) is confined again by the
next server's own boundary, so a stored folder never widens a server started
with explicit roots.
"""

from __future__ import annotations

import os
import threading
from collections.abc import Callable, Iterable

from tooldeck.core.errors import ErrorCode, ToolError

# Asks the person a yes/no question (the MCP host sets one: elicitation);
# called from a tool's worker thread. True only on an explicit yes; False when
# the person said no (or did not answer); None when nobody can be asked (the
# client of this call cannot elicit).
AskPerson = Callable[[str], "bool | None"]


def _inside(path: str, parent: str) -> bool:
    if parent == os.sep:
        return path.startswith(os.sep)
    return path == parent or path.startswith(parent + os.sep)


class Boundary:
    """The allowed parents of one process (canonical paths)."""

    def __init__(self, parents: Iterable[str | os.PathLike[str]] = ()) -> None:
        self._parents: list[str] = []
        self._lock = threading.Lock()
        for p in parents:
            self.allow(p)

    @property
    def parents(self) -> tuple[str, ...]:
        return tuple(self._parents)

    def allow(self, path: str | os.PathLike[str]) -> None:
        """Add an allowed parent (a launch root, a configured parent, a folder
        the person approved)."""
        real = os.path.realpath(os.path.expanduser(os.fspath(path)))
        with self._lock:
            if real not in self._parents:
                self._parents.append(real)

    def allows(self, path: str) -> bool:
        real = os.path.realpath(path)
        return any(_inside(real, p) for p in self._parents)

    def outside(self, paths: Iterable[str]) -> list[str]:
        """The canonical paths of ``paths`` that lie outside every allowed parent."""
        out: list[str] = []
        for p in paths:
            real = os.path.realpath(p)
            if not self.allows(real) and real not in out:
                out.append(real)
        return out

    def describe(self) -> str:
        return ", ".join(self._parents) or "(none)"

    def require(self, paths: Iterable[str], what: str, ask: AskPerson | None) -> None:
        """Refuse with ``denied`` unless every path is inside an allowed parent,
        or the person, asked through ``ask``, approves the others (they are
        then allowed for the rest of this process)."""
        outside = self.outside(paths)
        if not outside:
            return
        listed = ", ".join(outside)
        if ask is not None:
            question = (
                f"The assistant wants to {what}, which gives it access to {listed} "
                f"(outside the allowed folders: {self.describe()}). Allow?"
            )
            answer = ask(question)
            if answer:
                for p in outside:
                    self.allow(p)
                return
            if answer is not None:
                raise ToolError(
                    ErrorCode.DENIED, f"the person declined access to {listed}; work inside the current roots"
                )
        raise ToolError(
            ErrorCode.DENIED,
            f"{listed} is outside the folders this server may open ({self.describe()}); roots are set by the "
            "person: ask them to start tooldeck with that folder, pass --allow-root, add it to allow_roots in "
            "their config file, or run `tooldeck workspace add`",
        )
