"""Persistence of workspaces, tabs, selections and prompts (store domain ``context``).

Every statement that reads and then writes runs inside one ``BEGIN
IMMEDIATE`` transaction, so two processes on one state directory serialise
instead of losing an update. Selections use optimistic concurrency on top:
each tab has a ``version``; a writer saves only if the version it read is
still current (see :meth:`ContextDB.save_selection`), so the slow part of a
change (expanding folders, parsing codemaps) runs without holding the lock.
"""

from __future__ import annotations

import random
import sqlite3
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass

from tooldeck.state.selections import SelectedFile, Selection, ranges_from_json, ranges_to_json
from tooldeck.store.db import Store

DOMAIN = "context"
TOKEN_CACHE_ROWS = 200_000
MIGRATIONS = [
    """
    CREATE TABLE workspaces (
        id TEXT PRIMARY KEY,
        name TEXT NOT NULL UNIQUE COLLATE NOCASE,
        launch_key TEXT,
        active_tab TEXT,
        created REAL NOT NULL,
        updated REAL NOT NULL
    );
    CREATE INDEX workspaces_launch ON workspaces(launch_key);
    CREATE TABLE workspace_folders (
        workspace_id TEXT NOT NULL REFERENCES workspaces(id) ON DELETE CASCADE,
        position INTEGER NOT NULL,
        path TEXT NOT NULL,
        root_id TEXT NOT NULL,
        description TEXT NOT NULL DEFAULT '',
        read_only INTEGER NOT NULL DEFAULT 0,
        PRIMARY KEY (workspace_id, path)
    );
    CREATE TABLE tabs (
        id TEXT PRIMARY KEY,
        workspace_id TEXT NOT NULL REFERENCES workspaces(id) ON DELETE CASCADE,
        name TEXT NOT NULL COLLATE NOCASE,
        position INTEGER NOT NULL,
        prompt TEXT NOT NULL DEFAULT '',
        auto_codemaps INTEGER NOT NULL DEFAULT 1,
        version INTEGER NOT NULL DEFAULT 0,
        created REAL NOT NULL,
        UNIQUE (workspace_id, name)
    );
    CREATE TABLE selection (
        tab_id TEXT NOT NULL REFERENCES tabs(id) ON DELETE CASCADE,
        path TEXT NOT NULL,
        mode TEXT NOT NULL CHECK (mode IN ('full', 'slices', 'codemap')),
        ranges TEXT,
        auto INTEGER NOT NULL DEFAULT 0,
        PRIMARY KEY (tab_id, path)
    );
    CREATE TABLE bindings (
        launch_key TEXT NOT NULL,
        workspace_id TEXT NOT NULL REFERENCES workspaces(id) ON DELETE CASCADE,
        tab_id TEXT NOT NULL,
        PRIMARY KEY (launch_key, workspace_id)
    );
    CREATE TABLE token_counts (
        key TEXT PRIMARY KEY,
        tokens INTEGER NOT NULL
    );
    """,
    # v2: folders the person added with `tooldeck workspace add` (trusted like a
    # launch root); folders added by model-facing tools stay confined to the
    # allowed parents of whichever process restores them
    "ALTER TABLE workspace_folders ADD COLUMN by_person INTEGER NOT NULL DEFAULT 0;",
]


@dataclass(frozen=True, slots=True)
class Folder:
    path: str
    root_id: str
    description: str = ""
    read_only: bool = False
    by_person: bool = False


@dataclass(frozen=True, slots=True)
class WorkspaceRow:
    id: str
    name: str
    launch_key: str | None
    active_tab: str | None
    folders: tuple[Folder, ...]


@dataclass(frozen=True, slots=True)
class TabRow:
    id: str
    workspace_id: str
    name: str
    position: int
    auto_codemaps: bool
    version: int


def new_id() -> str:
    import uuid  # on the first new row: a start that only reads does not load it

    return str(uuid.uuid4())


