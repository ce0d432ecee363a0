"""Persistence of chats (store domain ``chats``): a chat per conversation with
the built-in chat (``chat_send``), its messages, and the edits each reply made.

Chats belong to a workspace and the tab they were started in, so ``chats``
can list them per workspace or per tab (seed 004).
"""

from __future__ import annotations

import json
import time
from dataclasses import dataclass
from typing import Any

from tooldeck.store.db import Store

DOMAIN = "chats"
MIGRATIONS = [
    """
    CREATE TABLE chats (
        id TEXT PRIMARY KEY,
        name TEXT NOT NULL,
        workspace_id TEXT,
        tab_id TEXT,
        model TEXT,
        created REAL NOT NULL,
        updated REAL NOT NULL
    );
    CREATE INDEX chats_updated ON chats(updated);
    CREATE TABLE chat_messages (
        chat_id TEXT NOT NULL REFERENCES chats(id) ON DELETE CASCADE,
        seq INTEGER NOT NULL,
        role TEXT NOT NULL,
        mode TEXT NOT NULL,
        text TEXT NOT NULL,
        diffs TEXT,
        created REAL NOT NULL,
        PRIMARY KEY (chat_id, seq)
    );
    """,
]


@dataclass(frozen=True, slots=True)
class ChatRow:
    id: str
    name: str
    workspace_id: str | None
    tab_id: str | None
    model: str | None
    created: float
    updated: float
    message_count: int = 0


@dataclass(frozen=True, slots=True)
class ChatMessage:
    seq: int
    role: str
    mode: str
    text: str
    diffs: dict[str, Any] | None
    created: float


class ChatDB:
    def __init__(self, store: Store) -> None:
        self.store = store
        store.migrate(DOMAIN, MIGRATIONS)

    def create(self, cid: str, name: str, *, workspace_id: str | None, tab_id: str | None, model: str | None) -> None:
        now = time.time()
        with self.store.transaction() as db:
            db.execute("INSERT INTO chats(id, name, workspace_id, tab_id, model, created, updated) "
                       "VALUES(?,?,?,?,?,?,?)", (cid, name, workspace_id, tab_id, model, now, now))  # fmt: skip

    def get(self, cid: str) -> ChatRow | None:
        row = self.store.execute(_SELECT + " WHERE c.id=?", (cid,)).fetchone()
        return _chat(row) if row else None

    def latest(self, *, workspace_id: str | None, tab_id: str | None) -> ChatRow | None:
        rows = self.list(workspace_id=workspace_id, tab_id=tab_id, limit=1)
        return rows[0] if rows else None

    def list(self, *, workspace_id: str | None = None, tab_id: str | None = None, limit: int = 10) -> list[ChatRow]:
        where, params = [], []
        if workspace_id:
            where.append("c.workspace_id=?")
            params.append(workspace_id)
        if tab_id:
            where.append("c.tab_id=?")
            params.append(tab_id)
        clause = f" WHERE {' AND '.join(where)}" if where else ""
        rows = self.store.execute(_SELECT + clause + " ORDER BY c.updated DESC LIMIT ?", (*params, limit))
        return [_chat(r) for r in rows.fetchall()]

    def add(self, cid: str, role: str, mode: str, text: str, diffs: dict[str, Any] | None = None) -> int:
        now = time.time()
        with self.store.transaction() as db:
            seq = int(db.execute("SELECT COALESCE(MAX(seq), 0) + 1 FROM chat_messages WHERE chat_id=?",
                                 (cid,)).fetchone()[0])  # fmt: skip
            db.execute("INSERT INTO chat_messages(chat_id, seq, role, mode, text, diffs, created) "
                       "VALUES(?,?,?,?,?,?,?)",
                       (cid, seq, role, mode, text, json.dumps(diffs) if diffs else None, now))  # fmt: skip
            db.execute("UPDATE chats SET updated=? WHERE id=?", (now, cid))
        return seq

    def messages(self, cid: str, *, last: int | None = None) -> list[ChatMessage]:
        rows = self.store.execute(
            "SELECT seq, role, mode, text, diffs, created FROM chat_messages WHERE chat_id=? ORDER BY seq", (cid,)
        ).fetchall()
        out = [ChatMessage(r["seq"], r["role"], r["mode"], r["text"], json.loads(r["diffs"]) if r["diffs"] else None,
                           r["created"]) for r in rows]  # fmt: skip
        return out[-last:] if last else out


_SELECT = ("SELECT c.*, (SELECT COUNT(*) FROM chat_messages m WHERE m.chat_id=c.id) AS message_count "
           "FROM chats c")  # fmt: skip


def _chat(r: Any) -> ChatRow:
    return ChatRow(r["id"], r["name"], r["workspace_id"], r["tab_id"], r["model"], r["created"], r["updated"],
                   r["message_count"])  # fmt: skip
