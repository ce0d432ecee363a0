"""All-or-nothing writes inside a root, safe against other writers and crashes.

What a write guarantees, and how:

* **Readers see the old file or the new one, never no file.** New content is
  staged in a temp file (``.tooldeck-tmp-*``, hidden from every listing) in
  the target's folder and renamed straight over the target. The old content
  is kept as a hard link (in the journal folder, else beside the target), not
  by moving the target away.
* **No lost update.** Under the per-file locks of :mod:`locks` (across threads
  and processes, taken in sorted order), every file is re-read and compared
  with what the caller computed its edit from (``expect`` bytes, an
  ``expect_digest``, or ``expect_absent``); a mismatch raises
  :class:`StaleWrite` (``conflict``) before anything changes, and
  :func:`retrying` lets a tool recompute its edit on the new content. A
  commit that returns has landed.
* **All or nothing, even across a crash.** A batch of several files is
  journaled first (:mod:`journal`); any failure undoes every file already
  changed, and a batch whose process died is undone (or, past its commit
  point, finished) by the next tooldeck process.

Folders are reached from the root with ``O_NOFOLLOW`` one component at a time
(:mod:`fsops`) and every operation is relative to that descriptor, so a
component swapped for a symlink fails the write instead of leading outside
the root; a final component that is a symlink is refused. Data is not
fsynced: this protects against other processes and kills, not power loss.
"""

from __future__ import annotations

import errno
import os
import random
import stat
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import TypeVar

from tooldeck.core.errors import ErrorCode, ToolError
from tooldeck.store.db import default_state_dir
from tooldeck.workspace import journal, locks
from tooldeck.workspace.fsops import (
    check_target,
    lstat_at,
    rmdirs_quiet,
    same_content,
    split_rel,
    unlink_quiet,
    write_new,
)
from tooldeck.workspace.fsops import open_dir as open_dir  # re-exported: callers reach folders this way
from tooldeck.workspace.journal import Entry, Journal
from tooldeck.workspace.tempnames import temp_name

T = TypeVar("T")

# Fault injection for tests: called with (step, rel_path) before each step of a
# batch commit ("stage", "apply", "done" after the commit point, and "cleanup"
# when the deferred cleanup starts, after the reply); raising there simulates
# an I/O failure (and ``os._exit`` there, a crash).
FaultHook = Callable[[str, str], None]
fault_hook: FaultHook | None = None

RETRY_ATTEMPTS = 40


class StaleWrite(ToolError):
    """The file changed between the caller's read and the commit."""

    def __init__(self, message: str) -> None:
        super().__init__(ErrorCode.CONFLICT, message)


def retrying(run: Callable[[int], T], *, attempts: int = RETRY_ATTEMPTS) -> T:
    """Call ``run(attempt)`` — read, compute the edit, commit — until it does
    not lose a race with another writer. A retry works on the new content; if
    the edit no longer applies there, the call fails with ``conflict``."""
    for attempt in range(attempts):
        try:
            return run(attempt)
        except StaleWrite:
            if attempt == attempts - 1:
                raise
            time.sleep(random.uniform(0, 0.001 * (attempt + 1)))
        except ToolError as exc:
            if attempt == 0 or exc.code == ErrorCode.CONFLICT:
                raise
            raise ToolError(
                ErrorCode.CONFLICT,
                "the file changed since this call read it (another writer) and the edit no longer applies to "
                f"the new content: {exc.message} Read the file again and redo the edit.",
                exc.details,
            ) from exc
    raise AssertionError("unreachable")


def _state_dir(state_dir: str | os.PathLike[str] | None) -> str:
    return os.fspath(state_dir) if state_dir is not None else os.fspath(default_state_dir())


def write_file(
    root_path: str,
    rel: str,
    data: bytes,
    *,
    mode: int | None = None,
    create_parents: bool = True,
    state_dir: str | os.PathLike[str] | None = None,
    expect: bytes | None = None,
    expect_absent: bool = False,
) -> None:
    """Atomically replace (or create) ``root/rel`` with ``data``, keeping its mode."""
    batch = AtomicBatch(state_dir)
    batch.write(root_path, rel, data, mode, expect=expect, expect_absent=expect_absent, parents=create_parents)
    batch.commit()


def remove_file(root_path: str, rel: str, *, state_dir: str | os.PathLike[str] | None = None) -> None:
    batch = AtomicBatch(state_dir)
    batch.delete(root_path, rel)
    batch.commit()


# --------------------------------------------------------------------------
# many files, all or nothing


@dataclass
class _Op:
    root: str
    rel: str
    data: bytes | None  # None = delete
    mode: int | None = None
    expect: bytes | None = None  # the target must still hold these bytes
    expect_digest: bytes | None = None  # ... or bytes with this SHA-256
    expect_absent: bool = False  # the target must still not exist
    parents: bool = True  # create missing folders
    dirs: list[str] = field(default_factory=list)
    name: str = ""
    dfd: int = -1
    entry: Entry | None = None
    applied: bool = False


