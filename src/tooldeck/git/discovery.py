"""What discovery found about a checkout, kept between calls while every file
it depends on is unchanged (issue 35: two git processes less per call).

Each git call used to start with two git processes: ``rev-parse`` (the
checkout's top level, its git directories, the object format, HEAD's commit
and branch) and a ``config`` listing (the filter drivers to blank, which
must be known before any command that may hash a working-tree file runs).
Their answers depend on files only, since every ``GIT_*`` variable is
dropped (:func:`tooldeck.git.runner.safe_env`):

* the folders from the directory up to the checkout's top (git looks for a
  ``.git`` in each) and their ``.git`` entries;
* the git directories, their ``HEAD``, ``commondir``, ``gitdir``, the ref
  HEAD names (loose, ``packed-refs``, a reftable's ``tables.list``);
* the configuration: ``/etc/gitconfig``, the person's ``~/.gitconfig`` and
  ``$XDG_CONFIG_HOME/git/config``, the repository's ``config`` and
  ``config.worktree``, every file the listing names as an origin, and every
  ``include.path`` / ``includeIf.*.path`` target, present or not (an
  ``onbranch:`` condition follows HEAD, which is in the snapshot too).

An answer is kept with a **snapshot** of them: the bytes of each file (not
its timestamps: a file rewritten within one clock tick at the same size
keeps its mtime, never its bytes), and the identity (device, inode, owner,
type) of each folder. It is reused while a fresh snapshot is equal, so a
changed configuration, a commit, a checkout or a planted ``.git`` is seen
by the next call. The snapshot is taken *before* git runs and again after;
an answer is kept only when both agree and name the same files, so what is
kept is what git read. What cannot be captured soundly is never kept (each
call then asks git, as before): a symbolic link among the folders or ``.git``
entries, a file that is not a regular file (a FIFO), a file over
:data:`MAX_FILE_BYTES`, an include path with ``%(prefix)``, a read error
other than "no such file" or "permission denied".

What it does not change: the check that the ``.git`` entry belongs to the
checkout (:func:`tooldeck.git.repo.check_git_entry`) runs on every call, and
a configuration changed *while* a call's diff runs is seen by git as before
(that race is git's own and was there with two processes too).
"""

from __future__ import annotations

import functools
import os
import stat
import threading
from collections import OrderedDict
from collections.abc import Iterable, Sequence
from dataclasses import dataclass

from tooldeck.git.access import git_dirs, git_exe

MAX_FILE_BYTES = 256 << 10  # a larger file (a big packed-refs) is not snapshotted: that checkout is asked each call
MAX_ENTRIES = 32  # directories remembered (least recently used dropped)
_REF_HOPS = 5  # symbolic refs followed from HEAD

State = object  # a file's bytes, None (missing), "denied", or a folder's identity tuple
Snapshot = tuple[tuple[str, State], ...]


class Uncacheable(Exception):
    """Something the snapshot cannot capture soundly: ask git every call."""


@dataclass(frozen=True, slots=True)
class Found:
    """What the two discovery processes printed, parsed."""

    lines: tuple[str, ...]  # rev-parse: top level, git dir, common dir, object format[, HEAD id, HEAD's full name]
    filters: tuple[str, ...]  # the ``-c`` overrides blanking every filter driver


@dataclass(frozen=True, slots=True)
class Plan:
    """The files and folders an answer depends on."""

    directory: str
    toplevel: str
    git_dir: str
    common_dir: str
    config_files: tuple[str, ...]  # origins and include targets from the config listing

    def folders(self) -> list[str]:
        """The directory and each folder above it up to the top level."""
        out = [self.directory]
        d = self.directory
        while d != self.toplevel and d.startswith(self.toplevel + os.sep):
            d = os.path.dirname(d)
            out.append(d)
        return out


def file_state(path: str) -> State:
    """The bytes of ``path`` as git would read it (links followed), None when
    it does not exist, ``"denied"`` when it cannot be opened."""
    try:
        fd = os.open(path, os.O_RDONLY | os.O_NONBLOCK | os.O_CLOEXEC)
    except (FileNotFoundError, NotADirectoryError):
        return None
    except PermissionError:
        return "denied"
    except OSError as exc:
        raise Uncacheable(f"{path}: {exc.strerror}") from exc
    try:
        st = os.fstat(fd)
        if not stat.S_ISREG(st.st_mode) or st.st_size > MAX_FILE_BYTES:
            raise Uncacheable(f"{path} is not a small regular file")
        data = os.read(fd, st.st_size + 1)  # its size, not the cap: a large buffer costs more than the read
        if len(data) > MAX_FILE_BYTES:
            raise Uncacheable(f"{path} grew past {MAX_FILE_BYTES} bytes")
        return data
    finally:
        os.close(fd)


