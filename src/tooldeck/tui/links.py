"""Which conversation file follows which server session (connected mode).

The file is the conversation; the session on the server is where it runs.
After every sync the chat records, in the person's state directory (never in
the file, which ``tooldeck run`` must parse unchanged): the server, the
workspace, the session id, how many of the session's entries the file holds
(``seq``), and the SHA-256 of the file as the chat left it. Reopening the file
against the same server and workspace attaches to that session, and appends
what it produced meanwhile, only when the file is still exactly as the chat
left it; a file changed since (continued by ``tooldeck run``, edited) starts
a new session from its own content at the next message. No token is stored.
"""

from __future__ import annotations

import hashlib
import json
import os
from dataclasses import asdict, dataclass
from pathlib import Path

from tooldeck.statedir import resolve_state_dir
from tooldeck.workspace.person_files import read_named
from tooldeck.workspace.statefiles import exclusive_lock, read_private, write_private_atomic

MAX_CHAT_BYTES = 64 * 1024 * 1024  # the chat's file, as ChatMD reads it (chatmd.document.MAX_CHATMD_BYTES)

FILE_NAME = "chat-links.json"


@dataclass(frozen=True)
class Link:
    url: str
    workspace: str
    session: str
    seq: int
    sha256: str


def file_digest(path: Path) -> str:
    try:
        return hashlib.sha256(read_named(path, MAX_CHAT_BYTES)).hexdigest()
    except OSError:
        return ""


class Links:
    def __init__(self, state_dir: str | os.PathLike[str] | None = None) -> None:
        folder = Path(resolve_state_dir(os.fspath(state_dir) if state_dir is not None else None))
        self.path = folder / FILE_NAME
        self._lock = folder / f"{FILE_NAME}.lock"

    def _load(self) -> dict[str, dict[str, object]]:
        try:
            raw = read_private(self.path)
            data = json.loads(raw) if raw else {}
        except (OSError, ValueError):
            return {}
        return data if isinstance(data, dict) else {}

    def get(self, file: Path) -> Link | None:
        entry = self._load().get(os.path.realpath(file))
        if not isinstance(entry, dict):
            return None
        try:
            return Link(str(entry["url"]), str(entry["workspace"]), str(entry["session"]), int(entry["seq"]),  # type: ignore[call-overload]
                        str(entry["sha256"]))  # fmt: skip
        except (KeyError, TypeError, ValueError):
            return None

    def put(self, file: Path, link: Link) -> None:
        self.path.parent.mkdir(parents=True, exist_ok=True)
        with exclusive_lock(self._lock):
            data = self._load()
            data[os.path.realpath(file)] = asdict(link)
            write_private_atomic(self.path, json.dumps(data, indent=1).encode())
