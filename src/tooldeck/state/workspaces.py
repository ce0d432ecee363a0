"""Workspaces and compose tabs, and which ones this process is using.

* A **workspace** is a named list of folders (the roots) and its tabs. A
  **tab** is a compose context: it owns a selection and a prompt. Both live in
  the store and survive restarts.
* The directories a process starts on are its **launch workspace** (found by
  their canonical paths, created on first start). Folders added to it later
  are restored at the next start; the start directories always stay roots, so
  explicit roots win over stored state.
* **Binding**: each process works on one workspace and one tab at a time (in
  memory, so two servers on one state directory never pull the rug from under
  each other). The tab a process last used in a workspace is remembered per
  set of start directories, so a restarted server, or the next ``tooldeck
  call`` from the same directory, resumes on it. A workspace's **active tab**
  (``focus``) is the tab used where no such memory exists.
* Switching workspace (or adding/removing a folder of the current one) swaps
  ``rt.workspace`` through :meth:`Runtime.replace_workspace`.
* **Trust boundary** (:mod:`tooldeck.workspace.trust`): create, switch and
  add_folder accept only folders inside the process's allowed parents (or
  ones the person added with ``tooldeck workspace add``), else ``denied``
  unless the person approves when asked. Restoring the launch workspace
  skips stored folders outside the boundary, so a folder stored by one
  server never widens another.
"""

from __future__ import annotations

import logging
import os
import re
import sqlite3
import threading
from collections.abc import Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, TypeVar

from tooldeck.core.errors import ErrorCode, ToolError, invalid_arguments
from tooldeck.state.tables import ContextDB, Folder, TabRow, WorkspaceRow
from tooldeck.workspace.roots import Root, Workspace

R = TypeVar("R", WorkspaceRow, TabRow)
log = logging.getLogger("tooldeck.workspaces")

if TYPE_CHECKING:
    from tooldeck.runtime_view import RuntimeView


def launch_key(roots: tuple[Root, ...]) -> str:
    return "\n".join(sorted({r.path for r in roots}))


def _root_id(path: str, taken: set[str], preferred: str | None = None) -> str:
    base = re.sub(r"[^A-Za-z0-9_.-]", "_", preferred or os.path.basename(path) or "root")[:60] or "root"
    rid, n = base, 2
    while rid in taken:
        rid, n = f"{base}-{n}", n + 1
    return rid


@dataclass(frozen=True, slots=True)
class Current:
    workspace: WorkspaceRow
    tab: TabRow


