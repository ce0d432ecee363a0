"""manage_workspaces (seed 004): workspaces (named sets of folders) and their
compose tabs (each with its own selection and prompt).

Actions: list, switch, create, delete, add_folder, remove_folder, list_tabs,
select_tab, create_tab (mode blank | fork), close_tab. Semantics (binding,
focus, restarts) are in :mod:`tooldeck.state.workspaces`.

The seed's windows map onto workspaces: one window is one workspace. So
``window_id`` names a workspace (its id, which the replies give as the
window id): the call acts in it, switching this connection to it first for
the tab actions (the trust boundary applies as to any switch), and it
stands for ``workspace`` where an action takes one. ``open_in_new_window``
(switch, create): every connection already works in a workspace of its own
without moving anyone else's, so it switches this connection and the reply
names the ``window_id``.
"""

from __future__ import annotations

from typing import Literal

from pydantic import Field, model_validator

from tooldeck.core import ToolInput, tool
from tooldeck.core.output import Output
from tooldeck.core.tool import Tool
from tooldeck.runtime import Runtime
from tooldeck.settings import setting
from tooldeck.state.workspaces import WorkspaceService, workspace_service

Action = Literal[
    "list",
    "switch",
    "create",
    "delete",
    "add_folder",
    "remove_folder",
    "list_tabs",
    "select_tab",
    "create_tab",
    "close_tab",
]
REQUIRED: dict[str, tuple[str, ...]] = {
    "switch": ("workspace",),
    "create": ("name",),
    "delete": ("workspace",),
    "add_folder": ("folder_path",),
    "remove_folder": ("folder_path",),
    "select_tab": ("tab",),
    "close_tab": ("tab",),
}


class ManageWorkspacesInput(ToolInput):
    action: Action = "list"
    workspace: str | None = Field(
        None, description="Workspace id or name (add/remove_folder, list_tabs: default current)."
    )
    name: str | None = Field(None, description="Name of a new workspace (create) or tab (create_tab).")
    folder_path: str | None = Field(None, description="Absolute folder path (add_folder, remove_folder, create).")
    tab: str | None = Field(None, description="Tab id or name (select_tab, close_tab).")
    mode: Literal["blank", "fork"] = Field("blank", description="create_tab: empty, or a copy of source_tab.")
    source_tab: str | None = Field(None, description="create_tab fork: tab to copy (default: the current tab).")
    bind: bool = Field(True, description="create_tab: make this connection work on the new tab.")
    focus: bool = Field(False, description="select_tab/create_tab: also make it the workspace's active tab.")
    allow_active: bool = Field(False, description="close_tab: allow closing the active tab.")
    switch_to_created: bool = Field(True, description="create: switch to the new workspace (needs folder_path).")
    window_id: str | None = Field(
        None, description="A workspace id or name to act in (as the replies give it)."
    )  # fmt: skip
    open_in_new_window: bool = Field(
        False, description="switch/create: without affecting other connections; returns window_id."
    )

    @model_validator(mode="after")
    def _required(self) -> ManageWorkspacesInput:
        for name in REQUIRED.get(self.action, ()):
            if not getattr(self, name) and not (name == "workspace" and self.window_id):
                raise ValueError(f"action={self.action} needs `{name}`")
        return self


TAB_ACTIONS = ("select_tab", "create_tab", "close_tab")
TAKES_WORKSPACE = ("switch", "delete", "add_folder", "remove_folder", "list_tabs")


def _window(svc: WorkspaceService, args: ManageWorkspacesInput) -> str:
    """Apply ``window_id`` (a workspace): fill ``workspace`` where the action
    takes one, or move this connection there before a tab action. A note for
    the reply when the connection moved."""
    if args.window_id is None:
        return ""
    row = svc.find_workspace(args.window_id, "window_id")
    if args.action in TAKES_WORKSPACE and args.workspace is None:
        args.workspace = row.id
    elif args.action in TAB_ACTIONS and row.id != svc.current().workspace.id:
        svc.switch(row.id)
        return f" (this connection switched to workspace {row.name!r}, window_id {row.id}, first)"
    return ""


def _workspaces(svc: WorkspaceService) -> Output:
    cur = svc.current()
    rows = svc.db.workspaces()
    lines = [f"Workspaces ({len(rows)}; * = current):"]
    listed = []
    for w in rows:
        mark = "*" if w.id == cur.workspace.id else " "
        tabs = len(svc.db.tabs(w.id))
        folders = ", ".join(f.path for f in w.folders) or "(no folders)"
        lines.append(f"{mark} {w.name}  [id {w.id}]  {tabs} tab(s)  folders: {folders}")
        listed.append({"id": w.id, "name": w.name, "current": w.id == cur.workspace.id,
                       "folders": [f.path for f in w.folders]})  # fmt: skip
    return Output.text("\n".join(lines), structured={"workspaces": listed})


