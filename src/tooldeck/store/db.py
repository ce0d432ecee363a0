"""The SQLite store: state that must outlive a process.

One database file (WAL) under the state directory. Each domain (codemaps,
selection, settings, ...) declares its own ordered list of migrations and calls
:meth:`Store.migrate` once; applied versions are recorded per domain, so
domains evolve independently. Migrations run inside ``BEGIN IMMEDIATE``, which
serialises two processes starting on the same state directory.

Connections are per thread (a connection is used by the thread that opened
it); :meth:`Store.close` closes them all, so a host shutting down (or a test)
leaves no open database handle behind. Every connection uses WAL,
``synchronous=NORMAL`` and a busy timeout so concurrent writers wait instead
of failing.
"""

from __future__ import annotations

import os
import sqlite3
import threading
import time
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from pathlib import Path

from tooldeck.statedir import resolve_state_dir

DB_NAME = "tooldeck.sqlite3"
BUSY_TIMEOUT_MS = 10_000


def default_state_dir() -> Path:
    return Path(resolve_state_dir())


class Store:
    def __init__(self, state_dir: str | os.PathLike[str] | None = None, *, name: str = DB_NAME) -> None:
        """``name``: the database file; a domain whose bulk writes would hold
        the main store's write lock for long (the term index) keeps its own."""
        self.state_dir = Path(state_dir) if state_dir is not None else default_state_dir()
        self.state_dir.mkdir(parents=True, exist_ok=True)
        self.path = self.state_dir / name
        self._local = threading.local()
        self._conns: list[sqlite3.Connection] = []  # every thread's, for close()
        self._generation = 0  # bumped by close(): a thread's cached connection is then stale
        self._conns_lock = threading.Lock()
        self._migrated: set[str] = set()
        self._lock = threading.Lock()
        with self.transaction() as db:
            db.execute("CREATE TABLE IF NOT EXISTS schema_versions (domain TEXT PRIMARY KEY, version INTEGER NOT NULL)")

    # connections ------------------------------------------------------------
    def connect(self) -> sqlite3.Connection:
        conn: sqlite3.Connection | None = getattr(self._local, "conn", None)
        if conn is None or getattr(self._local, "generation", -1) != self._generation:
            # check_same_thread=False only so close() may close it from another thread
            conn = sqlite3.connect(
                self.path, timeout=BUSY_TIMEOUT_MS / 1000, isolation_level=None, check_same_thread=False
            )
            conn.row_factory = sqlite3.Row
            conn.execute(f"PRAGMA busy_timeout={BUSY_TIMEOUT_MS}")
            _enable_wal(conn)
            conn.execute("PRAGMA synchronous=NORMAL")
            conn.execute("PRAGMA foreign_keys=ON")
            self._local.conn = conn
            self._local.generation = self._generation
            with self._conns_lock:
                self._conns.append(conn)
        return conn

    @contextmanager
    def transaction(self, immediate: bool = True) -> Iterator[sqlite3.Connection]:
        """A write transaction (``BEGIN IMMEDIATE`` takes the write lock up front,
        so two processes never deadlock upgrading read locks)."""
        conn = self.connect()
        if conn.in_transaction:  # nested use joins the outer transaction
            yield conn
            return
        conn.execute("BEGIN IMMEDIATE" if immediate else "BEGIN")
        try:
            yield conn
        except BaseException:
            conn.execute("ROLLBACK")
            raise
        conn.execute("COMMIT")

    def execute(self, sql: str, params: Sequence[object] | dict[str, object] = ()) -> sqlite3.Cursor:
        return self.connect().execute(sql, params)

    # migrations ---------------------------------------------------------------
    def migrate(self, domain: str, migrations: Sequence[str]) -> int:
        """Apply ``migrations[v:]`` for ``domain`` where ``v`` is its recorded
        version; each entry is one SQL script. Returns the new version."""
        if domain in self._migrated:
            return len(migrations)
        with self._lock, self.transaction() as db:
            row = db.execute("SELECT version FROM schema_versions WHERE domain=?", (domain,)).fetchone()
            version = row["version"] if row else 0
            if version > len(migrations):
                raise RuntimeError(
                    f"state database {self.path} has {domain} schema v{version}, newer than this tooldeck "
                    f"(v{len(migrations)}); upgrade tooldeck or use another TOOLDECK_STATE_DIR"
                )
            for script in migrations[version:]:
                for statement in _statements(script):
                    db.execute(statement)
            db.execute(
                "INSERT INTO schema_versions(domain, version) VALUES(?, ?) "
                "ON CONFLICT(domain) DO UPDATE SET version=excluded.version",
                (domain, len(migrations)),
            )
            self._migrated.add(domain)
        return len(migrations)

    def version(self, domain: str) -> int:
        row = self.execute("SELECT version FROM schema_versions WHERE domain=?", (domain,)).fetchone()
        return row["version"] if row else 0

    def close(self) -> None:
        """Close every thread's connection; a later use opens a fresh one."""
        with self._conns_lock:
            conns, self._conns = self._conns, []
            self._generation += 1
        for conn in conns:
            conn.close()
        self._local.conn = None


def _enable_wal(conn: sqlite3.Connection) -> None:
    """Switch to WAL. Two processes opening a new database at once can both
    try; the switch needs an exclusive lock for which SQLite may answer
    "database is locked" at once, without waiting on the busy handler, so
    retry for a while."""
    deadline = time.monotonic() + BUSY_TIMEOUT_MS / 1000
    while True:
        try:
            conn.execute("PRAGMA journal_mode=WAL")
            return
        except sqlite3.OperationalError as exc:
            if ("locked" not in str(exc) and "busy" not in str(exc)) or time.monotonic() > deadline:
                raise
            time.sleep(0.02)


def _statements(script: str) -> list[str]:
    """Split a migration script into statements (sqlite3.complete_statement
    knows about strings and triggers, so a ';' inside them is safe)."""
    out: list[str] = []
    buf = ""
    for line in script.splitlines(keepends=True):
        buf += line
        if sqlite3.complete_statement(buf):
            if buf.strip():
                out.append(buf.strip())
            buf = ""
    if buf.strip():
        out.append(buf.strip())
    return out