class ContextDB:
    def __init__(self, store: Store) -> None:
        self.store = store
        store.migrate(DOMAIN, MIGRATIONS)

    # workspaces ---------------------------------------------------------------
    def _folders(self, db: sqlite3.Connection, ws_id: str) -> tuple[Folder, ...]:
        rows = db.execute(
            "SELECT path, root_id, description, read_only, by_person FROM workspace_folders "
            "WHERE workspace_id=? ORDER BY position",
            (ws_id,),
        ).fetchall()
        return tuple(
            Folder(r["path"], r["root_id"], r["description"], bool(r["read_only"]), bool(r["by_person"])) for r in rows
        )

    def _ws(self, db: sqlite3.Connection, row: sqlite3.Row | None) -> WorkspaceRow | None:
        if row is None:
            return None
        return WorkspaceRow(row["id"], row["name"], row["launch_key"], row["active_tab"], self._folders(db, row["id"]))

    def workspaces(self) -> list[WorkspaceRow]:
        with self.store.lease() as db:
            rows = db.execute("SELECT * FROM workspaces ORDER BY name COLLATE NOCASE").fetchall()
            return [w for w in (self._ws(db, r) for r in rows) if w is not None]

    def workspace(self, ws_id: str) -> WorkspaceRow | None:
        with self.store.lease() as db:
            return self._ws(db, db.execute("SELECT * FROM workspaces WHERE id=?", (ws_id,)).fetchone())

    def workspace_by_launch(self, launch_key: str) -> WorkspaceRow | None:
        with self.store.lease() as db:
            row = db.execute("SELECT * FROM workspaces WHERE launch_key=? ORDER BY created LIMIT 1", (launch_key,))
            return self._ws(db, row.fetchone())

    def create_workspace(
        self, name: str, folders: Sequence[Folder], *, launch_key: str | None = None, unique_name: bool = False
    ) -> WorkspaceRow:
        """A workspace with one blank tab. ``unique_name`` appends " (2)", " (3)"...
        when ``name`` is taken (automatic names); otherwise a taken name raises
        ``sqlite3.IntegrityError``."""
        now = time.time()
        ws_id, tab_id = new_id(), new_id()
        with self.store.transaction() as db:
            if launch_key is not None:  # another process may have created it meanwhile
                existing = db.execute("SELECT id FROM workspaces WHERE launch_key=? LIMIT 1", (launch_key,))
                row = existing.fetchone()
                if row is not None:
                    found = self._ws(db, db.execute("SELECT * FROM workspaces WHERE id=?", (row["id"],)).fetchone())
                    assert found is not None
                    return found
            candidate, n = name, 2
            while unique_name and db.execute("SELECT 1 FROM workspaces WHERE name=?", (candidate,)).fetchone():
                candidate, n = f"{name} ({n})", n + 1
            db.execute(
                "INSERT INTO workspaces(id, name, launch_key, active_tab, created, updated) VALUES(?,?,?,?,?,?)",
                (ws_id, candidate, launch_key, tab_id, now, now),
            )
            self._write_folders(db, ws_id, folders)
            db.execute(
                "INSERT INTO tabs(id, workspace_id, name, position, created) VALUES(?,?,?,?,?)",
                (tab_id, ws_id, "Tab 1", 1, now),
            )
            found = self._ws(db, db.execute("SELECT * FROM workspaces WHERE id=?", (ws_id,)).fetchone())
        assert found is not None
        return found

    def _write_folders(self, db: sqlite3.Connection, ws_id: str, folders: Sequence[Folder]) -> None:
        db.execute("DELETE FROM workspace_folders WHERE workspace_id=?", (ws_id,))
        db.executemany(
            "INSERT INTO workspace_folders(workspace_id, position, path, root_id, description, read_only, by_person) "
            "VALUES(?,?,?,?,?,?,?)",
            [
                (ws_id, i, f.path, f.root_id, f.description, int(f.read_only), int(f.by_person))
                for i, f in enumerate(folders)
            ],
        )

    def set_folders(self, ws_id: str, folders: Sequence[Folder]) -> None:
        with self.store.transaction() as db:
            self._write_folders(db, ws_id, folders)
            db.execute("UPDATE workspaces SET updated=? WHERE id=?", (time.time(), ws_id))

    def update_folders(self, ws_id: str, change: Callable[[list[Folder]], list[Folder]]) -> tuple[Folder, ...]:
        """Read, change and write a workspace's folder list in one transaction
        (``change`` may raise to abort without writing)."""
        with self.store.transaction() as db:
            folders = change(list(self._folders(db, ws_id)))
            self._write_folders(db, ws_id, folders)
            db.execute("UPDATE workspaces SET updated=? WHERE id=?", (time.time(), ws_id))
        return tuple(folders)

    def delete_workspace(self, ws_id: str) -> None:
        with self.store.transaction() as db:
            db.execute("DELETE FROM workspaces WHERE id=?", (ws_id,))

    def set_active_tab(self, ws_id: str, tab_id: str) -> None:
        with self.store.transaction() as db:
            db.execute("UPDATE workspaces SET active_tab=?, updated=? WHERE id=?", (tab_id, time.time(), ws_id))

    # tabs ---------------------------------------------------------------------
    @staticmethod
    def _tab(row: sqlite3.Row | None) -> TabRow | None:
        if row is None:
            return None
        return TabRow(
            row["id"], row["workspace_id"], row["name"], row["position"], bool(row["auto_codemaps"]), row["version"]
        )

    def tabs(self, ws_id: str) -> list[TabRow]:
        rows = self.store.execute("SELECT * FROM tabs WHERE workspace_id=? ORDER BY position", (ws_id,)).fetchall()
        return [t for t in (self._tab(r) for r in rows) if t is not None]

    def tab_stats(self, ws_id: str) -> dict[str, tuple[int, int]]:
        """tab id -> (selected files, prompt length)."""
        rows = self.store.execute(
            "SELECT t.id, length(t.prompt) AS plen, (SELECT COUNT(*) FROM selection s WHERE s.tab_id=t.id) AS n "
            "FROM tabs t WHERE t.workspace_id=?",
            (ws_id,),
        ).fetchall()
        return {r["id"]: (int(r["n"]), int(r["plen"])) for r in rows}

    def tab(self, tab_id: str) -> TabRow | None:
        return self._tab(self.store.execute("SELECT * FROM tabs WHERE id=?", (tab_id,)).fetchone())

    def create_tab(self, ws_id: str, name: str | None, *, auto_codemaps: bool, fork_from: str | None = None) -> TabRow:
        """A new tab, blank or a copy (selection, prompt, auto flag) of ``fork_from``."""
        tab_id = new_id()
        with self.store.transaction() as db:
            pos = db.execute("SELECT COALESCE(MAX(position), 0) + 1 FROM tabs WHERE workspace_id=?", (ws_id,))
            position = int(pos.fetchone()[0])
            if name is None:
                n = position
                while db.execute("SELECT 1 FROM tabs WHERE workspace_id=? AND name=?", (ws_id, f"Tab {n}")).fetchone():
                    n += 1
                name = f"Tab {n}"
            prompt = ""
            if fork_from is not None:
                src = db.execute("SELECT prompt, auto_codemaps FROM tabs WHERE id=?", (fork_from,)).fetchone()
                prompt, auto_codemaps = src["prompt"], bool(src["auto_codemaps"])
            db.execute(
                "INSERT INTO tabs(id, workspace_id, name, position, prompt, auto_codemaps, created) "
                "VALUES(?,?,?,?,?,?,?)",
                (tab_id, ws_id, name, position, prompt, int(auto_codemaps), time.time()),
            )
            if fork_from is not None:
                db.execute(
                    "INSERT INTO selection(tab_id, path, mode, ranges, auto) "
                    "SELECT ?, path, mode, ranges, auto FROM selection WHERE tab_id=?",
                    (tab_id, fork_from),
                )
            row = self._tab(db.execute("SELECT * FROM tabs WHERE id=?", (tab_id,)).fetchone())
        assert row is not None
        return row

    def delete_tab(self, tab_id: str) -> None:
        with self.store.transaction() as db:
            db.execute("DELETE FROM tabs WHERE id=?", (tab_id,))
            db.execute("DELETE FROM bindings WHERE tab_id=?", (tab_id,))

    # bindings: the tab processes launched on some directories last used --------
    def binding(self, launch_key: str, ws_id: str) -> str | None:
        row = self.store.execute(
            "SELECT tab_id FROM bindings WHERE launch_key=? AND workspace_id=?", (launch_key, ws_id)
        ).fetchone()
        return row["tab_id"] if row else None

    def bind(self, launch_key: str, ws_id: str, tab_id: str) -> None:
        with self.store.transaction() as db:
            db.execute(
                "INSERT INTO bindings(launch_key, workspace_id, tab_id) VALUES(?,?,?) "
                "ON CONFLICT(launch_key, workspace_id) DO UPDATE SET tab_id=excluded.tab_id",
                (launch_key, ws_id, tab_id),
            )

    # prompt -------------------------------------------------------------------
    def prompt(self, tab_id: str) -> str:
        row = self.store.execute("SELECT prompt FROM tabs WHERE id=?", (tab_id,)).fetchone()
        return row["prompt"] if row else ""

    def set_prompt(self, tab_id: str, text: str) -> str:
        with self.store.transaction() as db:
            db.execute("UPDATE tabs SET prompt=? WHERE id=?", (text, tab_id))
        return text

    def append_prompt(self, tab_id: str, text: str) -> str:
        """Append in one statement (no lost update between two appenders); a
        newline separates the new text from a prompt that does not end in one."""
        with self.store.transaction() as db:
            db.execute(
                "UPDATE tabs SET prompt = prompt || CASE WHEN prompt = '' OR substr(prompt, -1) = char(10) "
                "THEN '' ELSE char(10) END || ? WHERE id=?",
                (text, tab_id),
            )
            row = db.execute("SELECT prompt FROM tabs WHERE id=?", (tab_id,)).fetchone()
        return row["prompt"] if row else ""

    # selection ----------------------------------------------------------------
    def load_selection(self, tab_id: str) -> tuple[Selection, int]:
        """The tab's selection and the version it was read at (one snapshot)."""
        with self.store.lease() as conn:
            own = not conn.in_transaction
            if own:
                conn.execute("BEGIN")  # one read snapshot: the rows and the version agree
            try:
                tab = conn.execute("SELECT auto_codemaps, version FROM tabs WHERE id=?", (tab_id,)).fetchone()
                rows = conn.execute("SELECT path, mode, ranges, auto FROM selection WHERE tab_id=?", (tab_id,))
                rows = rows.fetchall()
            finally:
                if own:
                    conn.execute("COMMIT")
        if tab is None:
            return Selection(), -1
        files = {
            r["path"]: SelectedFile(r["path"], r["mode"], ranges_from_json(r["ranges"]), bool(r["auto"])) for r in rows
        }
        return Selection(files, bool(tab["auto_codemaps"])), int(tab["version"])

    def save_selection(self, tab_id: str, selection: Selection, expected_version: int | None) -> bool:
        """Replace the tab's selection if its version is still ``expected_version``
        (``None`` = unconditionally). False when another writer got there first."""
        with self.store.transaction() as db:
            row = db.execute("SELECT version FROM tabs WHERE id=?", (tab_id,)).fetchone()
            if row is None:
                return False
            if expected_version is not None and row["version"] != expected_version:
                return False
            db.execute("DELETE FROM selection WHERE tab_id=?", (tab_id,))
            db.executemany(
                "INSERT INTO selection(tab_id, path, mode, ranges, auto) VALUES(?,?,?,?,?)",
                [(tab_id, f.path, f.mode, ranges_to_json(f.ranges), int(f.auto)) for f in selection.files.values()],
            )
            db.execute(
                "UPDATE tabs SET auto_codemaps=?, version=version+1 WHERE id=?",
                (int(selection.auto_codemaps), tab_id),
            )
        return True

    def selected_paths(self, tab_id: str) -> list[str]:
        rows = self.store.execute("SELECT path FROM selection WHERE tab_id=? ORDER BY path", (tab_id,)).fetchall()
        return [r["path"] for r in rows]

    # token counts cache -----------------------------------------------------------
    def token_counts(self, keys: Sequence[str]) -> dict[str, int]:
        out: dict[str, int] = {}
        with self.store.lease() as db:
            for i in range(0, len(keys), 500):
                chunk = list(keys[i : i + 500])
                marks = ",".join("?" * len(chunk))
                for r in db.execute(f"SELECT key, tokens FROM token_counts WHERE key IN ({marks})", chunk):
                    out[r["key"]] = int(r["tokens"])
            return out

    def save_token_counts(self, counts: dict[str, int]) -> None:
        if not counts:
            return
        with self.store.transaction() as db:
            db.executemany("INSERT OR REPLACE INTO token_counts(key, tokens) VALUES(?, ?)", list(counts.items()))
            if random.random() < 0.02:  # keep the cache bounded: drop the oldest rows
                db.execute(
                    "DELETE FROM token_counts WHERE rowid <= (SELECT MAX(rowid) FROM token_counts) - ?",
                    (TOKEN_CACHE_ROWS,),
                )