class AtomicBatch:
    """Stage writes and deletes across files, then commit them all or none.

    ``write(root, rel, data)`` creates or replaces; ``delete(root, rel)``
    removes. A move is a write of the destination plus a delete of the source.
    ``expect`` / ``expect_digest`` (what the caller read) or ``expect_absent``
    make the commit refuse with :class:`StaleWrite` when another writer
    changed the file meanwhile. Locks and the journal live in ``state_dir``
    (default: the user's state directory).
    """

    def __init__(self, state_dir: str | os.PathLike[str] | None = None) -> None:
        self.state_dir = _state_dir(state_dir)
        self._ops: list[_Op] = []
        self._keys: set[tuple[str, ...]] = set()
        self._dirs: dict[tuple[str, ...], int] = {}
        self._batch_id = ""
        self.failed_rel: str | None = None

    def write(
        self,
        root_path: str,
        rel: str,
        data: bytes,
        mode: int | None = None,
        *,
        expect: bytes | None = None,
        expect_digest: bytes | None = None,
        expect_absent: bool = False,
        parents: bool = True,
    ) -> None:
        self._add(_Op(root_path, rel, data, mode, expect, expect_digest, expect_absent, parents))

    def delete(
        self, root_path: str, rel: str, *, expect: bytes | None = None, expect_digest: bytes | None = None
    ) -> None:
        self._add(_Op(root_path, rel, None, expect=expect, expect_digest=expect_digest))

    def _add(self, op: _Op) -> None:
        op.dirs, op.name = split_rel(op.rel)  # "./a" and "a" are one file
        key = (op.root, *op.dirs, op.name)
        if key in self._keys:
            raise ValueError(f"{op.rel!r} appears twice in one batch; merge its changes first")
        self._keys.add(key)
        self._ops.append(op)

    def __len__(self) -> int:
        return len(self._ops)

    def commit(self) -> None:
        """Write everything or nothing. On failure ``failed_rel`` names the
        file whose step failed and the exception is re-raised after rollback."""
        self.failed_rel = None
        journal.recover(self.state_dir)
        undoable = len(self._ops) > 1
        jr: Journal | None = None
        try:
            self._prepare(journal.new_batch_id(), undoable)
            entries = [op.entry for op in self._ops if op.entry is not None]
            if undoable or any(e.tmp for e in entries):
                jr = Journal.begin(self.state_dir, self._batch_id, entries, undoable=undoable)
            for op in self._ops:
                self.failed_rel = op.rel
                self._stage(op)
            with locks.hold(self.state_dir, journal.keys_of(entries), self._what()):
                try:
                    self._swap(jr)
                except BaseException:
                    self._rollback(jr)
                    raise
            self.failed_rel = None
        except BaseException:
            self._discard(jr)
            raise
        dirs, self._dirs = list(self._dirs.values()), {}
        for op in self._ops:  # the cleanup job must not keep the contents alive
            op.data = op.expect = None
        journal.later(lambda: self._cleanup(jr, dirs))

    # internals ----------------------------------------------------------------
    def _what(self) -> str:
        return repr(self._ops[0].rel) if len(self._ops) == 1 else f"{len(self._ops)} files"

    def _prepare(self, batch_id: str, undoable: bool) -> None:
        """Reach every folder, check every target, name temp files and backups."""
        self._batch_id = batch_id
        for i, op in enumerate(self._ops):
            self.failed_rel = op.rel
            where = (op.root, *op.dirs)
            created: list[str] = []
            if where not in self._dirs:  # one descriptor per folder, not per file
                self._dirs[where] = open_dir(
                    op.root, op.dirs, create=op.data is not None and op.parents, created=created
                )
            op.dfd = self._dirs[where]
            st = lstat_at(op.dfd, op.name)
            check_target(st, op.rel)
            self._check_expectations(op, st, locked=False)
            e = Entry(op.root, op.dirs, op.name, "write" if op.data is not None else "delete", created=created)
            if op.data is not None:
                e.tmp = temp_name(batch_id, i)
                if op.mode is None and st is not None:
                    op.mode = stat.S_IMODE(st.st_mode)
                if undoable:
                    e.size, e.crc = len(op.data), journal.crc_of(op.data)
            if undoable:
                e.backup = temp_name(batch_id, i, ".bak")
            op.entry = e

    def _check_expectations(self, op: _Op, st: os.stat_result | None, *, locked: bool) -> None:
        if op.expect_absent and st is not None:
            raise StaleWrite(f"{op.rel!r} was created meanwhile by another writer; nothing changed")
        if op.data is None and st is None:
            raise ToolError(ErrorCode.NOT_FOUND, f"{op.rel!r} does not exist; nothing was changed")
        if op.expect is None and op.expect_digest is None:
            return
        if not locked:  # the authoritative comparison happens under the lock
            if st is None or (op.expect is not None and st.st_size != len(op.expect)):
                raise StaleWrite(_changed(op.rel))
            return
        if st is None or not same_content(op.dfd, op.name, op.expect, op.expect_digest):
            raise StaleWrite(_changed(op.rel))

    def _stage(self, op: _Op) -> None:
        if fault_hook:
            fault_hook("stage", op.rel)
        if op.data is not None and op.entry is not None and op.entry.tmp:
            write_new(op.dfd, op.entry.tmp, op.data, op.mode)

    def _swap(self, jr: Journal | None) -> None:
        """Under the locks: compare, keep the old content, rename the new in."""
        for op in self._ops:
            self.failed_rel = op.rel
            st = lstat_at(op.dfd, op.name)
            check_target(st, op.rel)
            self._check_expectations(op, st, locked=True)
            if st is not None and op.entry is not None and op.entry.backup:
                _keep_backup(op.dfd, op.name, jr, op.entry.backup)
        for op in self._ops:
            self.failed_rel = op.rel
            if fault_hook:
                fault_hook("apply", op.rel)
            e = op.entry
            if e is not None and e.tmp:
                os.rename(e.tmp, op.name, src_dir_fd=op.dfd, dst_dir_fd=op.dfd)
            else:
                os.unlink(op.name, dir_fd=op.dfd)
            op.applied = True
        if jr is not None and len(self._ops) > 1:
            jr.mark_done()
            if fault_hook:
                fault_hook("done", "")

    def _rollback(self, jr: Journal | None) -> None:
        # best effort for every op: one failed restore must not stop the others
        for op in reversed(self._ops):
            if op.dfd < 0 or op.entry is None:
                continue
            try:
                journal.undo_entry(op.entry, op.dfd, jr.dir_fd if jr else None, op.applied)
            except OSError as exc:
                journal.log.error("could not restore %s: %s", op.rel, exc)

    def _discard(self, jr: Journal | None) -> None:
        """After a failure: no temp file, no created folder, no journal left."""
        for op in self._ops:
            if op.dfd >= 0 and op.entry is not None and op.entry.tmp and not op.applied:
                unlink_quiet(op.dfd, op.entry.tmp)
        for fd in self._dirs.values():
            os.close(fd)
        self._dirs.clear()
        for op in reversed(self._ops):
            if op.entry is not None and op.entry.created:
                rmdirs_quiet(op.root, op.entry.created)
            op.dfd = -1
        if jr is not None:
            jr.remove()

    def _cleanup(self, jr: Journal | None, dirs: list[int]) -> None:
        """After success, off the critical path: drop backups, then the journal."""
        try:
            if fault_hook:
                fault_hook("cleanup", "")
            for op in self._ops:
                if op.entry is not None and op.entry.backup:
                    journal.drop_leftovers(op.entry, op.dfd, jr.dir_fd if jr else None)
        finally:
            for fd in dirs:
                os.close(fd)
            for op in self._ops:
                op.dfd = -1
            if jr is not None:
                jr.remove()


