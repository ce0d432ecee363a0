"""The codemap cache in the SQLite store.

Two tables:

* ``codemap_blobs``: extraction results keyed by ``<version>:<language>:<content
  hash>``. Content-addressed, so an unchanged file is never parsed twice, two
  copies of one file share an entry, and two processes writing the same key
  write the same bytes (``INSERT OR REPLACE`` is then harmless).
* ``codemap_files``: a stat cache ``(root, rel) → (size, mtime, inode, hash)`` so
  a warm pass need not even read unchanged files. An entry is trusted only
  when the file's mtime is older than the moment it was hashed by more than
  :data:`RACY_NS` (git's "racy clean" rule: a file rewritten within the same
  timestamp tick would otherwise look unchanged).

The version folds in the query files and the extraction code, so changing a
query invalidates old entries without a manual bump.

Blobs are described in :mod:`tooldeck.codemap.entry`; the ``skip`` column
repeats a skipped file's reason so a lookup needs no blob text.
"""

from __future__ import annotations

import functools
import hashlib
import os
import sys
import time
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path

from tooldeck.store.db import Store

FORMAT_VERSION = "1"
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


# the modules whose code shapes a payload: the tree it is read from (grammars, hollow*), what is
# read (extract, specs, kinds), the references (lexer) and the stored form (entry, blob)
_SHAPING = (
    "extract.py", "specs.py", "kinds.py", "lexer.py", "grammars.py", "hollow.py", "hollow_braces.py",
    "entry.py", "blob.py",
)  # fmt: skip


@functools.cache
def extractor_version() -> str:
    """A short fingerprint of everything that shapes a payload: that code,
    the queries, and the installed versions of tree-sitter and its grammar
    wheels (a new grammar may name its nodes differently)."""
    here = Path(__file__).parent
    h = hashlib.sha256(FORMAT_VERSION.encode())
    code = [here / name for name in _SHAPING]
    for path in [*sorted((here / "queries").glob("*.scm")), *code]:
        h.update(path.name.encode())
        h.update(path.read_bytes())
    for name in _grammar_dists():
        h.update(name.encode())
    return h.hexdigest()[:10]


def _grammar_dists() -> list[str]:
    """``tree_sitter*-<version>.dist-info`` names on the path: listing the
    folders is a millisecond where ``importlib.metadata`` takes ~70."""
    found: set[str] = set()
    for folder in {p for p in sys.path if p.endswith(("site-packages", "dist-packages"))}:
        try:
            found.update(n for n in os.listdir(folder) if n.startswith("tree_sitter") and n.endswith(".dist-info"))
        except OSError:
            continue
    return sorted(found)


def blob_key(language: str, digest: str) -> str:
    return f"{extractor_version()}:{language}:{digest}"


# the store ------------------------------------------------------------------


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
        store.migrate("codemap", MIGRATIONS)

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

    def prune_versions(self) -> int:
        """Drop blobs written by other extractor versions, once per version
        per state directory (a marker row records that it was done)."""
        version = extractor_version()
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
