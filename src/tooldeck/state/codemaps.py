"""The codemap cache's tables (store domain ``codemap``).

* ``codemap_blobs``: extraction results keyed by ``<version>:<language>:<content
  hash>`` (the key is made by :func:`tooldeck.codemap.cache_key.blob_key`).
  Content-addressed, so an unchanged file is never parsed twice, two copies of
  one file share an entry, and two processes writing the same key write the
  same bytes (``INSERT OR REPLACE`` is then harmless). The ``skip`` column
  repeats a skipped file's reason so a lookup needs no blob text.
* ``codemap_files``: a stat cache ``(root, rel) → (size, mtime, inode, hash)`` so
  a warm pass need not even read unchanged files. An entry is trusted only
  when the file's mtime is older than the moment it was hashed by more than
  :data:`RACY_NS` (git's "racy clean" rule: a file rewritten within the same
  timestamp tick would otherwise look unchanged).
* ``codemap_meta``: the extractor version whose blobs were last pruned.
"""

from __future__ import annotations

import time
from collections.abc import Iterable, Sequence
from dataclasses import dataclass

from tooldeck.store.db import Store

DOMAIN = "codemap"
RACY_NS = 2_000_000_000
CHUNK = 500  # SQLite host parameters per IN (...) query stay well under the limit

MIGRATIONS: list[str] = [
    """
    CREATE TABLE IF NOT EXISTS codemap_blobs (
        key TEXT PRIMARY KEY,
        data TEXT NOT NULL
    );
    CREATE TABLE IF NOT EXISTS codemap_files (
        root TEXT NOT NULL,
        rel TEXT NOT NULL,
        size INTEGER NOT NULL,
        mtime_ns INTEGER NOT NULL,
        ino INTEGER NOT NULL,
        hash TEXT NOT NULL,
        checked_ns INTEGER NOT NULL,
        PRIMARY KEY (root, rel)
    ) WITHOUT ROWID;
    """,
    """
    ALTER TABLE codemap_blobs ADD COLUMN skip TEXT;
    CREATE TABLE IF NOT EXISTS codemap_meta (key TEXT PRIMARY KEY, value TEXT NOT NULL);
    """,
]


@dataclass(frozen=True, slots=True)
class StatRow:
    size: int
    mtime_ns: int
    ino: int
    hash: str
    checked_ns: int

    def trusted_for(self, size: int, mtime_ns: int, ino: int) -> bool:
        return (
            self.size == size and self.mtime_ns == mtime_ns and self.ino == ino and mtime_ns < self.checked_ns - RACY_NS
        )


class CodemapCache:
    def __init__(self, store: Store) -> None:
        self.store = store
        store.migrate(DOMAIN, MIGRATIONS)

    def stats(self, root: str, rels: Sequence[str]) -> dict[str, StatRow]:
        out: dict[str, StatRow] = {}
        with self.store.lease() as db:
            for i in range(0, len(rels), CHUNK):
                part = rels[i : i + CHUNK]
                marks = ",".join("?" * len(part))
                for row in db.execute(
                    "SELECT rel, size, mtime_ns, ino, hash, checked_ns FROM codemap_files "
                    f"WHERE root=? AND rel IN ({marks})",
                    (root, *part),
                ):
                    out[row[0]] = StatRow(row[1], row[2], row[3], row[4], row[5])
            return out

    def lookup(self, keys: Iterable[str]) -> dict[str, str | None]:
        """Which ``keys`` are stored: key → skip reason (None for a codemap).
        Reads no blob text (see :meth:`load`)."""
        return self._select("skip", keys)

    def load_many(self, keys: Iterable[str]) -> dict[str, str]:
        return self._select("data", keys)  # type: ignore[return-value]

    def _select(self, column: str, keys: Iterable[str]) -> dict[str, str | None]:
        """key → ``column`` of the stored ``keys``, queried in chunks (SQLite
        caps the number of bound parameters)."""
        wanted = list(dict.fromkeys(keys))
        out: dict[str, str | None] = {}
        with self.store.lease() as db:
            for i in range(0, len(wanted), CHUNK):
                part = wanted[i : i + CHUNK]
                marks = ",".join("?" * len(part))
                for row in db.execute(f"SELECT key, {column} FROM codemap_blobs WHERE key IN ({marks})", part):
                    out[row[0]] = row[1]
            return out

    def load(self, key: str) -> str | None:
        row = self.store.execute("SELECT data FROM codemap_blobs WHERE key=?", (key,)).fetchone()
        return row[0] if row is not None else None

    def write(self, blobs: dict[str, tuple[str, str | None]], stats: list[tuple[str, str, int, int, int, str]]) -> None:
        """One transaction: new blobs (key → (data, skip reason)) and
        (root, rel, size, mtime, inode, hash) rows."""
        if not blobs and not stats:
            return
        now = time.time_ns()
        with self.store.transaction() as db:
            if blobs:
                db.executemany(
                    "INSERT OR REPLACE INTO codemap_blobs(key, data, skip) VALUES(?, ?, ?)",
                    [(key, data, skip) for key, (data, skip) in blobs.items()],
                )
            if stats:
                db.executemany(
                    "INSERT OR REPLACE INTO codemap_files(root, rel, size, mtime_ns, ino, hash, checked_ns) "
                    "VALUES(?, ?, ?, ?, ?, ?, ?)",
                    [(*row, now) for row in stats],
                )

    def prune_versions(self, version: str) -> int:
        """Drop blobs written by other extractor versions than ``version``,
        once per version per state directory (a marker row records that it
        was done)."""
        row = self.store.execute("SELECT value FROM codemap_meta WHERE key='pruned_for'").fetchone()
        if row is not None and row[0] == version:
            return 0
        prefix = version + ":"
        with self.store.transaction() as db:
            cur = db.execute("DELETE FROM codemap_blobs WHERE substr(key, 1, ?) != ?", (len(prefix), prefix))
            db.execute(
                "INSERT INTO codemap_meta(key, value) VALUES('pruned_for', ?) "
                "ON CONFLICT(key) DO UPDATE SET value=excluded.value",
                (version,),
            )
            return cur.rowcount