class WorkspaceService:
    def __init__(self, rt: RuntimeView) -> None:
        self.rt = rt
        self.db = ContextDB(rt.store)
        self.start_roots: tuple[Root, ...] = rt.workspace.roots
        self.launch_roots = self.start_roots  # minus start directories removed in this session
        self.launch_key = launch_key(self.start_roots)
        self._lock = threading.RLock()
        self.ws_id = ""
        self.tab_id = ""
        self._start()

    # binding ------------------------------------------------------------------
    def _start(self) -> None:
        first = self.start_roots[0]
        row = self.db.workspace_by_launch(self.launch_key)
        if row is None:
            self.launch_roots = self.start_roots
            folders = [Folder(r.path, r.id, r.description, r.read_only) for r in self.start_roots]
            name = os.path.basename(first.path) or first.id
            row = self.db.create_workspace(name, folders, launch_key=self.launch_key, unique_name=True)
        self._enter(row)

    def _roots_for(self, row: WorkspaceRow) -> list[Root]:
        """The roots of ``row``: for the launch workspace its start roots first
        (keeping their ids, descriptions and read-only flags), then stored
        folders that still exist."""
        roots: list[Root] = list(self.launch_roots) if row.launch_key == self.launch_key else []
        taken = {r.id for r in roots}
        paths = {r.path for r in roots}
        for f in row.folders:
            real = os.path.realpath(f.path)
            if real in paths or not os.path.isdir(real):
                continue
            if not (f.by_person or self.rt.boundary.allows(real)):
                log.info(
                    "tooldeck: stored folder %s of %r is outside the allowed parents; not restored", real, row.name
                )
                continue
            rid = _root_id(real, taken, f.root_id)
            taken.add(rid)
            paths.add(real)
            roots.append(Root(rid, real, f.description, f.read_only))
        return roots

    def _enter(self, row: WorkspaceRow) -> None:
        roots = self._roots_for(row)
        if not roots:
            raise ToolError(
                ErrorCode.NOT_FOUND,
                f"workspace {row.name!r} has no existing folder; add one with "
                f'manage_workspaces action="add_folder" workspace="{row.name}" folder_path=...',
            )
        if row.launch_key == self.launch_key:
            launch = [Folder(r.path, r.id, r.description, r.read_only) for r in self.launch_roots]
            starts = {f.path for f in launch}
            stored = launch + [f for f in row.folders if os.path.realpath(f.path) not in starts]
            if tuple(stored) != row.folders:
                self.db.set_folders(row.id, stored)  # the start directories came back
        current = self.rt.workspace
        if [(r.id, r.path, r.read_only) for r in current.roots] != [(r.id, r.path, r.read_only) for r in roots] or (
            current.name != row.name
        ):
            self.rt.replace_workspace(Workspace(roots, name=row.name))
        self.ws_id = row.id
        tab_id = self.db.binding(self.launch_key, row.id)
        if tab_id is None or self.db.tab(tab_id) is None:
            tab_id = row.active_tab
        if tab_id is None or self.db.tab(tab_id) is None:
            tabs = self.db.tabs(row.id)
            tab_id = tabs[0].id if tabs else self.db.create_tab(row.id, None, auto_codemaps=True).id
        self.tab_id = tab_id

    def current(self) -> Current:
        """This process's workspace and tab, re-bound when another process
        deleted them (to the launch workspace / the active tab)."""
        with self._lock:
            ws = self.db.workspace(self.ws_id)
            if ws is None:
                self._start()
                ws = self.db.workspace(self.ws_id)
                assert ws is not None
            tab = self.db.tab(self.tab_id)
            if tab is None or tab.workspace_id != ws.id:
                self._enter(ws)
                tab = self.db.tab(self.tab_id)
                assert tab is not None
            return Current(ws, tab)

    def current_tab_id(self) -> str:
        return self.current().tab.id

    def _bind(self, tab: TabRow) -> None:
        self.tab_id = tab.id
        self.db.bind(self.launch_key, tab.workspace_id, tab.id)

    # lookups ------------------------------------------------------------------
    def find_workspace(self, ref: str, field: str = "workspace") -> WorkspaceRow:
        rows = self.db.workspaces()
        hit = _by_ref(rows, ref)
        if hit is not None:
            return hit
        names = ", ".join(repr(w.name) for w in rows[:20])
        raise ToolError(
            ErrorCode.NOT_FOUND,
            f"no workspace {ref!r}; known workspaces: {names or '(none)'}",
            {"field": field},
        )

    def find_tab(self, ref: str, ws_id: str, field: str = "tab") -> TabRow:
        tabs = self.db.tabs(ws_id)
        hit = _by_ref(tabs, ref)
        if hit is not None:
            return hit
        names = ", ".join(repr(t.name) for t in tabs)
        raise ToolError(ErrorCode.NOT_FOUND, f"no tab {ref!r} in this workspace; tabs: {names}", {"field": field})

    def roots_of(self, ref: str) -> Workspace:
        """The roots of workspace ``ref`` (name or id) without switching to it:
        what an agent session on that workspace works on (same boundary rules
        as a switch: stored folders outside the allowed parents are left out)."""
        row = self.find_workspace(ref)
        roots = self._roots_for(row)
        if not roots:
            raise ToolError(ErrorCode.NOT_FOUND, f"workspace {row.name!r} has no existing folder")
        return Workspace(roots, name=row.name)

    # workspaces -----------------------------------------------------------------
    def _require(self, paths: Sequence[str], what: str) -> None:
        """The trust boundary: refuse (or ask the person about) folders
        outside the allowed parents. Called without holding the lock: the
        person may take a while to answer."""
        self.rt.boundary.require(paths, what, self.rt.ask_person)

    def _unapproved(self, row: WorkspaceRow) -> list[str]:
        """Existing folders of ``row`` that entering it would add beyond the
        boundary (person-added folders and this process's start roots count as allowed)."""
        starts = {r.path for r in self.launch_roots} if row.launch_key == self.launch_key else set()
        paths = [os.path.realpath(f.path) for f in row.folders if not f.by_person]
        return [p for p in paths if p not in starts and os.path.isdir(p)]

    def switch(self, ref: str) -> WorkspaceRow:
        row = self.find_workspace(ref)
        self._require(self._unapproved(row), f"switch to workspace {row.name!r}")
        with self._lock:
            row = self.find_workspace(ref)
            self._enter(row)
            return row

    def create(self, name: str, folder_path: str | None, *, switch: bool) -> WorkspaceRow:
        name = name.strip()
        if not name or len(name) > 100 or "\x00" in name:
            raise invalid_arguments("field `name`: 1 to 100 characters", field="name")
        folders = [Folder(p, _root_id(p, set())) for p in ([checked_folder(folder_path)] if folder_path else [])]
        if folders:
            self._require([folders[0].path], f"create workspace {name!r} with folder {folders[0].path}")
        try:
            row = self.db.create_workspace(name, folders)
        except sqlite3.IntegrityError as exc:
            raise ToolError(
                ErrorCode.ALREADY_EXISTS, f"a workspace named {name!r} exists; pick another name or switch to it"
            ) from exc
        if switch and folders:
            with self._lock:
                self._enter(row)
        return row

    def delete(self, ref: str) -> WorkspaceRow:
        with self._lock:
            row = self.find_workspace(ref)
            if row.id == self.ws_id:
                raise ToolError(
                    ErrorCode.DENIED, f"{row.name!r} is the current workspace; switch to another one before deleting it"
                )
            self.db.delete_workspace(row.id)
            return row

    def add_folder(self, folder_path: str, ref: str | None) -> tuple[WorkspaceRow, Folder]:
        real = checked_folder(folder_path)
        self._require([real], f"add folder {real} to a workspace")
        with self._lock:
            row = self.find_workspace(ref) if ref else self.current().workspace
            added: list[Folder] = []

            def change(folders: list[Folder]) -> list[Folder]:
                if any(os.path.realpath(f.path) == real for f in folders):
                    raise ToolError(ErrorCode.ALREADY_EXISTS, f"{real} is already a folder of {row.name!r}")
                folder = Folder(real, _root_id(real, {f.root_id for f in folders}))
                added.append(folder)
                return [*folders, folder]

            self.db.update_folders(row.id, change)
            fresh = self.db.workspace(row.id)
            assert fresh is not None
            if row.id == self.ws_id:
                self._enter(fresh)
            return fresh, added[0]

    def remove_folder(self, folder_path: str, ref: str | None) -> WorkspaceRow:
        if not os.path.isabs(folder_path):
            raise invalid_arguments("field `folder_path` must be an absolute path", field="folder_path")
        real = os.path.realpath(folder_path)
        with self._lock:
            row = self.find_workspace(ref) if ref else self.current().workspace

            def change(folders: list[Folder]) -> list[Folder]:
                keep = [f for f in folders if os.path.realpath(f.path) != real]
                if len(keep) == len(folders):
                    listed = ", ".join(f.path for f in folders) or "(none)"
                    raise ToolError(ErrorCode.NOT_FOUND, f"{real} is not a folder of {row.name!r}; folders: {listed}")
                if not keep and row.id == self.ws_id:
                    raise ToolError(
                        ErrorCode.DENIED,
                        "that is the last folder of the current workspace; add another folder first",
                    )
                return keep

            self.db.update_folders(row.id, change)
            fresh = self.db.workspace(row.id)
            assert fresh is not None
            if row.launch_key == self.launch_key:
                # a start directory removed stays out for this session; it is a root again at the next start
                self.launch_roots = tuple(r for r in self.launch_roots if r.path != real)
            if row.id == self.ws_id:
                self._enter(fresh)
            return fresh

    # tabs ---------------------------------------------------------------------
    def tabs(self, ref: str | None = None) -> tuple[WorkspaceRow, list[TabRow]]:
        row = self.find_workspace(ref) if ref else self.current().workspace
        return row, self.db.tabs(row.id)

    def select_tab(self, ref: str, *, focus: bool) -> TabRow:
        with self._lock:
            cur = self.current()
            tab = self.find_tab(ref, cur.workspace.id)
            self._bind(tab)
            if focus:
                self.db.set_active_tab(cur.workspace.id, tab.id)
            return tab

    def create_tab(
        self, name: str | None, *, mode: str, source_tab: str | None, bind: bool, focus: bool, auto_codemaps: bool
    ) -> TabRow:
        with self._lock:
            cur = self.current()
            if name is not None:
                name = name.strip()
                if not name or len(name) > 100 or "\x00" in name:
                    raise invalid_arguments("field `name`: 1 to 100 characters", field="name")
            source: TabRow | None = None
            if mode == "fork":
                source = self.find_tab(source_tab, cur.workspace.id, "source_tab") if source_tab else cur.tab
            elif source_tab:
                raise invalid_arguments('field `source_tab` needs mode="fork"', field="source_tab")
            try:
                tab = self.db.create_tab(
                    cur.workspace.id, name, auto_codemaps=auto_codemaps, fork_from=source.id if source else None
                )
            except sqlite3.IntegrityError as exc:
                raise ToolError(ErrorCode.ALREADY_EXISTS, f"a tab named {name!r} exists in this workspace") from exc
            if bind:
                self._bind(tab)
            if focus:
                self.db.set_active_tab(cur.workspace.id, tab.id)
            return tab

    def close_tab(self, ref: str, *, allow_active: bool) -> TabRow:
        """Refuses the last tab, and the active tab unless ``allow_active``."""
        with self._lock:
            cur = self.current()
            tab = self.find_tab(ref, cur.workspace.id)
            tabs = self.db.tabs(cur.workspace.id)
            if len(tabs) <= 1:
                raise ToolError(
                    ErrorCode.DENIED, f"{tab.name!r} is the last tab of this workspace; it cannot be closed"
                )
            if tab.id == cur.workspace.active_tab and not allow_active:
                raise ToolError(
                    ErrorCode.DENIED,
                    f"{tab.name!r} is the active tab; select another with focus=true first, or pass allow_active=true",
                )
            self.db.delete_tab(tab.id)
            if tab.id == cur.workspace.active_tab:
                nxt = next(t for t in tabs if t.id != tab.id)
                self.db.set_active_tab(cur.workspace.id, nxt.id)
            if tab.id == self.tab_id:
                fresh = self.db.workspace(cur.workspace.id)
                assert fresh is not None
                self._enter(fresh)
            return tab


