"""Files the person approved by content: ``tooldeck trust allow|list|revoke``.

Why by content: a file inside a root can be written by the model (file
tools, ``apply_patch``, a development shell). A declaration in such a file
that asks for authority — a command run outside the sandbox, a wider
sandbox, a secret, an endpoint, a path outside the roots — is honoured only
when the person approved *these bytes* (as ``direnv allow`` and VS Code's
Workspace Trust do): an approval is keyed by the file's real path and the
SHA-256 of its content, so any change to the file, one byte or a whole new
section, revokes it until the person allows it again.

Where: ``approvals.json`` in the state directory (the person's state, which
no tool can reach, SPEC §3). Only the CLI writes it (:meth:`Approvals.allow`,
:meth:`Approvals.revoke`); nothing model-facing imports this module's
writers. Every read re-reads the file, so a server sees an approval (or a
revocation) made by ``tooldeck trust`` while it runs, without a restart.

The check takes the bytes the caller is about to use (:meth:`Approvals.approves`),
never a second read of the file: what was approved is exactly what is honoured.
"""

from __future__ import annotations

import hashlib
import json
import os
import time
from collections.abc import Iterable
from dataclasses import dataclass
from typing import Literal

from tooldeck.statedir import resolve_state_dir
from tooldeck.workspace.statefiles import exclusive_lock, read_private, write_private_atomic

FILE_NAME = "approvals.json"
FORMAT = 1
Status = Literal["approved", "changed", "missing"]


def digest(content: bytes) -> str:
    """The key of a file's content (hex SHA-256)."""
    return hashlib.sha256(content).hexdigest()


@dataclass(frozen=True, slots=True)
class Approval:
    path: str  # real path of the approved file
    sha256: str
    approved_at: float
    status: Status = "approved"  # as of the last look: still these bytes, changed since, or gone


class ApprovalError(ValueError):
    """A path the person asked to allow that cannot be approved (names it and why)."""


class Approvals:
    """The approvals of one state directory."""

    def __init__(self, state_dir: str | os.PathLike[str] | None = None) -> None:
        self.state_dir = os.fspath(state_dir) if state_dir is not None else resolve_state_dir()
        self.path = os.path.join(self.state_dir, FILE_NAME)

    # reading -----------------------------------------------------------------
    def _load(self) -> dict[str, dict[str, object]]:
        try:
            raw = read_private(self.path)
        except OSError:
            return {}  # a planted non-file approves nothing
        if not raw:
            return {}
        try:
            data = json.loads(raw)
        except ValueError:
            return {}
        files = data.get("files") if isinstance(data, dict) and data.get("format") == FORMAT else None
        return {k: v for k, v in files.items() if isinstance(v, dict)} if isinstance(files, dict) else {}

    def approves(self, path: str | os.PathLike[str], content: bytes) -> bool:
        """True when the person approved exactly ``content`` at ``path`` (its real path)."""
        entry = self._load().get(os.path.realpath(os.fspath(path)))
        return entry is not None and entry.get("sha256") == digest(content)

    def entries(self) -> list[Approval]:
        """Every approval, with whether the file on disk still has the approved content."""
        out: list[Approval] = []
        for path, entry in sorted(self._load().items()):
            sha = str(entry.get("sha256", ""))
            content = _read_file(path)
            status: Status = "missing" if content is None else ("approved" if digest(content) == sha else "changed")
            out.append(Approval(path, sha, float(entry.get("approved_at", 0.0) or 0.0), status))
        return out

    def fingerprint(self) -> str:
        """A digest of every approval (for caches keyed by what authority is granted)."""
        files = self._load()
        return digest(json.dumps(sorted((k, str(v.get("sha256"))) for k, v in files.items())).encode())

    # writing (the person's CLI only) -------------------------------------------
    def allow(self, paths: Iterable[str | os.PathLike[str]]) -> list[Approval]:
        """Approve the current content of each file; raises ApprovalError naming
        a path that is not a readable regular file (nothing is approved then)."""
        todo: list[tuple[str, bytes]] = []
        for p in paths:
            real = os.path.realpath(os.path.expanduser(os.fspath(p)))
            content = _read_file(real)
            if content is None:
                raise ApprovalError(f"{p}: not a readable regular file")
            todo.append((real, content))
        now = time.time()
        with self._locked() as files:
            out = []
            for real, content in todo:
                files[real] = {"sha256": digest(content), "approved_at": now}
                out.append(Approval(real, digest(content), now))
        return out

    def revoke(self, paths: Iterable[str | os.PathLike[str]]) -> list[str]:
        """Remove the approvals of ``paths``; returns the real paths that had one."""
        reals = [os.path.realpath(os.path.expanduser(os.fspath(p))) for p in paths]
        with self._locked() as files:
            return [r for r in reals if files.pop(r, None) is not None]

    class _Edit:
        def __init__(self, owner: Approvals) -> None:
            self.owner = owner

        def __enter__(self) -> dict[str, dict[str, object]]:
            os.makedirs(self.owner.state_dir, mode=0o700, exist_ok=True)
            self._lock = exclusive_lock(os.path.join(self.owner.state_dir, FILE_NAME + ".lock"))
            self._lock.__enter__()
            self.files = self.owner._load()
            return self.files

        def __exit__(self, *exc: object) -> None:
            try:
                if exc[0] is None:
                    body = json.dumps({"format": FORMAT, "files": self.files}, indent=1, sort_keys=True)
                    write_private_atomic(self.owner.path, body.encode())
            finally:
                self._lock.__exit__(None, None, None)

    def _locked(self) -> Approvals._Edit:
        return Approvals._Edit(self)


def _read_file(path: str, limit: int = 16 * 1024 * 1024) -> bytes | None:
    """A file's bytes for hashing (a regular file only; never blocks on a FIFO)."""
    try:
        return read_private(path, limit)
    except OSError:
        return None