def entry_state(path: str) -> State:
    """A folder's identity, or a ``.git`` file's bytes; None when missing.
    A symbolic link (or anything else) is :class:`Uncacheable`."""
    try:
        st = os.lstat(path)
    except (FileNotFoundError, NotADirectoryError):
        return None
    except OSError as exc:
        raise Uncacheable(f"{path}: {exc.strerror}") from exc
    if stat.S_ISDIR(st.st_mode):
        return ("dir", st.st_dev, st.st_ino, st.st_uid, st.st_mode)
    if stat.S_ISREG(st.st_mode):
        return ("file", st.st_uid, file_state(path))
    raise Uncacheable(f"{path} is a link or a special file")


def _git_identity() -> State:
    exe = os.path.realpath(git_exe())
    try:
        st = os.stat(exe)
    except OSError:
        return None
    return ("git", exe, st.st_dev, st.st_ino, st.st_size, st.st_mtime_ns)


def take(plan: Plan) -> Snapshot:
    """The snapshot of everything ``plan`` names (see the module docstring)."""
    entries, files = _paths(plan, *_config_home())
    out: list[tuple[str, State]] = [("<git>", _git_identity())]
    out += [(e, entry_state(e)) for e in entries]
    out += [(f, file_state(f)) for f in files]
    out += _head_chain(plan)
    return tuple(out)


def _config_home() -> tuple[str, str]:
    home = os.path.expanduser("~")
    return home, os.environ.get("XDG_CONFIG_HOME") or os.path.join(home, ".config")


@functools.lru_cache(maxsize=64)
def _paths(plan: Plan, home: str, xdg: str) -> tuple[tuple[str, ...], tuple[str, ...]]:
    """The folders and ``.git`` entries, and the files, ``plan`` names
    (worked out once per plan: a snapshot is taken on every call)."""
    entries: list[str] = []
    for d in plan.folders():
        entries += [d, os.path.join(d, ".git")]
    entries += [plan.git_dir, plan.common_dir]
    files = [os.path.join(plan.git_dir, n) for n in ("commondir", "gitdir", "config.worktree")]
    files += [os.path.join(plan.common_dir, n) for n in ("config", "packed-refs", "reftable/tables.list")]
    files += ["/etc/gitconfig", os.path.join(home, ".gitconfig"), os.path.join(xdg, "git", "config")]
    files += plan.config_files
    return tuple(dict.fromkeys(entries)), tuple(dict.fromkeys(files))


def _head_chain(plan: Plan) -> list[tuple[str, State]]:
    """HEAD and each loose ref it names, in both git directories."""
    out: list[tuple[str, State]] = []
    name = "HEAD"
    for _ in range(_REF_HOPS):
        dirs = dict.fromkeys((plan.git_dir, plan.common_dir))
        states = [(os.path.join(d, name), file_state(os.path.join(d, name))) for d in dirs]
        out += states
        text = next((s for _, s in states if isinstance(s, bytes)), b"").decode("utf-8", "replace").strip()
        if not text.startswith("ref:"):
            return out
        name = text.removeprefix("ref:").strip()
        if not name.startswith("refs/") or ".." in name.split("/"):
            raise Uncacheable(f"HEAD names {name!r}")
    raise Uncacheable("HEAD is a chain of symbolic refs too long to follow")


def guess(directory: str, hint: Iterable[str] = ()) -> Plan | None:
    """The plan before git runs, found as git finds it (the nearest ``.git``
    at or above ``directory``); None when there is none."""
    d = directory
    while True:
        entry = os.path.join(d, ".git")
        if os.path.lexists(entry):
            break
        parent = os.path.dirname(d)
        if parent == d:
            return None
        d = parent
    found = git_dirs(entry)
    git_dir = os.path.realpath(found[1] if len(found) > 1 else entry)
    common = os.path.realpath(found[2]) if len(found) > 2 else git_dir
    return Plan(directory, d, git_dir, common, tuple(hint))


