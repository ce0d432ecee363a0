"""Output pages kept in the state directory, so a cursor outlives its process.

``tooldeck call`` runs one tool per process: a page cursor it prints would be
unknown to the next process if pages lived only in memory, and repeating the
call instead would re-apply a patch. :class:`FilePageStore` keeps each page as
one JSON file under ``STATE_DIR/pages/`` (written to a temp file and renamed,
so a reader never sees half a page), expires pages after :data:`PAGE_TTL`
seconds, and hands a page out once: the loader claims it by renaming it away
first, so two processes never both continue from one cursor.
"""

from __future__ import annotations

import json
import logging
import os
import secrets
import time
from pathlib import Path
from typing import Any

from tooldeck.core.budget import CURSOR_RE
from tooldeck.workspace.statefiles import write_private_atomic

log = logging.getLogger("tooldeck.pages")
PAGE_TTL = 3600.0


class FilePageStore:
    def __init__(self, directory: str | os.PathLike[str], ttl: float = PAGE_TTL) -> None:
        self.dir = Path(directory)
        self.ttl = ttl

    def _path(self, cursor: str) -> Path | None:
        if not CURSOR_RE.fullmatch(cursor):  # model-supplied: never a path of its own choosing
            return None
        return self.dir / (cursor.removeprefix("p:") + ".json")

    def save(self, cursor: str, page: dict[str, Any]) -> None:
        path = self._path(cursor)
        if path is None:
            return
        try:
            self.dir.mkdir(parents=True, exist_ok=True, mode=0o700)
            write_private_atomic(path, json.dumps(page).encode("utf-8"), durable=False)
        except OSError as exc:  # paging still works in this process
            log.warning("could not keep page %s in %s: %s", cursor, self.dir, exc)
            return
        self.expire()

    def load(self, cursor: str) -> dict[str, Any] | None:
        path = self._path(cursor)
        if path is None:
            return None
        claimed = path.with_name(f".{path.name}.{secrets.token_hex(4)}.taken")
        try:
            os.rename(path, claimed)  # atomic: only one process gets the page
        except OSError:
            return None
        try:
            if time.time() - claimed.stat().st_mtime > self.ttl:
                return None
            data = json.loads(claimed.read_text(encoding="utf-8"))
        except (OSError, ValueError):
            return None
        finally:
            claimed.unlink(missing_ok=True)
        return data if isinstance(data, dict) else None

    def expire(self) -> None:
        """Remove pages (and stray temp files) older than the TTL."""
        now = time.time()
        try:
            entries = list(os.scandir(self.dir))
        except OSError:
            return
        for entry in entries:
            try:
                if now - entry.stat(follow_symlinks=False).st_mtime > self.ttl:
                    os.unlink(entry.path)
            except OSError:
                continue
