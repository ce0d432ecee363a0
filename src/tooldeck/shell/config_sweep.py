"""After a sandboxed run: agent-client configuration and repositories the run created are set aside.

The sandbox binds every client configuration entry the pre-run scan found
read-only (:mod:`tooldeck.shell.gitguard`), but a bind only protects what
exists. A run could still create one in a sub-folder (``mkdir sub && echo
... > sub/.mcp.json``), which a client the person starts in that folder would
obey, or replace an entry that is a symbolic link (the bind covers the link's
target, not the link itself). So the pre-run scan also records each folder's
ctime and each entry's identity (:class:`Watch`), and once the run's
processes are gone, :func:`sweep` looks again:

* only in the folders whose ctime changed — ctime, unlike mtime (which
  ``touch -r`` sets back), cannot be set back by the run — and in the folders the run
  created or moved in, down to the scan's depth;
* every client configuration entry there that is new, or not the one that was
  there, is renamed — and so is a new ``.git`` (``git init sub`` and a hook or
  ``core.fsmonitor`` planted in it: the person's next ``git status`` in ``sub``
  would run it) — to ``<name>.quarantined-by-tooldeck`` (``-2``, ``-3`` ...
  when taken): kept, not deleted, so a person who made one at that very moment
  finds it beside the name, and no client reads it under that name;
* a symbolic link that was there and is gone is made again.

Folders are opened from the root down without following links
(:mod:`tooldeck.workspace.dirfd`): a folder the run swapped for a link is not
entered, so nothing outside the root is renamed. The call's result names what
was set aside (code ``protected``).

Not covered, as for the scan: deeper than :data:`~tooldeck.shell.gitguard.SCAN_DEPTH`
folders, and existing folders past the scan's first
:data:`~tooldeck.shell.gitguard.SCAN_DIRS`.
"""

from __future__ import annotations

import json
import os
import stat
from collections import deque
from collections.abc import Callable
from dataclasses import dataclass, field

from tooldeck.core.output import Output
from tooldeck.workspace.dirfd import components, open_dir
from tooldeck.workspace.roots import CLIENT_CONFIG

SUFFIX = ".quarantined-by-tooldeck"
SWEEP_DIRS = 50_000  # folders looked at after a run: only a run that made that many pays for them
Identity = tuple[int, int, int, str]  # device, inode, file type, link target ("" when not a link)


@dataclass(slots=True)
class Watch:
    """What the pre-run scan saw of one write root."""

    root: str
    depth: int
    skip: tuple[str, ...] = ()
    folders: dict[str, tuple[int, int]] = field(default_factory=dict)  # path -> (ctime_ns, level)
    entries: dict[str, Identity] = field(default_factory=dict)  # client configuration path -> identity

    def saw_folder(self, path: str, level: int) -> None:
        try:
            self.folders[path] = (os.stat(path, follow_symlinks=False).st_ctime_ns, level)
        except OSError:
            pass

    def saw_entry(self, path: str) -> None:
        ident = identity(path)
        if ident is not None:
            self.entries[path] = ident


def identity(path: str, dir_fd: int | None = None) -> Identity | None:
    """What an entry is, without following it (a link's target included)."""
    try:
        st = os.stat(path, dir_fd=dir_fd, follow_symlinks=False)
        target = os.readlink(path, dir_fd=dir_fd) if stat.S_ISLNK(st.st_mode) else ""
    except OSError:
        return None
    return (st.st_dev, st.st_ino, stat.S_IFMT(st.st_mode), target)


def _changed(watch: Watch) -> list[tuple[str, int]]:
    out = []
    for path, (ctime, level) in watch.folders.items():
        try:
            now = os.stat(path, follow_symlinks=False).st_ctime_ns
        except OSError:
            now = -1
        if now != ctime:
            out.append((path, level))
    return out


def _free_name(dir_fd: int, name: str) -> str:
    candidate, n = name + SUFFIX, 1
    while identity(candidate, dir_fd) is not None:
        n += 1
        candidate = f"{name}{SUFFIX}-{n}"
    return candidate


def _rel(watch: Watch, path: str) -> str:
    return os.path.relpath(path, watch.root)


def _unseen(watch: Watch, path: str) -> bool:
    """A folder the pre-run scan did not list: created or moved in by the run."""
    return path not in watch.folders and path not in watch.skip


def _look(watch: Watch, folder: str, level: int, placeholder: Callable[[str], bool]) -> tuple[list[str], list[str]]:
    """One folder: the entries set aside (as notes) and the new folders to look into."""
    notes: list[str] = []
    new: list[str] = []
    try:
        fd = open_dir(watch.root, components(watch.root, folder))
    except Exception:  # gone, or swapped for a link: nothing beneath it is the root's
        return notes, new
    try:
        with os.scandir(fd) as it:
            listed = [(e.name, e.is_dir(follow_symlinks=False)) for e in it]
        for name, is_dir in listed:
            path = os.path.join(folder, name)
            if name.lower() in CLIENT_CONFIG or name == ".git":
                ident = identity(name, fd)
                if ident is None or watch.entries.get(path) == ident or placeholder(path):
                    continue
                aside = _free_name(fd, name)
                try:
                    os.rename(name, aside, src_dir_fd=fd, dst_dir_fd=fd)
                    notes.append(f"{_rel(watch, path)} -> {_rel(watch, os.path.join(folder, aside))}")
                except OSError as exc:
                    notes.append(f"{_rel(watch, path)} (could not be set aside: {exc.strerror})")
            elif is_dir and level < watch.depth and _unseen(watch, path):
                new.append(path)
    finally:
        os.close(fd)
    return notes, new


def _restore_links(watch: Watch) -> None:
    """A link that was there and is gone (or was set aside) is made again."""
    for path, ident in list(watch.entries.items()):
        if not ident[3] or os.path.lexists(path):
            continue
        try:
            fd = open_dir(watch.root, components(watch.root, os.path.dirname(path)))
        except Exception:
            continue
        try:
            os.symlink(ident[3], os.path.basename(path), dir_fd=fd)
            again = identity(os.path.basename(path), fd)
            if again is not None:
                watch.entries[path] = again
        except OSError:
            pass
        finally:
            os.close(fd)


def sweep(watch: Watch, placeholder: Callable[[str], bool], limit: int = SWEEP_DIRS) -> list[str]:
    """Set aside the client configuration a finished run left (see the module's
    docstring); ``placeholder(path)``: an entry tooldeck made for a run."""
    queue = deque(_changed(watch))
    notes: list[str] = []
    looked = 0
    while queue and looked < limit:
        folder, level = queue.popleft()
        looked += 1
        found, new = _look(watch, folder, level, placeholder)
        notes += found
        queue.extend((p, level + 1) for p in new)
        if folder in watch.folders:  # a later sweep of the same call looks only at what changed since
            watch.saw_folder(folder, level)
    _restore_links(watch)
    return notes


def with_notice(output: Output, notes: list[str]) -> Output:
    """The call's result, with what was set aside said where the model reads it."""
    if not notes:
        return output
    text = ("[protected] agent-client configuration and git repositories are the person's: tooldeck renamed "
            "what this command created or replaced so that no client and no git reads it: " + "; ".join(notes) +
            ". Do not try again; ask the user to change client settings.")  # fmt: skip
    if output.structured is not None:
        data = {**output.structured, "protected": notes, "notice": text}
        return Output.text(json.dumps(data, ensure_ascii=False, indent=1), structured=data)
    return Output.of_parts([*output.parts, Output.text(text).parts[0]], output.structured)
