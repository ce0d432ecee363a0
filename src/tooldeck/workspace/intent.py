"""The journal's intent file: its format, its MAC, and the checks crash
recovery runs on every entry before acting on it.

Why a MAC: recovery renames files into roots and removes files from them on
the word of ``intent.json``. Whoever can write that file — a model, when the
state directory lay inside a root, or anything else that reaches the disk —
could otherwise have the next tooldeck process create, replace or delete any
file the person can. So every state directory has a key (:func:`journal_key`:
32 random bytes, mode 0600, made once, read without following a link), every
intent carries an HMAC-SHA256 over its batch id and content, and an intent
whose MAC does not verify is never acted on (:func:`read_intent`).

Why the checks on top of the MAC (:func:`entry_problem`): they hold even if
the key leaked. An entry is acted on only when its root is one the writer
recorded (the roots of its batch, covered by the MAC), its folder and name are
plain names (no ``..``, no separator: recovery reaches the file from the root
with the no-link walk of :mod:`~tooldeck.workspace.dirfd`, so nothing
resolves outside the root), its temp file and backup carry the batch's own
temp names (so recovery can only ever rename or remove tooldeck's own temp
files, and a backup lies in the journal folder — or, when the state directory
is on another filesystem, beside the file under that name), and the folders
it says it created lie on the file's own path.

The MAC costs microseconds (a 800-file intent is ~150 KB: one HMAC pass).
"""

from __future__ import annotations

import contextlib
import hashlib
import hmac
import json
import logging
import os
import secrets
import threading
from typing import Any

from tooldeck.workspace.statefiles import read_private
from tooldeck.workspace.tempnames import TEMP_PREFIX

log = logging.getLogger("tooldeck.journal")

KEY_NAME = "journal.key"
KEY_BYTES = 32
MAGIC = b"tooldeck-intent-v2 "
_CONTEXT = b"tooldeck journal intent\0"
_CLOEXEC = getattr(os, "O_CLOEXEC", 0)
_NAME_MAX = 255

_keys: dict[str, bytes] = {}
_keys_lock = threading.Lock()


class BadIntent(ValueError):
    """An intent recovery must not act on (forged, from an older version, torn)."""


# ---------------------------------------------------------------------------
# the key


def journal_key(state_dir: str, *, create: bool = True) -> bytes | None:
    """The state directory's journal key, made on first use when ``create``
    (else None when there is none). Cached per process: a write reads it once."""
    key = _keys.get(state_dir)
    if key is not None:
        return key
    with _keys_lock:
        key = _keys.get(state_dir)
        if key is None:
            key = _load_key(state_dir, create)
            if key is not None:
                _keys[state_dir] = key
    return key


def _load_key(state_dir: str, create: bool) -> bytes | None:
    path = os.path.join(state_dir, KEY_NAME)
    try:
        data = read_private(path, limit=4 * KEY_BYTES)
    except OSError as exc:  # a link, a FIFO, a folder planted under its name
        data, problem = b"", str(exc)
    else:
        problem = "" if data is None or len(data) == KEY_BYTES else f"{len(data)} bytes, not {KEY_BYTES}"
    if data is not None and not problem:
        return data
    if not create:
        return None
    if problem:  # nothing signed with it can exist: replace it
        log.warning("journal key %s is invalid (%s); a new key is made", path, problem)
    return _make_key(state_dir, path, replace=bool(problem))


def _make_key(state_dir: str, path: str, *, replace: bool) -> bytes:
    """A new key, written to a temp file and linked in (never over a key
    another process made meanwhile: that one wins and is returned)."""
    os.makedirs(state_dir, mode=0o700, exist_ok=True)
    tmp = f"{path}.{os.getpid()}.{secrets.token_hex(4)}.tmp"
    key = secrets.token_bytes(KEY_BYTES)
    fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW | _CLOEXEC, 0o600)
    try:
        os.write(fd, key)
        os.fsync(fd)
    finally:
        os.close(fd)
    try:
        if replace:
            if os.path.isdir(path) and not os.path.islink(path):
                os.rmdir(path)  # an empty folder squatting on the name; a full one fails loudly
            os.replace(tmp, path)
            return key
        try:
            os.link(tmp, path, follow_symlinks=False)
            return key
        except FileExistsError:
            theirs = read_private(path, limit=4 * KEY_BYTES)
            if theirs is None or len(theirs) != KEY_BYTES:
                raise OSError(f"journal key {path} changed while it was made") from None
            return theirs
    finally:
        with contextlib.suppress(OSError):
            os.unlink(tmp)


# ---------------------------------------------------------------------------
# writing and reading an intent


