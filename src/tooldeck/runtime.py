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
from collections import OrderedDict
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any, TypeVar

from tooldeck.settings import setting, settings_service
from tooldeck.store.db import Store, default_state_dir
from tooldeck.tokens import count_texts, count_with
from tooldeck.workspace.hidden import hide
from tooldeck.workspace.roots import Workspace
from tooldeck.workspace.statefiles import batches_left
from tooldeck.workspace.trust import AskPerson, Boundary

T = TypeVar("T")
log = logging.getLogger("tooldeck.runtime")


RECENT_COUNTS = 8  # large texts whose counts are kept (the text itself is the key: equal text, equal count)
RECENT_COUNT_MIN_CHARS = 4096  # smaller ones are counted again (cheap, and they would churn the few kept)


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
        self._workspace_ok: bool | None = None  # start_workspace(): not yet / restored / failed
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
        # the counts of the last few large texts: a tool that counted its whole result
        # (to fit it) spares the toolbox counting it again (its output budget)
        self._recent_counts: OrderedDict[tuple[str, str], int] = OrderedDict()
        # a batch write of a process that died is undone (or finished) before
        # any tool of this one sees the files: one directory listing when clean
        # (the journal's code loads only when there is a batch to recover)
        if batches_left(self.state_dir):
            from tooldeck.workspace.journal import recover as recover_writes  # lazy: a clean start needs none

            recover_writes(self.state_dir)

    @classmethod
    def for_dirs(cls, dirs: Sequence[str | os.PathLike[str]] | None = None, **kwargs: Any) -> Runtime:
        return cls(Workspace.from_dirs(list(dirs) if dirs else [os.getcwd()]), **kwargs)

    def start(self, confinement: bool = True) -> Runtime:
        """Restore persisted state before any tool is described: the launch
        workspace (:meth:`start_workspace`) and an ``output.budget_tokens``
        from the config files or the store. Hosts call it once before
        building the catalog, so the order of the catalog's domains does not
        matter; later calls do nothing. A broken store must not stop a server
        from starting: it is logged, and the tools report it on first use.
        ``confinement``: also say in the log how helper processes are confined
        (a host that answers first says it a moment later, itself)."""
        with self._lock:
            if self._started:
                return self
            self._started = True
        if confinement:
            # lazy: the confinement helpers (shutil, ctypes: ~9 ms) only to say it; a stdio server says it later
            from tooldeck.confine import helpers

            helpers.mode()  # how helper processes are confined: said once, in the log, at start-up
        if not self.start_workspace():
            return self
        try:
            settings = settings_service(self)
            if settings.source("output.budget_tokens") in ("config", "stored"):
                self.budget_tokens = int(settings.get("output.budget_tokens"))
        except Exception as exc:  # reported by the tools on first use
            log.warning("tooldeck: could not restore workspace state from %s: %s", self.state_dir, exc)
        return self

    def start_workspace(self) -> bool:
        """The first part of :meth:`start`: the launch workspace restored (its
        stored folders inside the trust boundary become roots), all the files'
        lists need; a stdio server answers them before the rest. Once; False
        when the store could not say (logged)."""
        with self._lock:
            if self._workspace_ok is not None:
                return self._workspace_ok
            from tooldeck.state.workspaces import workspace_service  # lazy: the store loads at start

            try:
                workspace_service(self)
                self._workspace_ok = True
            except Exception as exc:  # reported by the tools on first use
                log.warning("tooldeck: could not restore workspace state from %s: %s", self.state_dir, exc)
                self._workspace_ok = False
            return self._workspace_ok

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
        encoding = str(setting(self, "tokens.encoding"))
        if len(text) < RECENT_COUNT_MIN_CHARS:
            return count_with(encoding, text)
        key = (encoding, text)
        with self._lock:
            found = self._recent_counts.get(key)
        if found is not None:
            return found
        counts, exact = count_texts(encoding, [text])
        n = counts[0]
        if not exact:  # an estimate (the token worker still loading) is never kept
            return n
        with self._lock:
            self._recent_counts[key] = n
            while len(self._recent_counts) > RECENT_COUNTS:
                self._recent_counts.popitem(last=False)
        return n
