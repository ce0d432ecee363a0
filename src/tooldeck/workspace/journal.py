"""The write journal: how a batch of file changes survives a crash.

SQLite's discipline, applied to files of a root. Before the first rename of a
batch, its intent — for every file: where it is, the temp file holding its new
content, where the old content is kept, the new content's size and CRC — is
written to ``<state_dir>/journal/<batch>/intent.json`` (and, for a batch that
can be undone, fsynced). Then the renames; then ``intent.json`` becomes
``done.json`` (the commit point); then, off the critical path, the backups and
the journal are removed.

A writer holds an ``flock`` on its journal file for the batch's whole life,
so a journal whose lock can be taken belongs to a dead process.
:func:`recover` (run when a Runtime starts and before every batch commits)
finds those and puts every file of each batch on one side: a batch that
reached ``done.json`` is finished (only its leftovers are removed); any other
is undone file by file (the backup renamed back, a created file removed) —
except a file that no longer holds the batch's new bytes, which another
writer has changed since and is left alone. Temp files are removed either way.

Recovery acts only on what a tooldeck writer of this state directory wrote
(:mod:`tooldeck.workspace.intent`): an intent carries an HMAC under the state
directory's key, and each entry must name one of the batch's recorded roots,
plain names beneath it and the batch's own temp files. An intent or entry
that fails is never acted on: it is logged and the journal is moved to
``<state_dir>/journal-quarantine/``. The state directory itself is outside
every root (:mod:`tooldeck.workspace.hidden`), so no tool can write a journal.
"""

from __future__ import annotations

import fcntl
import logging
import os
import secrets
import stat
import threading
import time
import zlib
from dataclasses import dataclass, field

from tooldeck.core.errors import ToolError
from tooldeck.workspace import locks
from tooldeck.workspace.deferred import after_reply as after_reply  # re-exported: callers reach them here
from tooldeck.workspace.deferred import flush as flush
from tooldeck.workspace.deferred import later as later
from tooldeck.workspace.fsops import (
    CHUNK,
    CLOEXEC,
    READ_FLAGS,
    fsync_quiet,
    lstat_at,
    open_dir,
    rmdirs_quiet,
    unlink_quiet,
)
from tooldeck.workspace.intent import BadIntent, encode_intent, entry_problem, read_intent
from tooldeck.workspace.statefiles import JOURNAL_DIR

log = logging.getLogger("tooldeck.journal")

INTENT = "intent.json"
INTENT_TMP = "intent.json.new"
DONE = "done.json"
QUARANTINE = "journal-quarantine"
STALE_EMPTY_SECONDS = 60.0

_live: set[str] = set()  # batch ids of this process still running or awaiting cleanup
_live_lock = threading.Lock()


@dataclass
class Entry:
    """One file of a batch, as the journal records it."""

    root: str
    dirs: list[str]
    name: str
    kind: str  # "write" | "delete"
    tmp: str | None = None  # staged new content, a name in the target's folder
    backup: str | None = None  # the old content's name: in the journal folder, else in the target's
    size: int = -1  # the new content's size and CRC: "does the target still hold what we wrote?"
    crc: int = 0
    created: list[str] = field(default_factory=list)  # folders this batch made, relative to the root


def keys_of(entries: list[Entry]) -> list[int]:
    """The lock keys of ``entries`` (:func:`locks.lock_keys`: each root resolved once)."""
    return locks.lock_keys((e.root, [*e.dirs, e.name]) for e in entries)


def crc_of(data: bytes) -> int:
    return zlib.crc32(data)


def _holds(dfd: int, name: str, size: int, crc: int) -> bool:
    try:
        fd = os.open(name, READ_FLAGS, dir_fd=dfd)
    except OSError:
        return False
    try:
        if os.fstat(fd).st_size != size:
            return False
        value = 0
        while chunk := os.read(fd, CHUNK):
            value = zlib.crc32(chunk, value)
        return value == crc
    finally:
        os.close(fd)