def config_listing(text: str, cwd: str) -> tuple[tuple[str, ...], tuple[str, ...] | None]:
    """From ``git config --list --show-origin -z``: the ``-c`` overrides that
    blank every clean/smudge/process filter driver, and the files the
    configuration came from or includes, present or not (None when one of
    them cannot be named for sure: the answer is then not kept)."""
    tokens = text.split("\0")
    drivers: list[str] = []
    files: list[str] | None = []
    for origin, item in zip(tokens[0::2], tokens[1::2], strict=False):
        key, has_value, value = item.partition("\n")
        lower = key.lower()
        origin_file = origin.removeprefix("file:") if origin.startswith("file:") else None
        if origin_file is not None and files is not None:
            files.append(os.path.normpath(os.path.join(cwd, origin_file)))
        if lower.startswith("filter.") and lower.rsplit(".", 1)[-1] in ("clean", "smudge", "process"):
            name = key[len("filter.") : key.rfind(".")]
            if name and name not in drivers:
                drivers.append(name)
        include = lower == "include.path" or (lower.startswith("includeif.") and lower.endswith(".path"))
        if include and files is not None:
            target = _include_target(value if has_value else "", origin_file, cwd)
            files = None if target is None else [*files, target]
    out: list[str] = []
    for name in drivers:
        out += [f"filter.{name}.clean=", f"filter.{name}.smudge=", f"filter.{name}.process="]
        out.append(f"filter.{name}.required=false")
    return tuple(out), None if files is None else tuple(dict.fromkeys(files))


def _include_target(value: str, origin_file: str | None, cwd: str) -> str | None:
    """The file an include names (None: not sure which: git's ``%(prefix)``,
    a relative path outside a file)."""
    if not value or value.startswith("%(prefix)"):
        return None
    if value.startswith("~/") or value == "~":
        return os.path.normpath(os.path.expanduser(value))
    if os.path.isabs(value):
        return os.path.normpath(value)
    if origin_file is None:
        return None
    return os.path.normpath(os.path.join(cwd, os.path.dirname(origin_file), value))


@dataclass(frozen=True, slots=True)
class _Entry:
    plan: Plan
    snapshot: Snapshot
    found: Found


class DiscoveryCache:
    """Answers by directory (and the environment git's configuration
    depends on), reused while :func:`take` gives the same snapshot."""

    def __init__(self, max_entries: int = MAX_ENTRIES) -> None:
        self._lock = threading.Lock()
        self._entries: OrderedDict[tuple[str, ...], _Entry] = OrderedDict()
        self._hints: dict[tuple[str, ...], tuple[str, ...]] = {}
        self._max = max_entries
        self.hits = 0

    @staticmethod
    def _key(directory: str) -> tuple[str, ...]:
        return (directory, os.environ.get("HOME", ""), os.environ.get("XDG_CONFIG_HOME", ""), git_exe())

    def get(self, directory: str) -> Found | None:
        key = self._key(directory)
        with self._lock:
            entry = self._entries.get(key)
        if entry is None:
            return None
        try:
            fresh = take(entry.plan)
        except Uncacheable:
            fresh = None
        with self._lock:
            if fresh != entry.snapshot:
                if self._entries.get(key) is entry:
                    del self._entries[key]
                return None
            self._entries.move_to_end(key)
            self.hits += 1
        return entry.found

    def before(self, directory: str) -> tuple[Plan, Snapshot] | None:
        """The snapshot taken before git runs (None: nothing to keep)."""
        with self._lock:
            hint = self._hints.get(self._key(directory), ())
        plan = guess(directory, hint)
        if plan is None:
            return None
        try:
            return plan, take(plan)
        except Uncacheable:
            return None

    def keep(
        self, directory: str, pre: tuple[Plan, Snapshot] | None, found: Found, config_files: Sequence[str]
    ) -> bool:
        """Keep ``found`` when the files it depends on were all in the
        snapshot taken before git ran, and are unchanged since; else remember
        the configuration's files for the next call's snapshot. Whether it
        was kept."""
        key = self._key(directory)
        toplevel, git_dir, common_dir = found.lines[:3]
        with self._lock:
            self._hints[key] = tuple(config_files)
            if len(self._hints) > 4 * self._max:
                self._hints.pop(next(iter(self._hints)))
        if pre is None:
            return False
        plan, before = pre
        if (plan.toplevel, plan.git_dir, plan.common_dir) != (toplevel, git_dir, common_dir):
            return False
        if not set(config_files) <= {path for path, _ in before}:
            return False
        try:
            after = take(plan)
        except Uncacheable:
            return False
        if after != before:
            return False
        with self._lock:
            self._entries[key] = _Entry(plan, after, found)
            self._entries.move_to_end(key)
            while len(self._entries) > self._max:
                self._entries.popitem(last=False)
        return True

    def clear(self) -> None:
        with self._lock:
            self._entries.clear()
            self._hints.clear()


DISCOVERY = DiscoveryCache()
