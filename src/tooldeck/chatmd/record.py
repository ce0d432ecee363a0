"""What tooldeck last honoured in a file it runs: the transcript's authority record.

Why: ``tooldeck run FILE`` gives the file the person named authority, but
the file is also a transcript the model can edit while the run goes on (it
lies in a root; ``apply_patch`` can add ``<tool mcp_server="stdio:…"/>`` to
it), and the person runs it again to continue. So the runner records, in
the state directory (which no tool can reach), the declarations needing
authority that it honoured — what the file held when the run started, plus
the payload files it wrote itself — under the path the person named. At the
next run a declaration needing authority that is not in that record (and
not approved with ``tooldeck trust allow``) is refused: it was not in the
file when tooldeck last had it.

A file with no record (never run, or run with another state directory) is
the person's as named: everything it declares is honoured, then recorded.
An unreadable or malformed record refuses everything not approved (fail
closed). Keys (:mod:`tooldeck.chatmd.grants`) hold no position, so adding
messages does not disturb them.
"""

from __future__ import annotations

import json
import os
import time
from collections.abc import Iterable
from pathlib import Path

from tooldeck.statedir import resolve_state_dir
from tooldeck.workspace.statefiles import exclusive_lock, read_private, write_private_atomic

FILE_NAME = "chatmd_authority.json"
FORMAT = 1


class Record:
    """The records of one state directory."""

    def __init__(self, state_dir: str | os.PathLike[str] | None = None) -> None:
        self.state_dir = os.fspath(state_dir) if state_dir is not None else resolve_state_dir()
        self.path = os.path.join(self.state_dir, FILE_NAME)

    def _files(self) -> dict[str, dict[str, object]] | None:
        """Every entry; None when the record exists but cannot be trusted."""
        try:
            raw = read_private(self.path)
        except OSError:
            return None
        if raw is None:
            return {}
        try:
            data = json.loads(raw)
        except ValueError:
            return None
        files = data.get("files") if isinstance(data, dict) and data.get("format") == FORMAT else None
        return {k: v for k, v in files.items() if isinstance(v, dict)} if isinstance(files, dict) else None

    def honoured(self, named: Path) -> frozenset[str] | None:
        """The keys honoured at the last run of ``named`` (None: never run here)."""
        files = self._files()
        if files is None:
            return frozenset()
        entry = files.get(_key(named))
        if entry is None:
            return None
        keys = entry.get("keys")
        return frozenset(k for k in keys if isinstance(k, str)) if isinstance(keys, list) else frozenset()

    def save(self, named: Path, keys: Iterable[str]) -> None:
        """Record ``keys`` as what tooldeck honoured in ``named`` (replacing the last record)."""
        os.makedirs(self.state_dir, mode=0o700, exist_ok=True)
        with exclusive_lock(self.path + ".lock"):
            files = self._files() or {}
            files[_key(named)] = {"keys": sorted(set(keys)), "at": time.time()}
            body = json.dumps({"format": FORMAT, "files": files}, indent=1, sort_keys=True)
            write_private_atomic(self.path, body.encode())


def _key(named: Path) -> str:
    """The path as the person named it, made absolute (links not followed: a
    transcript replaced by a link to another file keeps this file's record)."""
    return os.path.normpath(os.path.abspath(named))