def checked_folder(folder_path: str) -> str:
    """A folder a workspace may hold: absolute, existing, not the filesystem root."""
    if not folder_path or "\x00" in folder_path:
        raise invalid_arguments("field `folder_path`: an absolute folder path is required", field="folder_path")
    if not os.path.isabs(folder_path):
        raise invalid_arguments(f"field `folder_path` must be absolute (got {folder_path!r})", field="folder_path")
    real = os.path.realpath(folder_path)
    if not os.path.isdir(real):
        raise ToolError(ErrorCode.NOT_FOUND, f"{folder_path!r} is not an existing folder", {"field": "folder_path"})
    if real == os.path.dirname(real):
        raise ToolError(ErrorCode.DENIED, "the filesystem root cannot be a workspace folder; pick a project folder")
    return real


def workspace_service(rt: RuntimeView) -> WorkspaceService:
    return rt.service("workspaces", WorkspaceService)


def _by_ref(rows: Sequence[R], ref: str) -> R | None:
    """The one row ``ref`` names: by exact id, else by name (any case), else
    by an id prefix of at least 8 characters; None when none or several match."""
    ref_s = ref.strip()
    for pred in (
        lambda r: r.id == ref_s,
        lambda r: r.name.lower() == ref_s.lower(),
        lambda r: len(ref_s) >= 8 and r.id.startswith(ref_s.lower()),
    ):
        hits = [r for r in rows if pred(r)]
        if len(hits) == 1:
            return hits[0]
    return None
