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

from tooldeck.codemap.model import Codemap, Payload, Symbol
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


class Entry:
    """A cache blob, decoded on first use.

    Warm passes touch thousands of entries whose content nobody reads (a
    listing's next page, an index refresh of unchanged files): keeping the
    JSON text until an attribute is read makes those passes cost a stat and a
    row fetch per file. Entries are shared (memory cache), so treat what they
    return as read-only."""

    __slots__ = ("_decoded", "data")

    def __init__(self, data: str) -> None:
        self.data = data
        self._decoded: tuple[list[str], list[Symbol], str, int] | None = None

    @property
    def skip(self) -> str | None:
        """Why this file has no codemap (binary, minified...), or None."""
        if not self.data.startswith('{"x"'):
            return None
        return str(json.loads(self.data)["x"])

    def _decode(self) -> tuple[list[str], list[Symbol], str, int]:
        if self._decoded is None:
            raw: dict[str, Any] = json.loads(self.data)
            if "x" in raw:
                self._decoded = ([], [], "", 0)
            else:
                self._decoded = (raw["i"], [Symbol(*row) for row in raw["s"]], raw["r"], raw["n"])
        return self._decoded

    @property
    def imports(self) -> list[str]:
        return self._decode()[0]

    @property
    def symbols(self) -> list[Symbol]:
        return self._decode()[1]

    @property
    def refs(self) -> str:
        """The references as one space-separated string."""
        return self._decode()[2]

    @property
    def lines(self) -> int:
        return self._decode()[3]


def decode(data: str) -> Entry:
    return Entry(data)


class LazyCodemap(Codemap):
    """A :class:`Codemap` whose content comes from its cache entry when first read."""

    def __init__(self, path: str, language: str, content_hash: str, root: str, entry: Entry) -> None:
        self.path = path
        self.language = language
        self.content_hash = content_hash
        self.root = root
        self._entry = entry
        self._own: dict[str, Any] = {}

    def _get(self, name: str) -> Any:
        value = self._own.get(name)
        if value is None:
            e = self._entry
            if name == "imports":
                value = list(e.imports)
            elif name == "symbols":
                value = list(e.symbols)
            else:
                value = set(e.refs.split()) if e.refs else set()
            self._own[name] = value
        return value

    @property  # type: ignore[override]
    def imports(self) -> list[str]:
        return self._get("imports")  # type: ignore[no-any-return]

    @imports.setter
    def imports(self, value: list[str]) -> None:
        self._own["imports"] = value

    @property  # type: ignore[override]
    def symbols(self) -> list[Symbol]:
        return self._get("symbols")  # type: ignore[no-any-return]

    @symbols.setter
    def symbols(self, value: list[Symbol]) -> None:
        self._own["symbols"] = value

    @property  # type: ignore[override]
    def references(self) -> set[str]:
        return self._get("references")  # type: ignore[no-any-return]

    @references.setter
    def references(self, value: set[str]) -> None:
        self._own["references"] = value

    @property  # type: ignore[override]
    def lines(self) -> int:
        return self._entry.lines

    @lines.setter
    def lines(self, value: int) -> None:  # pragma: no cover - dataclass compatibility
        raise AttributeError("lines is read from the cache entry")


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
