"""Persistent state in SQLite (WAL) under the state directory."""

from tooldeck.store.db import Store, default_state_dir

__all__ = ["Store", "default_state_dir"]