def _mac(key: bytes, batch_id: str, body: bytes) -> str:
    return hmac.new(key, _CONTEXT + batch_id.encode() + b"\0" + body, hashlib.sha256).hexdigest()


def encode_intent(state_dir: str, batch_id: str, entries: list[dict[str, Any]], undoable: bool) -> bytes:
    """The bytes of ``intent.json`` for a batch: its record names the batch
    and the roots its entries use (:func:`seal`)."""
    roots = sorted({e["root"] for e in entries})
    return seal(state_dir, batch_id, {"batch": batch_id, "undoable": undoable, "roots": roots, "entries": entries})


def seal(state_dir: str, batch_id: str, record: dict[str, Any]) -> bytes:
    """A MAC line under the state directory's key, then the JSON ``record``."""
    body = json.dumps(record).encode()
    key = journal_key(state_dir)
    assert key is not None  # create=True
    return MAGIC + _mac(key, batch_id, body).encode() + b"\n" + body


def read_intent(state_dir: str, batch_id: str, raw: bytes) -> dict[str, Any]:
    """The record of an intent whose MAC verifies, or :class:`BadIntent`."""
    head, sep, body = raw.partition(b"\n")
    if not sep or not head.startswith(MAGIC):
        raise BadIntent("it carries no MAC (forged, torn, or written by an older tooldeck)")
    key = journal_key(state_dir, create=False)
    if key is None:
        raise BadIntent(f"the state directory has no {KEY_NAME}, so no intent in it can be genuine")
    if not hmac.compare_digest(head[len(MAGIC) :], _mac(key, batch_id, body).encode()):
        raise BadIntent("its MAC does not verify (forged or altered)")
    try:
        record = json.loads(body)
    except ValueError as exc:
        raise BadIntent(f"its JSON does not parse ({exc})") from exc
    if not isinstance(record, dict) or record.get("batch") != batch_id:
        raise BadIntent("it names another batch")
    roots, entries = record.get("roots"), record.get("entries")
    if not isinstance(roots, list) or not isinstance(entries, list):
        raise BadIntent("it has no roots or entries list")
    return record


# ---------------------------------------------------------------------------
# one entry


def _plain(name: object) -> bool:
    """A single directory entry name: no separator, not ``.``/``..``, no NUL."""
    return (
        isinstance(name, str)
        and name not in ("", ".", "..")
        and "/" not in name
        and os.sep not in name
        and "\0" not in name
        and len(os.fsencode(name)) <= _NAME_MAX
    )


def _own_temp(name: object, batch_id: str, suffix: str) -> bool:
    return name is None or (
        _plain(name)
        and isinstance(name, str)
        and name.startswith(f"{TEMP_PREFIX}{batch_id}-")
        and name.endswith(suffix)
    )


ENTRY_FIELDS = frozenset({"root", "dirs", "name", "kind", "tmp", "backup", "size", "crc", "created"})


def entry_problem(raw: object, roots: list[Any], batch_id: str) -> str | None:
    """Why recovery must not act on the entry ``raw`` of an authenticated
    intent, or None when it may (see the module docstring)."""
    if not isinstance(raw, dict):
        return "not an object"
    if not raw.keys() <= ENTRY_FIELDS:
        return f"unknown fields {sorted(raw.keys() - ENTRY_FIELDS)}"
    root, dirs, created = raw.get("root"), raw.get("dirs"), raw.get("created", [])
    if not isinstance(root, str) or not os.path.isabs(root) or ".." in root.split(os.sep):
        return f"root {root!r} is not an absolute path"
    if root not in roots:
        return f"root {root!r} is not one of the batch's roots"
    if not isinstance(dirs, list) or not all(_plain(d) for d in dirs):
        return f"folder {dirs!r} is not a list of plain names"
    if not _plain(raw.get("name")):
        return f"name {raw.get('name')!r} is not a plain name"
    if raw.get("kind") not in ("write", "delete"):
        return f"kind {raw.get('kind')!r} is unknown"
    if not _own_temp(raw.get("tmp"), batch_id, ""):
        return f"temp file {raw.get('tmp')!r} is not one of this batch's"
    if not _own_temp(raw.get("backup"), batch_id, ".bak"):
        return f"backup {raw.get('backup')!r} is not one of this batch's"
    if not all(isinstance(raw.get(k, 0), int) and not isinstance(raw.get(k, 0), bool) for k in ("size", "crc")):
        return "size or crc is not a number"
    on_path = {"/".join(dirs[:n]) for n in range(1, len(dirs) + 1)}
    if not isinstance(created, list) or not all(c in on_path for c in created):
        return f"created folders {created!r} are not on the file's path"
    return None