def _tabs(svc: WorkspaceService, ref: str | None) -> str:
    cur = svc.current()
    row, tabs = svc.tabs(ref)
    stats = svc.db.tab_stats(row.id)
    lines = [f"Tabs of workspace {row.name!r} (* = this connection's tab):"]
    for t in tabs:
        files, plen = stats.get(t.id, (0, 0))
        flags = [f for f, on in (("active", t.id == row.active_tab), ("auto codemaps off", not t.auto_codemaps)) if on]
        mark = "*" if t.id == cur.tab.id else " "
        extra = f"  ({', '.join(flags)})" if flags else ""
        lines.append(f"{mark} {t.name}  [id {t.id}]  {files} selected file(s), prompt {plen:,} chars{extra}")
    return "\n".join(lines)


def _roots(rt: Runtime) -> str:
    return ", ".join(f"{r.id}={r.path}" for r in rt.workspace.roots)


def build(rt: Runtime) -> Tool:
    def manage_workspaces(args: ManageWorkspacesInput) -> str | Output:
        svc = workspace_service(rt)
        moved = _window(svc, args)
        result = _act(svc, args)
        if isinstance(result, Output):  # the structured list: the note joins its text
            return Output.text(result.as_text() + moved, structured=result.structured) if moved else result
        return result + moved

    def _act(svc: WorkspaceService, args: ManageWorkspacesInput) -> str | Output:
        a = args.action
        if a == "list":
            return _workspaces(svc)
        if a == "switch":
            row = svc.switch(args.workspace or "")
            window = f" window_id: {row.id}." if args.open_in_new_window or args.window_id else ""
            return f"Switched to workspace {row.name!r}; roots: {_roots(rt)}; tab {svc.current().tab.name!r}.{window}"
        if a == "create":
            switch = args.switch_to_created or args.open_in_new_window
            row = svc.create(args.name or "", args.folder_path, switch=switch)
            msg = f"Created workspace {row.name!r} [id {row.id}]"
            if args.open_in_new_window:
                msg += f" (window_id {row.id})"
            if svc.ws_id == row.id:
                return msg + f"; switched to it (roots: {_roots(rt)})."
            if not row.folders:
                return msg + (
                    f' with no folders; add one with action="add_folder" workspace="{row.name}" '
                    "folder_path=..., then switch to it."
                )
            return msg + "."
        if a == "delete":
            row = svc.delete(args.workspace or "")
            return f"Deleted workspace {row.name!r} with its tabs, selections and prompts."
        if a == "add_folder":
            row, folder = svc.add_folder(args.folder_path or "", args.workspace)
            tail = f"; roots now: {_roots(rt)}" if row.id == svc.ws_id else ""
            return f"Added {folder.path} (root id {folder.root_id}) to workspace {row.name!r}{tail}."
        if a == "remove_folder":
            row = svc.remove_folder(args.folder_path or "", args.workspace)
            tail = f"; roots now: {_roots(rt)}" if row.id == svc.ws_id else ""
            return f"Removed {args.folder_path} from workspace {row.name!r}{tail}."
        if a == "list_tabs":
            return _tabs(svc, args.workspace)
        if a == "select_tab":
            tab = svc.select_tab(args.tab or "", focus=args.focus)
            return f"This connection now works on tab {tab.name!r}" + (" (now the active tab)." if args.focus else ".")
        if a == "create_tab":
            tab = svc.create_tab(
                args.name,
                mode=args.mode,
                source_tab=args.source_tab,
                bind=args.bind,
                focus=args.focus,
                auto_codemaps=bool(setting(rt, "code_maps.auto_codemap")),
            )
            how = "forked" if args.mode == "fork" else "blank"
            bound = "; this connection now works on it" if args.bind else ""
            active = "; it is the active tab" if args.focus else ""
            return f"Created {how} tab {tab.name!r} [id {tab.id}]{bound}{active}."
        tab = svc.close_tab(args.tab or "", allow_active=args.allow_active)
        return f"Closed tab {tab.name!r}; this connection works on tab {svc.current().tab.name!r}."

    return tool(
        manage_workspaces,
        description="Workspaces (named sets of root folders) and their tabs (each with its own selection and "
        "prompt): list, switch, create, delete, add/remove folders, open, select and close tabs. "
        "window_id is a workspace id.",
    )