def _changed(rel: str) -> str:
    return f"{rel!r} changed since it was read (another writer); read it again and redo the edit. Nothing was changed"


def _keep_backup(dfd: int, name: str, jr: Journal | None, backup: str) -> None:
    """A second name for the old content: a hard link in the journal folder,
    else beside the target (another filesystem), else a copy."""
    if jr is not None:
        try:
            os.link(name, backup, src_dir_fd=dfd, dst_dir_fd=jr.dir_fd, follow_symlinks=False)
            return
        except OSError as exc:
            if exc.errno not in (errno.EXDEV, errno.EPERM, errno.EMLINK, errno.ENOTSUP):
                raise
    try:
        os.link(name, backup, src_dir_fd=dfd, dst_dir_fd=dfd, follow_symlinks=False)
        return
    except OSError as exc:
        if exc.errno not in (errno.EPERM, errno.EMLINK, errno.ENOTSUP):
            raise
    src = os.open(name, os.O_RDONLY | os.O_NOFOLLOW | os.O_CLOEXEC, dir_fd=dfd)
    try:
        mode = stat.S_IMODE(os.fstat(src).st_mode)
        dst = os.open(backup, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_CLOEXEC, mode, dir_fd=dfd)
        try:
            while chunk := os.read(src, 1 << 20):
                view = memoryview(chunk)
                while view:
                    view = view[os.write(dst, view) :]
        finally:
            os.close(dst)
    finally:
        os.close(src)
