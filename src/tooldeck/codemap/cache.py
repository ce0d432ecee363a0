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

Blobs are JSON: ``{"i": imports, "s": [[name, kind, signature, line, parent,
end_line, depth], ...], "r": "space separated references", "n": lines}``, or
``{"x": reason}`` for a file that has no codemap (binary, minified).
"""

from __future__ import annotations

import functools
import hashlib
import json
import time
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from tooldeck.codemap.model import Payload, Symbol
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
    """
]


@functools.cache
def extractor_version() -> str:
    """A short fingerprint of everything that shapes a payload."""
    here = Path(__file__).parent
    h = hashlib.sha256(FORMAT_VERSION.encode())
    for path in [*sorted((here / "queries").glob("*.scm")), here / "extract.py", here / "specs.py"]:
        h.update(path.name.encode())
        h.update(path.read_bytes())
    return h.hexdigest()[:10]


def blob_key(language: str, digest: str) -> str:
    return f"{extractor_version()}:{language}:{digest}"


# encoding -------------------------------------------------------------------


def encode(payload: Payload) -> str:
    symbols = [[s.name, s.kind, s.signature, s.line, s.parent, s.end_line, s.depth] for s in payload.symbols]
    return json.dumps(
        {"i": payload.imports, "s": symbols, "r": " ".join(sorted(payload.references)), "n": payload.lines},
        ensure_ascii=False,
        separators=(",", ":"),
    )


def encode_skip(reason: str) -> str:
    return json.dumps({"x": reason})


@dataclass(slots=True)
class Entry:
    """A decoded blob. ``refs`` stays a string until someone needs the set."""

    imports: list[str]
    symbols: list[Symbol]
    refs: str
    lines: int
    skip: str | None = None

    @property
    def references(self) -> set[str]:
        return set(self.refs.split()) if self.refs else set()


def decode(data: str) -> Entry:
    raw: dict[str, Any] = json.loads(data)
    skip = raw.get("x")
    if skip is not None:
        return Entry([], [], "", 0, str(skip))
    return Entry(raw["i"], [Symbol(*row) for row in raw["s"]], raw["r"], raw["n"])


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
        db = self.store.connect()
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

    def blobs(self, keys: Iterable[str]) -> dict[str, str]:
        wanted = list(dict.fromkeys(keys))
        out: dict[str, str] = {}
        db = self.store.connect()
        for i in range(0, len(wanted), CHUNK):
            part = wanted[i : i + CHUNK]
            marks = ",".join("?" * len(part))
            for row in db.execute(f"SELECT key, data FROM codemap_blobs WHERE key IN ({marks})", part):
                out[row[0]] = row[1]
        return out

    def write(self, blobs: dict[str, str], stats: list[tuple[str, str, int, int, int, str]]) -> None:
        """One transaction: new blobs and (root, rel, size, mtime, inode, hash) rows."""
        if not blobs and not stats:
            return
        now = time.time_ns()
        with self.store.transaction() as db:
            if blobs:
                db.executemany("INSERT OR REPLACE INTO codemap_blobs(key, data) VALUES(?, ?)", blobs.items())
            if stats:
                db.executemany(
                    "INSERT OR REPLACE INTO codemap_files(root, rel, size, mtime_ns, ino, hash, checked_ns) "
                    "VALUES(?, ?, ?, ?, ?, ?, ?)",
                    [(*row, now) for row in stats],
                )

    def prune_versions(self) -> int:
        """Drop blobs written by other extractor versions (called once per process)."""
        prefix = extractor_version() + ":"
        with self.store.transaction() as db:
            cur = db.execute(
                "DELETE FROM codemap_blobs WHERE substr(key, 1, ?) != ?",
                (len(prefix), prefix),
            )
            return cur.rowcount
