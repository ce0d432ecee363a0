"""Folders that are outside every root even when a root contains them: the
state directory.

Why: the state directory holds the write journal (whose entries recovery
acts on), its key, the database, audit logs and other tools' secrets. When
it lies inside a root — serving ``$HOME`` with the default
``~/.local/state/tooldeck`` — a model could otherwise read it, search it, or
write a journal entry that the next tooldeck process would carry out. So a
:class:`~tooldeck.runtime.Runtime` registers its state directory
here (:func:`hide`) and the workspace layer treats it as outside:

* path resolution (:meth:`Workspace.resolve`) refuses a path in it with
  ``outside_roots``, whatever the spelling (a symbolic link into it included:
  the canonical path is checked);
* the walker never lists it (trees, search, indexes, codemaps, MCP
  resources walk with it), and ``read_directory`` leaves its name out;
* the one opener of a root's files (:func:`dirfd.open_beneath`) refuses it,
  so no reader reaches it by any route (git's untracked files included);
* ripgrep is told to skip it (:func:`tooldeck.workspace.ripgrep.ignore_args`).

The registry is per process: every state directory this process uses is
hidden from every workspace it serves. Paths are canonical (``realpath``) at
registration; one that does not exist yet is registered as it will be made.
"""

from __future__ import annotations

import os
import threading

_lock = threading.Lock()
_dirs: tuple[str, ...] = ()  # canonical, no trailing separator
_set: frozenset[str] = frozenset()
_prefixes: tuple[str, ...] = ()  # each with a trailing separator: one C-level startswith for all


def hide(path: str | os.PathLike[str]) -> str:
    """Treat ``path`` (a folder) as outside every root from now on; its canonical form."""
    global _dirs, _set, _prefixes
    real = os.path.realpath(os.path.expanduser(os.fspath(path)))
    if real == os.sep:
        raise ValueError("the filesystem root cannot be hidden")
    with _lock:
        if real not in _set:
            _dirs = (*_dirs, real)
            _set = frozenset(_dirs)
            _prefixes = tuple(d + os.sep for d in _dirs)
    return real


def hidden_dirs() -> tuple[str, ...]:
    return _dirs


def is_hidden(real: str) -> bool:
    """Whether the canonical path ``real`` is a hidden folder or lies beneath
    one (~0.3 µs: it runs for every path a tool resolves or opens)."""
    return bool(_dirs) and (real.startswith(_prefixes) or real in _set)


def hidden_below(folder: str) -> frozenset[str]:
    """The hidden folders strictly beneath the canonical ``folder``, relative
    to it and "/"-separated: what a walk or a search started there must skip."""
    base = folder.rstrip(os.sep)
    prefix = base + os.sep
    return frozenset(d[len(prefix) :].replace(os.sep, "/") for d in _dirs if d.startswith(prefix))


def hidden_names_in(folder: str) -> frozenset[str]:
    """The names of ``folder``'s direct children that are hidden (a listing leaves them out)."""
    return frozenset(rel for rel in hidden_below(folder) if "/" not in rel)
