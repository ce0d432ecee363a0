"""The SQLite store: state that must outlive a process.

One database file (WAL) under the state directory. Each domain (codemaps,
selection, settings, ...) declares its own ordered list of migrations and calls
:meth:`Store.migrate` once; applied versions are recorded per domain, so
domains evolve independently. Migrations run inside ``BEGIN IMMEDIATE``, which
serialises two processes starting on the same state directory.

Connections come from a small pool and are *leased* to a thread: the first
use in a thread (:meth:`Store.connect`, :meth:`Store.execute`) leases one,
which stays the thread's until it is released — by :meth:`Store.release`, at
the end of a :meth:`Store.lease` or outermost :meth:`Store.transaction` block
that leased it, after every job of a worker thread
(:data:`tooldeck.core.workers.WORKERS` calls :func:`release_thread`), or when
the thread ends. A released connection goes back to the pool (at most
:data:`POOL_IDLE` are kept open); the rest are closed. So the open
connections are bounded by the threads using the store at that moment plus
the pool, never by the threads that ever did (a server that had thousands of
calls cancelled keeps a handful). :meth:`Store.close` closes them all, so a
host shutting down (or a test) leaves no open database handle behind. Every
connection uses WAL, ``synchronous=NORMAL`` and a busy timeout so concurrent
writers wait instead of failing.
"""

from __future__ import annotations

import os
import sqlite3
import threading
import time
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from pathlib import Path

from tooldeck.core.workers import AFTER_JOB
from tooldeck.statedir import resolve_state_dir

DB_NAME = "tooldeck.sqlite3"
BUSY_TIMEOUT_MS = 10_000
POOL_IDLE = 2  # connections kept open per store while none is leased
_held = threading.local()  # .stores: the stores this thread holds a lease of (for release_thread)


class _Lease:
    """A thread's connection. Kept only in the thread's ``threading.local``,
    so when the thread ends the lease is dropped and gives its connection
    back (``__del__`` then runs in whichever thread frees it)."""

    __slots__ = ("conn", "generation", "store")

    def __init__(self, store: Store, conn: sqlite3.Connection, generation: int) -> None:
        self.store = store
        self.conn: sqlite3.Connection | None = conn
        self.generation = generation

    def give_back(self) -> None:
        conn, self.conn = self.conn, None
        if conn is not None:
            self.store._give_back(conn, self.generation)

    def __del__(self) -> None:
        try:
            self.give_back()
        except Exception:  # interpreter shutdown, a closed store: nothing to return to
            pass


def release_thread() -> None:
    """Release every lease the calling thread holds (a worker thread calls
    this after each job: a cancelled or finished call keeps no connection)."""
    stores: list[Store] | None = getattr(_held, "stores", None)
    if not stores:
        return
    _held.stores = []
    for store in stores:
        store.release()


AFTER_JOB.append(release_thread)


def default_state_dir() -> Path:
    return Path(resolve_state_dir())


