"""The ``settings`` table (store domain ``settings``): the person's and the
tools' stored setting values, and who wrote each.

Only the rows: which keys exist, their types and who may set them is the
registry's (:mod:`tooldeck.settings`), which reads and writes through
:class:`SettingsTable`.
"""

from __future__ import annotations

import json
import time
from typing import Any

from tooldeck.store.db import Store

DOMAIN = "settings"
MIGRATIONS = [
    """
    CREATE TABLE settings (
        key TEXT PRIMARY KEY,
        value TEXT NOT NULL,
        updated REAL NOT NULL
    );
    """,
    # who wrote the row; every row before this column was written by app_settings
    "ALTER TABLE settings ADD COLUMN set_by TEXT NOT NULL DEFAULT 'tool';",
]


class SettingsTable:
    """Stored values (JSON) by key, each with its writer (``person`` or ``tool``)."""

    def __init__(self, store: Store) -> None:
        self.store = store
        store.migrate(DOMAIN, MIGRATIONS)

    def rows(self) -> list[tuple[str, Any, str]]:
        """Every stored (key, value, set_by)."""
        rows = self.store.execute("SELECT key, value, set_by FROM settings").fetchall()
        return [(r["key"], json.loads(r["value"]), r["set_by"]) for r in rows]

    def put(self, key: str, value: Any, by: str) -> None:
        with self.store.transaction() as db:
            db.execute(
                "INSERT INTO settings(key, value, updated, set_by) VALUES(?, ?, ?, ?) ON CONFLICT(key) "
                "DO UPDATE SET value=excluded.value, updated=excluded.updated, set_by=excluded.set_by",
                (key, json.dumps(value), time.time(), by),
            )

    def delete(self, key: str) -> None:
        with self.store.transaction() as db:
            db.execute("DELETE FROM settings WHERE key=?", (key,))
