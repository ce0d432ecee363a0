"""Persistence of agent sessions and their transcripts (store domain ``agents``).

Why the store and not memory: a session outlives its run (``steer`` starts a
new run in the same session), its transcript outlives the server (a restart
marks the runs it interrupted as failed with ``process_crash`` and keeps the
log), and a second process (the dashboard, ``tooldeck call``) reads the same
sessions. Transcript entries are appended one row each, numbered per session
inside one transaction, so concurrent sessions never lose or duplicate one.
"""

from __future__ import annotations

import json
import os
import time
from dataclasses import dataclass
from typing import Any

from tooldeck.store.db import Store

DOMAIN = "agents"
MIGRATIONS = [
    """
    CREATE TABLE agent_sessions (
        id TEXT PRIMARY KEY,
        name TEXT NOT NULL,
        tab_id TEXT,
        parent_session_id TEXT,
        agent_id TEXT,
        model TEXT,
        workflow TEXT,
        policy TEXT NOT NULL DEFAULT 'auto',
        status TEXT NOT NULL DEFAULT 'idle',
        status_text TEXT NOT NULL DEFAULT '',
        failure_reason TEXT,
        assistant_text TEXT NOT NULL DEFAULT '',
        mcp_originated INTEGER NOT NULL DEFAULT 1,
        owner_pid INTEGER,
        runs INTEGER NOT NULL DEFAULT 0,
        created REAL NOT NULL,
        updated REAL NOT NULL
    );
    CREATE INDEX agent_sessions_updated ON agent_sessions(updated);
    CREATE TABLE agent_items (
        session_id TEXT NOT NULL REFERENCES agent_sessions(id) ON DELETE CASCADE,
        seq INTEGER NOT NULL,
        run INTEGER NOT NULL,
        kind TEXT NOT NULL,
        role TEXT,
        name TEXT,
        call_id TEXT,
        text TEXT NOT NULL,
        is_error INTEGER NOT NULL DEFAULT 0,
        created REAL NOT NULL,
        PRIMARY KEY (session_id, seq)
    );
    """,
    # a session may run on a named workspace (not the server's current one) and offer
    # only some tools (the chat TUI: the conversation's declared built-ins), JSON list
    """
    ALTER TABLE agent_sessions ADD COLUMN workspace TEXT;
    ALTER TABLE agent_sessions ADD COLUMN tools TEXT;
    """,
    # the owner's start time (clock ticks since boot, /proc/PID/stat field 22):
    # with the pid it names one process, so a reused pid is not taken for the owner
    "ALTER TABLE agent_sessions ADD COLUMN owner_start INTEGER;",
]

ACTIVE = ("running", "waiting_for_input")


@dataclass(frozen=True, slots=True)
class SessionRow:
    id: str
    name: str
    tab_id: str | None
    parent_session_id: str | None
    agent_id: str | None
    model: str | None
    workflow: str | None
    policy: str
    status: str
    status_text: str
    failure_reason: str | None
    assistant_text: str
    mcp_originated: bool
    owner_pid: int | None
    runs: int
    created: float
    updated: float
    item_count: int = 0
    workspace: str | None = None  # a workspace name: the session's roots (None: the server's current)
    tools: str | None = None  # JSON list of the tool names offered (None: every agent tool)
    owner_start: int | None = None


# One transcript item as stored: (kind, role, name, call_id, text, is_error).
# Plain values: the model loop's types are converted in ``agents/items.py``,
# so persistence never imports the model loop.
ItemFields = tuple[str, str | None, str | None, str | None, str, bool]


@dataclass(frozen=True, slots=True)
class ItemRow:
    seq: int
    run: int
    kind: str  # message | reasoning | call | result
    role: str | None
    name: str | None
    call_id: str | None
    text: str
    is_error: bool
    created: float


def process_start(pid: int) -> int | None:
    """When process ``pid`` started (clock ticks since boot), or None when it
    is gone or /proc is not there. Why: a pid is reused once its process is
    gone, and the pair (pid, start) names one process for the machine's uptime."""
    try:
        with open(f"/proc/{pid}/stat", "rb") as fh:
            stat = fh.read()
    except OSError:
        return None
    try:  # the name (field 2) may hold spaces and parentheses: count after the last ')'
        return int(stat[stat.rindex(b")") + 2 :].split()[19])
    except (ValueError, IndexError):
        return None


def owner_fields() -> dict[str, int | None]:
    """The columns that name this process as a session's owner."""
    return {"owner_pid": os.getpid(), "owner_start": process_start(os.getpid())}


def owner_alive(pid: int | None, start: int | None) -> bool:
    """Is the process that owns a session still running? A live pid whose start
    time differs from the recorded one is another process that reused the pid.
    A row without a start time (written before it was recorded) or a machine
    without /proc falls back to the pid alone."""
    if not pid:
        return False
    now = process_start(pid)
    if start is not None and now is not None:
        return now == start
    if pid == os.getpid():
        return True
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True


