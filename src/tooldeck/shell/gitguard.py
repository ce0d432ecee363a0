"""Which git directories a sandboxed run must see read-only, and the placeholders for the missing ones.

The threat: a git directory holds commands git runs on the host — hooks,
``core.fsmonitor``, ``core.pager``, filter drivers — so a model that can write
one plants a command the person's next ``git status`` runs. In a writable
sandbox every git directory under the write roots is therefore bound
read-only after the write binds:

* the root's ``.git`` (a folder, a link to one, or a ``.git`` file of a
  worktree / submodule with the git directory it names and, for a worktree,
  the repository's common directory);
* a root **without** a repository gets a placeholder ``.git`` (an empty folder
  made on the host for the run and removed after it, see
  :mod:`tooldeck.shell.placeholders`) with a read-only note mounted on it, so
  ``git init`` fails; and because git also takes a folder that holds
  ``HEAD``, ``objects/`` and ``refs/`` for a bare repository, one of those
  three names that is missing gets a read-only placeholder too (an empty
  ``HEAD`` folder, or an empty ``refs``/``objects`` file: each fails git's test; a
  root that already has all three *is* a git directory as far as git is
  concerned: it is bound read-only whole);
* nested ``.git`` entries found under a write root (``vendor/lib/.git``,
  submodules listed in ``.gitmodules``) by a breadth-first scan that goes
  :data:`SCAN_DEPTH` folders down and stops after :data:`SCAN_DIRS` folders,
  never follows a link and never enters a ``.git``; a ``.git`` file's git
  directory is added when it lies in a write root.

The same holds for agent-client configuration (``.mcp.json``, ``.claude/``,
``.codex/`` ... :data:`tooldeck.workspace.roots.CLIENT_CONFIG`, the list the
edit tools refuse): a model that writes one gives itself a host command, a
hook or an approval mode at the person's next client start. Each of those
names at the top of a write root is bound read-only: an existing one (a link's
target, when it lies in a write root) as it is, a missing one as an empty
placeholder folder made for the run (a folder: ``git status`` does not list
it, and nothing can be written as or into it); nested ones the scan below
finds are bound read-only too.

What a run creates or replaces there (a new ``sub/.mcp.json``, a top-level
entry that was a link, a ``sub/.git`` of ``git init sub``) is set aside after
the run by :mod:`tooldeck.shell.config_sweep`, from the folders' ctimes this
scan records.

Not covered: a nested repository the run itself creates deeper than the
scan reaches, one deeper than the scan reaches (more than four folders down, or past the
first 3,000 folders) and not in ``.gitmodules``, and a folder made to look like
a bare repository below the root; the person's ``git`` in such a folder reads
what the model wrote. Likewise a client configuration created deeper than four
folders stays (it acts only when the person starts a client down there).
"""

from __future__ import annotations

import os
import stat
import threading
from collections import deque
from dataclasses import dataclass, field

from tooldeck.shell.config_sweep import Watch, sweep
from tooldeck.shell.placeholders import Held, Placeholders
from tooldeck.workspace.roots import CLIENT_CONFIG
from tooldeck.workspace.statefiles import read_private, write_private_atomic

SCAN_DIRS = 3000  # folders visited per write root when looking for nested .git entries...
SCAN_DEPTH = 4  # ...down to root/a/b/c/d/.git (a virtualenv's site-packages is deeper: its folders are many)
GITMODULES_BYTES = 256 * 1024
BARE_NAMES = ("HEAD", "refs", "objects")  # git takes a folder holding all three for a bare repository
NOTE = (
    "This root has no git repository. Inside the tooldeck sandbox .git is read-only (and so is the\n"
    "empty HEAD beside it, which keeps the root from passing for a bare repository): a repository,\n"
    "with its hooks and config, can only be created by the person, outside the sandbox. Both are\n"
    "removed from the root when the command ends.\n"
)