class Journal:
    """The on-disk record of one batch (see the module docstring)."""

    def __init__(self, state_dir: str, batch_id: str, dir_fd: int, file_fd: int) -> None:
        self.state_dir = state_dir
        self.batch_id = batch_id
        self.dir_fd = dir_fd  # the batch's journal folder (backups can be linked here)
        self._file_fd = file_fd  # intent.json, flock'ed while the batch lives
        self.closed = False

    @classmethod
    def begin(cls, state_dir: str, batch_id: str, entries: list[Entry], *, undoable: bool) -> Journal:
        base = os.path.join(state_dir, JOURNAL_DIR)
        with _live_lock:  # before the folder exists: no thread of ours may take it for dead
            _live.add(batch_id)
        try:
            os.mkdir(os.path.join(base, batch_id), 0o700)
        except FileNotFoundError:  # the first batch of this state directory: one mkdir, not three stats each time
            os.makedirs(base, mode=0o700, exist_ok=True)
            os.mkdir(os.path.join(base, batch_id), 0o700)
        dir_fd = os.open(os.path.join(base, batch_id), os.O_RDONLY | os.O_DIRECTORY | CLOEXEC)
        try:
            data = encode_intent(state_dir, batch_id, [vars(e) for e in entries], undoable)
            fd = cls._write_intent(dir_fd, data, undoable)
        except BaseException:
            unlink_quiet(dir_fd, INTENT_TMP)
            unlink_quiet(dir_fd, INTENT)
            os.close(dir_fd)
            os.rmdir(os.path.join(base, batch_id))
            with _live_lock:
                _live.discard(batch_id)
            raise
        if undoable:
            base_fd = os.open(base, os.O_RDONLY | os.O_DIRECTORY | CLOEXEC)
            fsync_quiet(base_fd)
            os.close(base_fd)
        return cls(state_dir, batch_id, dir_fd, fd)

    @staticmethod
    def _write_intent(dir_fd: int, data: bytes, undoable: bool) -> int:
        # written under another name, locked, then renamed: an intent.json
        # another process can open is always complete and always locked
        fd = os.open(INTENT_TMP, os.O_RDWR | os.O_CREAT | os.O_EXCL | CLOEXEC, 0o600, dir_fd=dir_fd)
        try:
            fcntl.flock(fd, fcntl.LOCK_EX)
            view = memoryview(data)
            while view:
                view = view[os.write(fd, view) :]
            if undoable:  # the intent must be on disk before the first rename
                fsync_quiet(fd)
            os.rename(INTENT_TMP, INTENT, src_dir_fd=dir_fd, dst_dir_fd=dir_fd)
        except BaseException:
            os.close(fd)
            raise
        return fd

    def same_device(self, st_dev: int) -> bool:
        return os.fstat(self.dir_fd).st_dev == st_dev

    def mark_done(self) -> None:
        """The commit point: from here on recovery finishes the batch."""
        os.rename(INTENT, DONE, src_dir_fd=self.dir_fd, dst_dir_fd=self.dir_fd)

    def release(self) -> None:
        """Let go of the journal without deleting anything (recovery refused it)."""
        if not self.closed:
            self.closed = True
            os.close(self._file_fd)
            os.close(self.dir_fd)
            with _live_lock:
                _live.discard(self.batch_id)

    def remove(self) -> None:
        """Delete the journal folder and everything in it, then let go of it."""
        if self.closed:
            return
        try:
            for name in os.listdir(self.dir_fd):
                if name not in (INTENT, DONE):  # backups and a half-written intent
                    unlink_quiet(self.dir_fd, name)
            unlink_quiet(self.dir_fd, DONE)
            unlink_quiet(self.dir_fd, INTENT)
            os.rmdir(os.path.join(self.state_dir, JOURNAL_DIR, self.batch_id))
        except OSError as exc:
            log.warning("could not remove journal %s: %s", self.batch_id, exc)
        finally:
            self.closed = True
            os.close(self._file_fd)
            os.close(self.dir_fd)
            with _live_lock:
                _live.discard(self.batch_id)