class AgentDB:
    def __init__(self, store: Store) -> None:
        self.store = store
        store.migrate(DOMAIN, MIGRATIONS)

    # sessions ---------------------------------------------------------------
    def create(self, sid: str, name: str, **fields: Any) -> SessionRow:
        now = time.time()
        cols = {"id": sid, "name": name, "created": now, "updated": now, **fields}
        keys = ", ".join(cols)
        marks = ", ".join("?" for _ in cols)
        with self.store.transaction() as db:
            db.execute(f"INSERT INTO agent_sessions({keys}) VALUES({marks})", tuple(cols.values()))
        row = self.get(sid)
        assert row is not None
        return row

    def update(self, sid: str, **fields: Any) -> None:
        fields["updated"] = time.time()
        sets = ", ".join(f"{k}=?" for k in fields)
        with self.store.transaction() as db:
            db.execute(f"UPDATE agent_sessions SET {sets} WHERE id=?", (*fields.values(), sid))

    def get(self, sid: str) -> SessionRow | None:
        row = self.store.execute(
            "SELECT s.*, (SELECT COUNT(*) FROM agent_items i WHERE i.session_id=s.id) AS item_count "
            "FROM agent_sessions s WHERE id=?",
            (sid,),
        ).fetchone()
        return _session(row) if row else None

    def list(self, *, limit: int = 20, state: str | None = None, parent: str | None = None) -> list[SessionRow]:
        where, params = [], []
        if state:
            where.append("status=?")
            params.append(state)
        if parent:
            where.append("parent_session_id=?")
            params.append(parent)
        clause = f"WHERE {' AND '.join(where)}" if where else ""
        rows = self.store.execute(
            "SELECT s.*, (SELECT COUNT(*) FROM agent_items i WHERE i.session_id=s.id) AS item_count "
            f"FROM agent_sessions s {clause} ORDER BY updated DESC LIMIT ?",
            (*params, limit),
        ).fetchall()
        return [_session(r) for r in rows]

    def delete(self, sid: str) -> bool:
        with self.store.transaction() as db:
            return db.execute("DELETE FROM agent_sessions WHERE id=?", (sid,)).rowcount > 0

    def recover(self) -> list[str]:
        """Sessions left running by a process that is gone: failed, process_crash."""
        rows = self.store.execute(
            f"SELECT id, owner_pid, owner_start FROM agent_sessions WHERE status IN ({','.join('?' * len(ACTIVE))})",
            ACTIVE,
        ).fetchall()
        dead = [r["id"] for r in rows if not owner_alive(r["owner_pid"], r["owner_start"])]
        for sid in dead:
            self.update(
                sid,
                status="failed",
                failure_reason="process_crash",
                status_text="interrupted: the server that ran this session stopped",
            )
        return dead

    # transcript -------------------------------------------------------------
    def append(self, sid: str, run: int, fields: ItemFields) -> int:
        kind, role, name, call_id, text, is_error = fields
        with self.store.transaction() as db:
            row = db.execute("SELECT COALESCE(MAX(seq), 0) + 1 AS n FROM agent_items WHERE session_id=?", (sid,))
            seq = int(row.fetchone()["n"])
            db.execute(
                "INSERT INTO agent_items(session_id, seq, run, kind, role, name, call_id, text, is_error, created) "
                "VALUES(?,?,?,?,?,?,?,?,?,?)",
                (sid, seq, run, kind, role, name, call_id, text, int(is_error), time.time()),
            )
        return seq

    def items(self, sid: str, *, offset: int = 0, limit: int | None = None) -> list[ItemRow]:
        rows = self.store.execute(
            "SELECT seq, run, kind, role, name, call_id, text, is_error, created FROM agent_items "
            "WHERE session_id=? ORDER BY seq LIMIT ? OFFSET ?",
            (sid, -1 if limit is None else limit, offset),
        ).fetchall()
        return [ItemRow(r["seq"], r["run"], r["kind"], r["role"], r["name"], r["call_id"], r["text"],
                        bool(r["is_error"]), r["created"]) for r in rows]  # fmt: skip


def _session(r: Any) -> SessionRow:
    return SessionRow(
        r["id"], r["name"], r["tab_id"], r["parent_session_id"], r["agent_id"], r["model"], r["workflow"],
        r["policy"], r["status"], r["status_text"], r["failure_reason"], r["assistant_text"], bool(r["mcp_originated"]),
        r["owner_pid"], r["runs"], r["created"], r["updated"], r["item_count"], r["workspace"], r["tools"],
        r["owner_start"],
    )  # fmt: skip


def dumps(value: Any) -> str:
    return json.dumps(value, ensure_ascii=False)