@dataclass(slots=True)
class GitGuard:
    """The read-only binds of one call (``(source, destination)``, applied after the
    write binds) and the placeholders it holds.

    The placeholders go when the call is closed *and* every run it started has
    ended (:class:`tooldeck.shell.execute.RunHold`): a cancelled call closes
    while its sandbox may still be dying, and removing a placeholder then would
    unmount it under a live sandbox."""

    binds: list[tuple[str, str]] = field(default_factory=list)
    watches: list[Watch] = field(default_factory=list)
    held: Held | None = None
    registry: Placeholders | None = None
    active: int = 0
    closed: bool = False
    lock: threading.Lock = field(default_factory=threading.Lock)
    sweeping: threading.Lock = field(default_factory=threading.Lock)

    def sweep(self) -> list[str]:
        """Client configuration the runs so far created, set aside (see
        :mod:`tooldeck.shell.config_sweep`); call it once the runs have ended."""
        registry = self.registry
        placeholder = registry.registered if registry is not None else (lambda _p: False)
        with self.sweeping:
            return [note for watch in self.watches for note in sweep(watch, placeholder)]

    def begin(self) -> None:
        with self.lock:
            self.active += 1

    def end(self) -> None:
        with self.lock:
            self.active -= 1
        self._maybe_release()

    def close(self) -> None:
        with self.lock:
            self.closed = True
        self._maybe_release()

    def _maybe_release(self) -> None:
        with self.lock:
            if not self.closed or self.active > 0 or self.held is None:
                return
            held, self.held = self.held, None
        try:  # the last run is gone (a cancelled call's too): look once more before the placeholders go
            self.sweep()
        except OSError:
            pass
        if self.registry is not None:
            self.registry.release(held)


def _inside(path: str, root: str) -> bool:
    return path == root or path.startswith(root.rstrip("/") + "/")


def _read_small(path: str, limit: int) -> str:
    """A root's own git pointer or ``.gitmodules`` (never a FIFO, never followed)."""
    try:
        fd = os.open(path, os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK | os.O_CLOEXEC)
    except OSError:
        return ""
    try:
        if not stat.S_ISREG(os.fstat(fd).st_mode):
            return ""
        return os.read(fd, limit).decode("utf-8", "replace")
    except OSError:
        return ""
    finally:
        os.close(fd)


def is_git_dir(path: str) -> bool:
    """What git's discovery accepts as a repository folder: HEAD, objects/ and refs/."""
    return (
        os.path.lexists(os.path.join(path, "HEAD"))
        and os.path.isdir(os.path.join(path, "objects"))
        and os.path.isdir(os.path.join(path, "refs"))
    )


def entry_git_dirs(dot: str) -> list[str]:
    """The real paths a ``.git`` entry stands for: itself (a link resolved), and for
    a ``.git`` file the git directory it names and, for a worktree, the common
    directory of its repository."""
    if not os.path.lexists(dot):
        return []
    out = [os.path.realpath(dot)]
    if os.path.isfile(dot):
        line = _read_small(dot, 4096).split("\n", 1)[0].strip()
        if line.startswith("gitdir:"):
            gitdir = os.path.realpath(os.path.join(os.path.dirname(dot), line[7:].strip()))
            if os.path.isdir(gitdir):
                out.append(gitdir)
                common = os.path.dirname(os.path.dirname(gitdir))
                if os.path.basename(os.path.dirname(gitdir)) == "worktrees" and os.path.isdir(common):
                    out.append(common)
    return out


def _repository_entry(dot: str) -> bool:
    """Whether git's discovery stops at this ``.git`` (a file, or a valid git folder);
    if not, it goes on to take the root itself for a bare repository."""
    if os.path.isfile(dot):
        return True
    return os.path.isdir(dot) and is_git_dir(os.path.realpath(dot))


def _submodule_dirs(root: str) -> list[str]:
    out = []
    for line in _read_small(os.path.join(root, ".gitmodules"), GITMODULES_BYTES).splitlines():
        key, _, value = line.strip().partition("=")
        if key.strip() == "path" and value.strip():
            path = os.path.normpath(os.path.join(root, value.strip()))
            if _inside(path, root) and path != root:
                out.append(path)
    return out


def nested_git_entries(
    root: str, skip: tuple[str, ...] = (), limit: int = SCAN_DIRS, depth: int = SCAN_DEPTH
) -> list[str]:
    """``.git`` entries below ``root`` (not its own): submodule paths first, then a
    breadth-first scan of at most ``limit`` folders, ``depth`` levels down (links
    not followed, ``.git`` folders not entered)."""
    return nested_entries(root, skip, limit, depth)[0]