# ---------------------------------------------------------------------------
# undoing one file


def _find_backup(e: Entry, dfd: int | None, jfd: int | None) -> tuple[int, os.stat_result] | None:
    """Where the old content of ``e`` was kept: the journal folder, else beside the target."""
    if not e.backup:
        return None
    for fd in (jfd, dfd):
        if fd is not None:
            st = lstat_at(fd, e.backup)
            if st is not None:
                return fd, st
    return None


def undo_entry(e: Entry, dfd: int, jfd: int | None, applied: bool | None) -> None:
    """Put one file of an unfinished batch back as it was before the batch.

    ``applied``: whether the caller knows its change was made; None (crash
    recovery) judges from the disk — the change was made if its temp file is
    gone and the target holds the batch's new bytes."""
    found = _find_backup(e, dfd, jfd)
    target = lstat_at(dfd, e.name)
    tmp_left = e.tmp is not None and lstat_at(dfd, e.tmp) is not None
    if e.kind == "write":
        if applied is None:
            applied = (
                not tmp_left
                and target is not None
                and (found is None or target.st_ino != found[1].st_ino)
                and _holds(dfd, e.name, e.size, e.crc)
            )
        if found is not None and e.backup:
            if applied:
                os.rename(e.backup, e.name, src_dir_fd=found[0], dst_dir_fd=dfd)
            else:
                unlink_quiet(found[0], e.backup)
        elif applied:  # the batch created this file
            unlink_quiet(dfd, e.name)
    elif found is not None and e.backup:
        if applied is None:
            applied = target is None
        if applied and target is None:
            os.rename(e.backup, e.name, src_dir_fd=found[0], dst_dir_fd=dfd)
        else:
            unlink_quiet(found[0], e.backup)
    if tmp_left and e.tmp:
        unlink_quiet(dfd, e.tmp)


def drop_leftovers(e: Entry, dfd: int | None, jfd: int | None) -> None:
    """A finished batch: remove its temp file and backup, keep the new content."""
    if dfd is not None and e.tmp:
        unlink_quiet(dfd, e.tmp)
    found = _find_backup(e, dfd, jfd)
    if found is not None and e.backup:
        unlink_quiet(found[0], e.backup)


# ---------------------------------------------------------------------------
# recovery


def recover(state_dir: str | os.PathLike[str]) -> int:
    """Finish or undo every batch whose process died; returns how many."""
    base = os.path.join(os.fspath(state_dir), JOURNAL_DIR)
    try:
        names = os.listdir(base)
    except OSError:  # no journal yet (or an unreadable state directory: nothing we can recover)
        return 0
    done = 0
    for name in names:
        with _live_lock:
            if name in _live or name in _ignored:
                continue
        try:
            done += _recover_one(os.fspath(state_dir), base, name)
        except (OSError, ValueError, ToolError) as exc:
            log.error("could not recover interrupted write %s: %s", name, exc)
    return done


def new_batch_id() -> str:
    """``<pid>-<random>``: the pid tells a journal folder without an intent
    (its writer died between the two) from one whose writer is still starting."""
    return f"{os.getpid()}-{secrets.token_hex(5)}"


def _alive(batch_id: str) -> bool:
    try:
        os.kill(int(batch_id.split("-", 1)[0]), 0)
    except ProcessLookupError:
        return False
    except (ValueError, OSError):
        return True  # not ours to judge (another user's process, an odd name): the age rule decides
    return True


def _open_intent(dir_fd: int) -> int:
    """The batch's ``done.json`` or ``intent.json`` (-1 when neither), never
    through a link and never blocking on a FIFO planted under its name."""
    for fname in (DONE, INTENT):
        try:
            fd = os.open(fname, READ_FLAGS, dir_fd=dir_fd)
        except FileNotFoundError:
            continue
        if not stat.S_ISREG(os.fstat(fd).st_mode):
            os.close(fd)
            raise OSError(f"{fname} is not a regular file")
        return fd
    return -1


