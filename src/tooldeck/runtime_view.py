"""What the services the runtime builds at its own start (the settings
service, the stored workspace) use of a :class:`~tooldeck.runtime.Runtime`,
as a protocol. They take a runtime without importing ``runtime.py``, so the
composition root imports them and never the other way round: no cycle."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any, Protocol, TypeVar

from tooldeck.store.db import Store
from tooldeck.workspace.roots import Workspace
from tooldeck.workspace.trust import AskPerson, Boundary

T = TypeVar("T")


class RuntimeView(Protocol):
    workspace: Workspace
    boundary: Boundary
    ask_person: AskPerson | None
    state_dir: Path

    @property
    def store(self) -> Store: ...

    def service(self, key: str, factory: Callable[[Any], T]) -> T: ...

    def replace_workspace(self, workspace: Workspace) -> None: ...