def nested_entries(
    root: str, skip: tuple[str, ...] = (), limit: int = SCAN_DIRS, depth: int = SCAN_DEPTH,
    watch: Watch | None = None,
) -> tuple[list[str], list[str]]:
    """Nested ``.git`` entries (see :func:`nested_git_entries`) and, from the same
    scan, the :data:`CLIENT_CONFIG` entries in and below ``root`` (never entered);
    ``watch`` records each folder's ctime (taken before it is listed) and each entry."""
    found = [p for d in _submodule_dirs(root) if os.path.lexists(p := os.path.join(d, ".git"))]
    configs: list[str] = []
    queue, seen = deque([(root, 0)]), 0
    while queue and seen < limit:
        folder, level = queue.popleft()
        seen += 1
        if watch is not None:
            watch.saw_folder(folder, level)
        try:
            entries = os.scandir(folder)
        except OSError:
            continue
        with entries:
            for entry in entries:
                if entry.name == ".git":
                    if watch is not None:
                        watch.saw_entry(entry.path)
                    if level > 0:
                        found.append(entry.path)
                    continue
                if entry.name.lower() in CLIENT_CONFIG:
                    configs.append(entry.path)
                    if watch is not None:
                        watch.saw_entry(entry.path)
                    continue
                try:
                    is_dir = level < depth and entry.is_dir(follow_symlinks=False)
                except OSError:
                    continue
                if is_dir and entry.path not in skip:
                    queue.append((entry.path, level + 1))
    return list(dict.fromkeys(found)), configs


def _config_binds(entries: list[str], held: set[str], write: list[str]) -> list[tuple[str, str]]:
    """Read-only binds for client configuration entries: a placeholder as itself, an
    existing entry at its real path when that lies in a write root (a link leading
    elsewhere is read-only there already, or not shown at all)."""
    binds = []
    for path in dict.fromkeys(entries):
        if path in held:
            binds.append((path, path))
        elif os.path.lexists(path):
            real = os.path.realpath(path)
            if os.path.exists(real) and any(_inside(real, w) for w in write):
                binds.append((real, real))
    return binds


def _bare_names(root: str, registry: Placeholders) -> list[tuple[str, str]]:
    """The placeholder that keeps ``root`` from becoming a bare repository: the first
    of HEAD/refs/objects that is missing (or already one of ours)."""
    for name in BARE_NAMES:
        path = os.path.join(root, name)
        if not os.path.lexists(path) or registry.registered(path):
            # HEAD must be a ref file: an empty folder fails, and a parent repository's
            # status does not list one; refs/objects must be folders: an empty file fails
            return [(path, "dir" if name == "HEAD" else "file")]
    return []


def _write_root_binds(
    root: str, held: set[str], note: str, write: list[str], skip: tuple[str, ...], watches: list[Watch]
) -> list:
    dot = os.path.join(root, ".git")
    binds = [(note, dot)] if dot in held else [(g, g) for g in entry_git_dirs(dot)]
    if not _repository_entry(dot):
        guard = [os.path.join(root, n) for n in BARE_NAMES if os.path.join(root, n) in held]
        if not guard:  # HEAD, refs and objects all there (or no placeholder could be made)
            return [*binds, (root, root)]
        binds += [(g, g) for g in guard]
    watch = Watch(root, SCAN_DEPTH, skip)
    watches.append(watch)
    nested, configs = nested_entries(root, skip, watch=watch)
    for entry in nested:
        binds += [(g, g) for g in entry_git_dirs(entry) if any(_inside(g, w) for w in write)]
    return binds + _config_binds([os.path.join(root, n) for n in sorted(CLIENT_CONFIG)] + configs, held, write)


def _note_dir(registry: Placeholders) -> str:
    note = os.path.join(registry.dir, "no-repository")
    os.makedirs(note, mode=0o755, exist_ok=True)
    readme = os.path.join(note, "README-tooldeck")
    if read_private(readme) != NOTE.encode():
        write_private_atomic(readme, NOTE.encode())
    return note


def prepare(registry: Placeholders, read: list[str], write: list[str], skip: tuple[str, ...] = ()) -> GitGuard:
    """The guard of one sandboxed call: placeholders held, read-only binds planned.
    ``skip``: folders the scan must not enter (the hidden state directory)."""
    wanted: list[tuple[str, str]] = []
    for root in write:
        dot = os.path.join(root, ".git")
        wanted.append((dot, "dir"))
        if not _repository_entry(dot):
            wanted += _bare_names(root, registry)
        wanted += [(os.path.join(root, n), "dir") for n in sorted(CLIENT_CONFIG)]
    held = registry.acquire(wanted)
    guard = GitGuard(held=held, registry=registry)
    try:
        note = _note_dir(registry) if any(p.endswith("/.git") for p in held.paths) else ""
        binds: list[tuple[str, str]] = []
        for root in read:
            if root not in write:
                binds += [(g, g) for g in entry_git_dirs(os.path.join(root, ".git"))]
        for root in write:
            binds += _write_root_binds(root, set(held.paths), note, write, skip, guard.watches)
        guard.binds = list(dict.fromkeys(binds))
    except BaseException:
        guard.close()
        raise
    return guard