def _recover_one(state_dir: str, base: str, batch_id: str) -> int:
    path = os.path.join(base, batch_id)
    try:
        dir_fd = os.open(path, os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW | CLOEXEC)
    except OSError:
        return 0
    try:
        file_fd = _open_intent(dir_fd)
    except OSError as exc:
        os.close(dir_fd)
        _ignore(state_dir, base, batch_id, str(exc))
        return 0
    if file_fd < 0:  # died before its intent was complete (or while removing it): nothing was staged
        try:
            if not _alive(batch_id) or time.time() - os.fstat(dir_fd).st_mtime > STALE_EMPTY_SECONDS:
                unlink_quiet(dir_fd, INTENT_TMP)
                os.rmdir(path)
        except OSError:
            pass
        finally:
            os.close(dir_fd)
        return 0
    try:
        fcntl.flock(file_fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except OSError:  # a live batch
        os.close(file_fd)
        os.close(dir_fd)
        return 0
    journal = Journal(state_dir, batch_id, dir_fd, file_fd)
    with _live_lock:
        _live.add(batch_id)
    problem: str | None = None
    try:
        if os.fstat(file_fd).st_nlink == 0:
            return 0  # another process recovered it meanwhile
        problem = _recover_record(state_dir, batch_id, file_fd, dir_fd)
        return 1 if problem is None else 0
    finally:
        if problem is None:
            journal.remove()
        else:
            journal.release()
            _ignore(state_dir, base, batch_id, problem)


def _recover_record(state_dir: str, batch_id: str, file_fd: int, dir_fd: int) -> str | None:
    """Act on the authenticated entries of one dead batch; what was wrong
    with the intent or an entry (nothing was done for those), or None."""
    finished = lstat_at(dir_fd, DONE) is not None
    raw = b"".join(iter(lambda: os.read(file_fd, CHUNK), b""))
    try:
        record = read_intent(state_dir, batch_id, raw)
    except BadIntent as exc:
        return f"intent ignored: {exc}"
    entries: list[Entry] = []
    problems: list[str] = []
    for i, item in enumerate(record["entries"]):
        bad = entry_problem(item, record["roots"], batch_id)
        if bad is None:
            entries.append(Entry(**item))
        else:
            problems.append(f"entry {i} ignored: {bad}")
    _settle(state_dir, entries, dir_fd, undo=record.get("undoable") is True and not finished)
    log.warning("recovered interrupted write %s (%s)", batch_id, "finished" if finished else "undone")
    return "; ".join(problems) or None


_ignored: set[str] = set()  # batch ids reported and left in place (quarantine failed): not read again


def _ignore(state_dir: str, base: str, batch_id: str, why: str) -> None:
    """Report a journal recovery will not act on (whole, or some entries) and
    move it out of the way, to ``<state_dir>/journal-quarantine/``: never
    acted on, kept for whoever looks into it, and not read again at the next
    batch. Left in place (and skipped by this process) if it cannot be moved."""
    where = os.path.join(state_dir, QUARANTINE)
    dest = os.path.join(where, f"{batch_id}-{int(time.time())}")
    try:
        os.makedirs(where, mode=0o700, exist_ok=True)
        os.rename(os.path.join(base, batch_id), dest)
    except OSError as exc:
        dest = f"left in place ({exc.strerror or exc})"
        with _live_lock:
            _ignored.add(batch_id)
    log.error("journal %s of %s was not acted on: %s; %s", batch_id, state_dir, why, dest)


def _settle(state_dir: str, entries: list[Entry], jfd: int, *, undo: bool) -> None:
    with locks.hold(state_dir, keys_of(entries), "files of an interrupted write"):
        for e in reversed(entries):
            try:
                dfd = open_dir(e.root, e.dirs, create=False)
            except (OSError, ToolError):
                drop_leftovers(e, None, jfd)
                continue
            try:
                if undo:
                    undo_entry(e, dfd, jfd, None)
                else:
                    drop_leftovers(e, dfd, jfd)
            finally:
                os.close(dfd)
            rmdirs_quiet(e.root, e.created)
