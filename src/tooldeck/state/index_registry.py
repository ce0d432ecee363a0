"""The ``index_registry`` table (store domain ``index``): one row per built
index (its kind, source, description, embedding model, live generation and
size), written by :class:`tooldeck.index.service.IndexService` after each
successful build."""

from __future__ import annotations

from dataclasses import astuple, dataclass

from tooldeck.store.db import Store

DOMAIN = "index"
MIGRATIONS = [
    """
    CREATE TABLE index_registry (
        name TEXT PRIMARY KEY,
        kind TEXT NOT NULL,
        source TEXT NOT NULL,
        description TEXT NOT NULL DEFAULT '',
        model TEXT NOT NULL,
        generation TEXT NOT NULL,
        files INTEGER NOT NULL,
        chunks INTEGER NOT NULL,
        built_at TEXT NOT NULL
    );
    """
]


@dataclass(frozen=True, slots=True)
class IndexRecord:
    name: str
    kind: str
    source: str
    description: str
    model: str
    generation: str
    files: int
    chunks: int


class IndexRegistry:
    def __init__(self, store: Store) -> None:
        self.store = store
        store.migrate(DOMAIN, MIGRATIONS)

    def record(self, rec: IndexRecord) -> None:
        """The build of ``rec.name`` that just published (replaces the previous row)."""
        with self.store.transaction() as conn:
            conn.execute(
                "INSERT OR REPLACE INTO index_registry (name, kind, source, description, model, generation, files, "
                "chunks, built_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?, datetime('now'))",
                astuple(rec),
            )
