"""The audit log: one JSON line per shell request and per decision, in the state directory.

Why JSONL in the state directory: it is append-only, greppable, survives a
crash mid-line (only that line is lost), and the sandbox hides the state
directory, so a command cannot read or rewrite the record of what it did.
"""

from __future__ import annotations

import json
import os
import threading
import time
from pathlib import Path
from typing import Any

from tooldeck.workspace.statefiles import append_private

AUDIT_FILE = "shell-audit.jsonl"


class AuditLog:
    def __init__(self, state_dir: str | os.PathLike[str]) -> None:
        self.path = Path(state_dir) / AUDIT_FILE
        self._lock = threading.Lock()

    def write(self, event: str, **fields: Any) -> None:
        record = {"ts": round(time.time(), 3), "event": event, **fields}
        line = json.dumps(record, ensure_ascii=False, default=str) + "\n"
        with self._lock:
            self.path.parent.mkdir(parents=True, exist_ok=True)
            append_private(self.path, line.encode("utf-8", errors="replace"))

    def read(self) -> list[dict[str, Any]]:
        """Every record (for tests and `tooldeck` inspection)."""
        try:
            text = self.path.read_text(encoding="utf-8")
        except FileNotFoundError:
            return []
        return [json.loads(line) for line in text.splitlines() if line.strip()]