class Store:
    def __init__(self, state_dir: str | os.PathLike[str] | None = None, *, name: str = DB_NAME) -> None:
        """``name``: the database file; a domain whose bulk writes would hold
        the main store's write lock for long (the term index) keeps its own."""
        self.state_dir = Path(state_dir) if state_dir is not None else default_state_dir()
        self.state_dir.mkdir(parents=True, exist_ok=True)
        self.path = self.state_dir / name
        self._local = threading.local()  # .lease: this thread's _Lease
        self._open: set[sqlite3.Connection] = set()  # every open connection (leased or idle), for close()
        self._idle: list[sqlite3.Connection] = []  # released, ready for the next lease
        self._generation = 0  # bumped by close(): a lease of an earlier generation is stale
        self._leased = 0  # leases out now
        self._conns_lock = threading.Lock()
        self._migrated: set[str] = set()
        self._lock = threading.Lock()
        with self.transaction() as db:
            db.execute("CREATE TABLE IF NOT EXISTS schema_versions (domain TEXT PRIMARY KEY, version INTEGER NOT NULL)")

    # connections ------------------------------------------------------------
    def connect(self) -> sqlite3.Connection:
        """The calling thread's connection, leased from the pool on first use
        and kept until :meth:`release` (or the end of a worker's job, or of
        the thread). Prefer :meth:`lease`, which gives it back at once."""
        lease: _Lease | None = getattr(self._local, "lease", None)
        if lease is not None and lease.conn is not None and lease.generation == self._generation:
            return lease.conn
        with self._conns_lock:
            generation = self._generation
            conn = self._idle.pop() if self._idle else None
            # counted before a new connection is opened: the pool never closes its idle batch while
            # one is being opened (SQLite would keep the closed ones' descriptors until that one closes)
            self._leased += 1
        if conn is None:
            try:
                conn = self._open_connection()
            except BaseException:
                with self._conns_lock:
                    self._leased -= 1
                raise
            with self._conns_lock:
                self._open.add(conn)
        self._local.lease = _Lease(self, conn, generation)
        stores = getattr(_held, "stores", None)
        if stores is None:
            stores = _held.stores = []
        if self not in stores:
            stores.append(self)
        return conn

    def _open_connection(self) -> sqlite3.Connection:
        # check_same_thread=False: a connection serves one thread at a time, but
        # not always the same one (the pool), and close() may close it from another
        conn = sqlite3.connect(self.path, timeout=BUSY_TIMEOUT_MS / 1000, isolation_level=None, check_same_thread=False)
        conn.row_factory = sqlite3.Row
        conn.execute(f"PRAGMA busy_timeout={BUSY_TIMEOUT_MS}")
        _enable_wal(conn)
        conn.execute("PRAGMA synchronous=NORMAL")
        conn.execute("PRAGMA foreign_keys=ON")
        return conn

    def holds_lease(self) -> bool:
        lease: _Lease | None = getattr(self._local, "lease", None)
        return lease is not None and lease.conn is not None and lease.generation == self._generation

    def release(self) -> None:
        """Give the calling thread's connection back to the pool (a no-op
        without a lease; kept while a transaction is open on it)."""
        lease: _Lease | None = getattr(self._local, "lease", None)
        if lease is None or (lease.conn is not None and lease.conn.in_transaction):
            return
        self._local.lease = None
        lease.give_back()

    def _give_back(self, conn: sqlite3.Connection, generation: int) -> None:
        """Back to the pool. Connections are not closed one by one: in WAL mode
        each holds a shared lock on the database file, and SQLite keeps the
        descriptor of a connection closed while another holds a lock open
        until they all close. So the pool keeps what a burst opened and, once
        no connection is leased and it holds more than :data:`POOL_IDLE`,
        closes them all at once (the descriptors go with them), under the
        pool's lock: a thread leasing meanwhile would open a connection while
        the batch is half closed, and the rest of the batch would then keep
        their descriptors (a test saw 4 on the file with 2 connections open)."""
        with self._conns_lock:
            self._leased -= 1
            stale = generation != self._generation or conn not in self._open
            if not stale and conn.in_transaction:  # abandoned mid-transaction (its thread ended): undo
                try:
                    conn.execute("ROLLBACK")
                except sqlite3.Error:
                    stale = True
            if stale:  # its store was closed meanwhile (a new generation), or its rollback failed
                self._open.discard(conn)
                conn.close()
                return
            self._idle.append(conn)
            if self._leased == 0 and len(self._idle) > POOL_IDLE:
                closing, self._idle = self._idle, []
                self._open.difference_update(closing)
                for c in closing:
                    c.close()

    @property
    def open_connections(self) -> int:
        """Connections open now (leased or idle): diagnostics and tests."""
        with self._conns_lock:
            return len(self._open)

    @contextmanager
    def lease(self) -> Iterator[sqlite3.Connection]:
        """The thread's connection for the block; given back at its end unless
        the thread held it before the block (nested use keeps the outer lease)."""
        held = self.holds_lease()
        conn = self.connect()
        try:
            yield conn
        finally:
            if not held:
                self.release()

    @contextmanager
    def transaction(self, immediate: bool = True) -> Iterator[sqlite3.Connection]:
        """A write transaction (``BEGIN IMMEDIATE`` takes the write lock up front,
        so two processes never deadlock upgrading read locks). The connection
        is given back at the end unless the thread held it before."""
        with self.lease() as conn:
            if conn.in_transaction:  # nested use joins the outer transaction
                yield conn
                return
            conn.execute("BEGIN IMMEDIATE" if immediate else "BEGIN")
            try:
                yield conn
                conn.execute("COMMIT")
            except BaseException:
                if conn.in_transaction:  # a failed COMMIT too: never left open for the next job
                    conn.execute("ROLLBACK")
                raise

    def execute(self, sql: str, params: Sequence[object] | dict[str, object] = ()) -> Rows:
        """One statement on a leased connection, its rows read at once (the
        connection is given back before this returns, unless the thread held it)."""
        with self.lease() as conn:
            cur = conn.execute(sql, params)
            return Rows(cur.fetchall(), cur.rowcount, cur.lastrowid)

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
        """Close every connection, leased or idle; a later use opens a fresh one."""
        with self._conns_lock:
            conns, self._open, self._idle = self._open, set(), []
            self._generation += 1
        for conn in conns:
            conn.close()
        self._local.lease = None


class Rows:
    """The rows of :meth:`Store.execute`, read already (cursor-like)."""

    __slots__ = ("_rows", "lastrowid", "rowcount")

    def __init__(self, rows: list[sqlite3.Row], rowcount: int, lastrowid: int | None) -> None:
        self._rows = rows
        self.rowcount = rowcount
        self.lastrowid = lastrowid

    def fetchone(self) -> sqlite3.Row | None:
        return self._rows.pop(0) if self._rows else None

    def fetchall(self) -> list[sqlite3.Row]:
        rows, self._rows = self._rows, []
        return rows

    def __iter__(self) -> Iterator[sqlite3.Row]:
        return iter(self.fetchall())


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
