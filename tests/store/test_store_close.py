"""Store.close closes the connections of every thread, not only the caller's."""

from __future__ import annotations

import sqlite3
import threading
from pathlib import Path

import pytest

from tooldeck.store.db import Store


def test_close_closes_connections_opened_by_other_threads(tmp_path: Path) -> None:
    store = Store(tmp_path)
    opened: list[sqlite3.Connection] = []

    def worker() -> None:
        opened.append(store.connect())

    t = threading.Thread(target=worker)
    t.start()
    t.join()
    mine = store.connect()
    store.close()
    for conn in (*opened, mine):
        with pytest.raises(sqlite3.ProgrammingError):
            conn.execute("SELECT 1")
    assert store.execute("SELECT 1").fetchone()[0] == 1  # a later use opens a fresh one
