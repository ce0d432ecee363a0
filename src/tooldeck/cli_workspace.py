"""The person's own workspace commands: ``tooldeck workspace add|remove|list``.

Roots are set by the person (SPEC §3). These functions back the human-facing
CLI and edit stored workspaces without the trust-boundary check that
``manage_workspaces`` applies to the model: a folder added here is marked
``by_person``, so a server may restore it or switch to it even outside its
allowed parents. Nothing model-facing calls them.
"""

from __future__ import annotations

import os
import sqlite3

from tooldeck.core.errors import ErrorCode, ToolError
from tooldeck.state.tables import ContextDB, Folder, WorkspaceRow
from tooldeck.state.workspaces import _by_ref, _root_id, checked_folder


def _find(db: ContextDB, name: str) -> WorkspaceRow | None:
    return _by_ref(db.workspaces(), name)


def list_workspaces(db: ContextDB) -> str:
    rows = db.workspaces()
    if not rows:
        return "no stored workspaces"
    lines: list[str] = []
    for w in rows:
        launch = "  (launch workspace)" if w.launch_key else ""
        lines.append(f"{w.name}  [id {w.id}]{launch}")
        for f in w.folders:
            who = "added by you" if f.by_person else "start folder or added by a model"
            lines.append(f"  {f.path}  (root id {f.root_id}; {who})")
        if not w.folders:
            lines.append("  (no folders)")
    return "\n".join(lines)


def add_folder(db: ContextDB, name: str, folder: str) -> str:
    """Add ``folder`` to workspace ``name`` (created when missing), trusted."""
    real = checked_folder(os.path.abspath(folder))
    row = _find(db, name)
    if row is None:
        try:
            row = db.create_workspace(name.strip(), [Folder(real, _root_id(real, set()), by_person=True)])
        except sqlite3.IntegrityError as exc:  # pragma: no cover - a race with another process
            raise ToolError(ErrorCode.ALREADY_EXISTS, f"a workspace named {name!r} was just created") from exc
        return f"created workspace {row.name!r} with {real}"

    def change(folders: list[Folder]) -> list[Folder]:
        out, found = [], False
        for f in folders:
            if os.path.realpath(f.path) == real:
                found = True
                f = Folder(f.path, f.root_id, f.description, f.read_only, by_person=True)
            out.append(f)
        if not found:
            out.append(Folder(real, _root_id(real, {f.root_id for f in folders}), by_person=True))
        return out

    db.update_folders(row.id, change)
    return f"added {real} to workspace {row.name!r}"


def remove(db: ContextDB, name: str, folder: str | None) -> str:
    """Remove ``folder`` from workspace ``name``, or the whole workspace."""
    row = _find(db, name)
    if row is None:
        names = ", ".join(repr(w.name) for w in db.workspaces()) or "(none)"
        raise ToolError(ErrorCode.NOT_FOUND, f"no workspace {name!r}; stored workspaces: {names}")
    if folder is None:
        db.delete_workspace(row.id)
        return f"deleted workspace {row.name!r} with its tabs, selections and prompts"
    real = os.path.realpath(os.path.abspath(folder))

    def change(folders: list[Folder]) -> list[Folder]:
        keep = [f for f in folders if os.path.realpath(f.path) != real]
        if len(keep) == len(folders):
            raise ToolError(ErrorCode.NOT_FOUND, f"{real} is not a folder of {row.name!r}")
        return keep

    db.update_folders(row.id, change)
    return f"removed {real} from workspace {row.name!r}"
