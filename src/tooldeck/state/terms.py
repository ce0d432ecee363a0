"""The term index's tables (its own database, ``terms.sqlite3`` in the state
directory: bulk inserts never hold the main store's write lock).

Schema and every query of :class:`tooldeck.context.term_index.TermIndex`,
which decides what to index and when: ``term_files`` (a file's stamp, digest
and document number; NULL doc: not indexed), ``term_dead`` (tombstones: old
documents no file maps to), ``term_text`` (contentless FTS5, an ``ascii``
tokenizer with ``_`` as a word character), ``term_vocab`` (its per-document
instance counts) and ``term_seq`` (the next document number and the epoch,
shared by the processes of one state directory). The functions taking ``db``
run inside the caller's write transaction (:meth:`TermTables.write`).
"""

from __future__ import annotations

import sqlite3
from collections.abc import Iterable, Iterator
from contextlib import AbstractContextManager
from pathlib import Path

from tooldeck.store.db import Store

DB_NAME = "terms.sqlite3"
DOMAIN = "terms"
MIGRATIONS = [
    """
    CREATE TABLE term_files (
        path TEXT PRIMARY KEY,
        doc INTEGER,                -- NULL: not indexed (a link, binary, too large, unreadable)
        size INTEGER NOT NULL,
        mtime_ns INTEGER NOT NULL,
        indexed_ns INTEGER NOT NULL,
        digest BLOB
    );
    CREATE TABLE term_dead (doc INTEGER PRIMARY KEY);
    CREATE VIRTUAL TABLE term_text USING fts5(body, content='', columnsize=0, tokenize="ascii tokenchars '_'");
    CREATE VIRTUAL TABLE term_vocab USING fts5vocab(term_text, instance);
    """,
    # processes sharing a state directory take document numbers from here, inside their write
    # transaction; ``epoch`` moves when one of them empties the index (the others' maps are void)
    """
    CREATE TABLE term_seq (id INTEGER PRIMARY KEY CHECK (id = 0), next_doc INTEGER NOT NULL, epoch INTEGER NOT NULL);
    INSERT INTO term_seq(id, next_doc, epoch) SELECT 0, 1 + max(
        coalesce((SELECT max(doc) FROM term_files), 0), coalesce((SELECT max(doc) FROM term_dead), 0)), 0;
    """,
]

FileRow = tuple[str, "int | None", int, int, int, "bytes | None"]  # path, doc, size, mtime_ns, indexed_ns, digest


class TermTables:
    """The term index's database of one state directory."""

    def __init__(self, state_dir: Path) -> None:
        self.store = Store(state_dir, name=DB_NAME)
        self.store.migrate(DOMAIN, MIGRATIONS)

    def write(self) -> AbstractContextManager[sqlite3.Connection]:
        """A write transaction for the functions below that take ``db``."""
        return self.store.transaction()

    def load(self) -> tuple[int, list[FileRow], int]:
        """(epoch, every file row, tombstone count), read in one transaction."""
        with self.store.transaction(immediate=False) as db:
            epoch = db.execute("SELECT epoch FROM term_seq").fetchone()[0]
            rows = [
                tuple(r) for r in db.execute("SELECT path, doc, size, mtime_ns, indexed_ns, digest FROM term_files")
            ]
            dead = db.execute("SELECT count(*) FROM term_dead").fetchone()[0]
        return epoch, rows, dead  # type: ignore[return-value]

    def epoch(self) -> int:
        return int(self.store.execute("SELECT epoch FROM term_seq").fetchone()[0])

    def vocab_counts(self, terms: Iterable[str]) -> Iterator[tuple[int, str, int]]:
        """(doc, term, occurrences) of each of ``terms`` in each document holding it."""
        asked = list(terms)
        marks = ",".join("?" * len(asked))
        sql = f"SELECT doc, term, count(*) FROM term_vocab WHERE term IN ({marks}) GROUP BY doc, term"
        return iter(self.store.execute(sql, asked))  # type: ignore[arg-type]

    def phrase_docs(self, phrase: str) -> list[int]:
        """The documents matching an FTS5 ``phrase``."""
        return [d for (d,) in self.store.execute("SELECT rowid FROM term_text WHERE term_text MATCH ?", (phrase,))]

    def close(self) -> None:
        self.store.close()


def next_doc(db: sqlite3.Connection) -> int:
    return int(db.execute("SELECT next_doc FROM term_seq").fetchone()[0])


def set_next_doc(db: sqlite3.Connection, doc: int) -> None:
    db.execute("UPDATE term_seq SET next_doc=?", (doc,))


def forget_file(db: sqlite3.Connection, path: str) -> None:
    db.execute("DELETE FROM term_files WHERE path=?", (path,))


ROWS_PER_STATEMENT = 128  # rows bound to one multi-row INSERT (see :func:`_insert_rows`)


def put_texts(db: sqlite3.Connection, docs: list[tuple[int, str]]) -> None:
    """Index ``(doc, text)`` documents."""
    _insert_rows(db, "INSERT INTO term_text(rowid, body) VALUES", 2, docs)


def put_files(db: sqlite3.Connection, rows: list[FileRow]) -> None:
    _insert_rows(db, "INSERT OR REPLACE INTO term_files(path, doc, size, mtime_ns, indexed_ns, digest) VALUES", 6, rows)


def bury(db: sqlite3.Connection, docs: list[int]) -> None:
    _insert_rows(db, "INSERT OR IGNORE INTO term_dead(doc) VALUES", 1, [(d,) for d in docs])


def _insert_rows(db: sqlite3.Connection, head: str, width: int, rows: list[tuple[object, ...]]) -> None:
    """Insert ``rows`` with one statement per :data:`ROWS_PER_STATEMENT`.

    Why not one ``execute`` per row: each releases the GIL around SQLite's
    work and must win it back afterwards; while a build's thread holds the
    GIL (parsing, measuring), the fill's thread can wait up to the switch
    interval (5 ms) at every row, 25,000 rows for a 12,800-file fill. One
    statement per 128 rows has 128 times fewer such waits, and SQLite
    tokenizes the whole group with the GIL released. Measured: a fill alone
    3.55 -> 3.40 s; not yielding, beside back-to-back builds, unfinished
    after 6.1 s before, done in 5.3 s after."""
    one = "(" + ",".join("?" * width) + ")"
    for i in range(0, len(rows), ROWS_PER_STATEMENT):
        part = rows[i : i + ROWS_PER_STATEMENT]
        db.execute(head + ",".join([one] * len(part)), [v for row in part for v in row])


def empty(db: sqlite3.Connection) -> int:
    """Drop every document, file row and tombstone; the new epoch."""
    db.execute("INSERT INTO term_text(term_text) VALUES('delete-all')")
    db.execute("DELETE FROM term_files")
    db.execute("DELETE FROM term_dead")
    db.execute("UPDATE term_seq SET epoch = epoch + 1")
    return int(db.execute("SELECT epoch FROM term_seq").fetchone()[0])
