"""Placeholders on the host for what a sandboxed run must not create in a write root.

Why they exist: a read-only bind needs something to mount on. A write root
without a repository has no ``.git`` to bind read-only, and a model that runs
``git init && git config core.fsmonitor "..."`` there plants a command the
person's next ``git status`` runs. So tooldeck creates an empty ``.git``
folder (and an empty ``HEAD`` file, see :mod:`tooldeck.shell.gitguard`) in the
root on the host, the sandbox mounts read-only things on them, and when the
last run using them ends they are removed again.

Why a registry: two runs on the same root may overlap (two tools of one
server, a server and a ``tooldeck call``). The first creates a placeholder,
the last removes it; removing it while another run's sandbox still has it as
a mount point would lift that run's protection (rmdir of a mount point in
another namespace detaches the mount). So every placeholder is recorded in
``<state dir>/sandbox/placeholders.json`` with its holders — each one a run of
a process named by pid *and* start time, so a holder whose process died
(killed, crashed) is recognised and dropped; every change happens under an
exclusive lock on ``placeholders.lock``. Each acquire also sweeps records
without a live holder, so a crash leaves a placeholder behind only until the
next sandboxed run of any root (or the next server start).

A placeholder is removed only while it is still what tooldeck made (an
empty folder, an empty file): if the person ran ``git init`` on the host
meanwhile, their repository stays and only the record goes.
"""

from __future__ import annotations

import contextlib
import json
import os
import stat
import uuid
from dataclasses import dataclass

from tooldeck.workspace.dirfd import open_root
from tooldeck.workspace.statefiles import exclusive_lock, read_private, write_private_atomic

Kind = str  # "dir" | "file"


def _start_time(pid: int) -> str | None:
    """The process's start time in clock ticks since boot (field 22 of /proc/PID/stat)."""
    try:
        with open(f"/proc/{pid}/stat", "rb") as fh:
            text = fh.read().decode("ascii", "replace")
    except OSError:
        return None
    return text.rsplit(")", 1)[-1].split()[19]


def _alive(holder: str) -> bool:
    pid, start, _run = holder.split(":", 2)
    return pid.isdigit() and _start_time(int(pid)) == start


def _pristine(path: str, kind: Kind) -> bool:
    """Whether ``path`` is still an empty folder / empty regular file (what was made)."""
    try:
        st = os.lstat(path)
    except OSError:
        return False
    if kind == "dir":
        if not stat.S_ISDIR(st.st_mode):
            return False
        try:
            return not os.listdir(path)
        except OSError:
            return False
    return stat.S_ISREG(st.st_mode) and st.st_size == 0


def _make(path: str, kind: Kind) -> bool:
    """Create the placeholder (never through a link: the root's own descriptor)."""
    root, name = os.path.split(path)
    try:
        fd = open_root(root)
    except OSError:
        return False
    try:
        if kind == "dir":
            os.mkdir(name, 0o755, dir_fd=fd)
        else:
            flags = os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW | os.O_CLOEXEC
            os.close(os.open(name, flags, 0o444, dir_fd=fd))
        return True
    except OSError:
        return False
    finally:
        os.close(fd)


def _remove(path: str, kind: Kind) -> None:
    if not _pristine(path, kind):
        return  # the person made it real meanwhile (git init on the host): theirs now
    root, name = os.path.split(path)
    with contextlib.suppress(OSError):
        fd = open_root(root)
        try:
            if kind == "dir":
                os.rmdir(name, dir_fd=fd)
            else:
                os.unlink(name, dir_fd=fd)
        finally:
            os.close(fd)


@dataclass(slots=True)
class Held:
    """What one run holds: release it exactly once."""

    token: str
    paths: list[str]


class Placeholders:
    """The refcounted placeholders of one state directory."""

    def __init__(self, state_dir: str | os.PathLike[str]) -> None:
        self.dir = os.path.join(os.fspath(state_dir), "sandbox")
        self.lock = os.path.join(self.dir, "placeholders.lock")
        self.data = os.path.join(self.dir, "placeholders.json")

    def _load(self) -> dict[str, dict]:
        try:
            raw = read_private(self.data)
            records = json.loads(raw) if raw else {}
        except (OSError, ValueError):
            records = {}
        return records if isinstance(records, dict) else {}

    def _save(self, records: dict[str, dict]) -> None:
        write_private_atomic(self.data, json.dumps(records, sort_keys=True).encode())

    @staticmethod
    def _sweep(records: dict[str, dict]) -> None:
        """Drop dead holders; a record left without one is a crash leftover: remove it."""
        for path in list(records):
            rec = records[path]
            rec["holders"] = [h for h in rec.get("holders", []) if _alive(h)]
            if not rec["holders"]:
                _remove(path, rec.get("kind", "dir"))
                del records[path]

    def sweep(self) -> None:
        """Remove the leftovers of runs whose process is gone (nothing to do without a registry)."""
        if not os.path.exists(self.data):
            return
        with exclusive_lock(self.lock):
            records = self._load()
            if records:
                self._sweep(records)
                self._save(records)

    def registered(self, path: str) -> bool:
        """Whether ``path`` is a placeholder with a live holder (read without the lock: a hint)."""
        rec = self._load().get(path)
        return bool(rec) and any(_alive(h) for h in rec.get("holders", []))

    def acquire(self, wanted: list[tuple[str, Kind]]) -> Held:
        """Hold a placeholder at each wanted path that is missing or already one of
        ours; a path that exists and is not ours is left alone (not held)."""
        token = f"{os.getpid()}:{_start_time(os.getpid())}:{uuid.uuid4().hex}"
        if not wanted:
            return Held(token, [])
        os.makedirs(self.dir, mode=0o700, exist_ok=True)
        held: list[str] = []
        with exclusive_lock(self.lock):
            records = self._load()
            self._sweep(records)
            for path, kind in wanted:
                rec = records.get(path)
                if rec is None and not os.path.lexists(path) and _make(path, kind):
                    rec = records[path] = {"kind": kind, "holders": []}
                if rec is None or not _pristine(path, rec.get("kind", kind)):
                    continue
                rec["holders"].append(token)
                held.append(path)
            self._save(records)
        return Held(token, held)

    def release(self, held: Held) -> None:
        if not held.paths:
            return
        with exclusive_lock(self.lock):
            records = self._load()
            for path in held.paths:
                rec = records.get(path)
                if rec is None:
                    continue
                rec["holders"] = [h for h in rec["holders"] if h != held.token]
                if not rec["holders"]:
                    _remove(path, rec.get("kind", "dir"))
                    del records[path]
            self._save(records)
