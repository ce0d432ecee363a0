"""Runtime: the services one host process hands to its tools.

A tool factory receives a Runtime and closes over what it needs (the
workspace, the store, settings). Domains attach their own long-lived services
with :meth:`Runtime.service`, so adding a domain never edits this file.
Nothing here is created eagerly: the store opens on first use, services are
built on first request, so a server starts fast.
"""

from __future__ import annotations

import logging
import os
import threading
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any, TypeVar

from tooldeck.confine import helpers
from tooldeck.settings import setting, settings_service
from tooldeck.state.workspaces import workspace_service
from tooldeck.store.db import Store, default_state_dir
from tooldeck.tokens import count_with
from tooldeck.workspace.hidden import hide
from tooldeck.workspace.journal import recover as recover_writes
from tooldeck.workspace.roots import Workspace
from tooldeck.workspace.trust import AskPerson, Boundary

T = TypeVar("T")
log = logging.getLogger("tooldeck.runtime")


class Runtime:
    def __init__(
        self,
        workspace: Workspace,
        *,
        state_dir: str | os.PathLike[str] | None = None,
        budget_tokens: int = 20_000,
        settings: dict[str, Any] | None = None,
        allow_roots: Sequence[str | os.PathLike[str]] = (),
    ) -> None:
        self.workspace = workspace
        # the trust boundary: launch roots + what the person allowed (config, --allow-root)
        self.boundary = Boundary([*(r.path for r in workspace.roots), *allow_roots])
        # set by a host that can ask the person (MCP elicitation); None = refuse outright
        self.ask_person: AskPerson | None = None
        self._started = False
        self.state_dir = Path(state_dir) if state_dir is not None else default_state_dir()
        # outside every root, even one that contains it (serving $HOME): no tool reads, lists or writes it
        hide(self.state_dir)
        self.budget_tokens = budget_tokens
        self.settings: dict[str, Any] = dict(settings or {})
        self._store: Store | None = None
        self._services: dict[str, Any] = {}
        self._providers: dict[str, Callable[..., Any]] = {}
        self._workspace_listeners: list[Callable[[Workspace], None]] = []
        self._lock = threading.RLock()
        # a batch write of a process that died is undone (or finished) before
        # any tool of this one sees the files: one directory listing when clean
        recover_writes(self.state_dir)

    @classmethod
    def for_dirs(cls, dirs: Sequence[str | os.PathLike[str]] | None = None, **kwargs: Any) -> Runtime:
        return cls(Workspace.from_dirs(list(dirs) if dirs else [os.getcwd()]), **kwargs)

    def start(self) -> Runtime:
        """Restore persisted state before any tool is described: the launch
        workspace (its stored folders inside the trust boundary become roots)
        and an ``output.budget_tokens`` from the config files or the store. Hosts call it once before
        building the catalog, so the order of the catalog's domains does not
        matter; later calls do nothing. A broken store must not stop a server
        from starting: it is logged, and the tools report it on first use."""
        with self._lock:
            if self._started:
                return self
            self._started = True
        helpers.mode()  # how helper processes are confined: said once, in the log, at start-up

        try:
            workspace_service(self)
            settings = settings_service(self)
            if settings.source("output.budget_tokens") in ("config", "stored"):
                self.budget_tokens = int(settings.get("output.budget_tokens"))
        except Exception as exc:  # reported by the tools on first use
            log.warning("tooldeck: could not restore workspace state from %s: %s", self.state_dir, exc)
        return self

    def replace_workspace(self, workspace: Workspace) -> None:
        """Swap the roots (``manage_workspaces`` switch / add_folder / remove_folder).

        Tools must therefore read ``rt.workspace`` at call time, never capture
        it when built. Services holding per-root state (indexes, caches)
        register with :meth:`on_workspace_change` to drop it."""
        with self._lock:
            self.workspace = workspace
            listeners = list(self._workspace_listeners)
        for fn in listeners:
            fn(workspace)

    def on_workspace_change(self, fn: Callable[[Workspace], None]) -> None:
        self._workspace_listeners.append(fn)

    @property
    def store(self) -> Store:
        if self._store is None:
            with self._lock:
                if self._store is None:
                    self._store = Store(self.state_dir)
        return self._store

    def service(self, key: str, factory: Callable[[Runtime], T]) -> T:
        """The process-wide service ``key``, built by ``factory`` on first use."""
        svc = self._services.get(key)
        if svc is None:
            with self._lock:
                svc = self._services.get(key)
                if svc is None:
                    svc = self._services[key] = factory(self)
        return svc  # type: ignore[no-any-return]

    def provide(self, name: str, fn: Callable[..., Any]) -> None:
        """Publish a capability other domains may use if present (e.g. the
        selection domain provides ``selected_paths`` to the file tree)."""
        self._providers[name] = fn

    def provider(self, name: str) -> Callable[..., Any] | None:
        return self._providers.get(name)

    def count_tokens(self, text: str) -> int:
        """Tokens of ``text`` under the setting ``tokens.encoding``: every count
        shown to a user or enforced (the output budget included) uses it."""
        if not text:
            return 0
        return count_with(str(setting(self, "tokens.encoding")), text)
