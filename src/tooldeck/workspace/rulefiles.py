"""Rule files that would stall ripgrep, found before ripgrep runs.

Why: rg opens every ``.gitignore`` of the tree it searches (and of the root's
parent directories, even with ``--no-ignore-parent``), each
``.git/info/exclude`` and the ``--ignore-file`` it is given, with a blocking
``open``. One FIFO under such a name (``mkfifo .gitignore``: anything that can
write the tree, a shell command of the agent included) stops the search until
its timeout: minutes per call. tooldeck's own walker reads rule files through
the safe path (:mod:`tooldeck.workspace.content`), which skips a FIFO instead
of waiting on it.

So before an rg search of a root, :func:`stalling_rule_files` lists the rule
files rg would open, without opening any: one ``os.scandir`` pass over the
tree (the deny list pruned, as in the search; ``rg --files`` cannot do it: it
never lists a FIFO) plus the root's parent chain. A root with one that is not
a regular file is searched by the Python engine, which follows the walker's
rules exactly. The pass reads directory entries only (their type comes with
them): about 15 ms on a 9,000-entry tree, a few percent of the search.
"""

from __future__ import annotations

import os
import stat
import time
from collections.abc import Callable

from tooldeck.workspace.ignore import DENY_DIRS

RULE_NAMES = frozenset({".gitignore", ".tooldeckignore"})
_GIT_EXCLUDE = (".git", "info", "exclude")
_PRUNED = DENY_DIRS - {".git"}  # a .git folder is looked into for info/exclude only


def _parent_chain(root_path: str) -> list[str]:
    """Rule files of the root's ancestors (rg reads them) and the root's own
    ``.git/info/exclude``."""
    paths = [os.path.join(root_path, *_GIT_EXCLUDE)]
    here = os.path.abspath(root_path)
    while True:
        parent = os.path.dirname(here)
        if parent == here:
            return paths
        here = parent
        paths += [os.path.join(here, ".gitignore"), os.path.join(here, *_GIT_EXCLUDE)]


def _irregular(path: str) -> bool:
    """A path that, links followed, is a FIFO or a device: opening it may wait
    forever, reading it may never end. (``stat`` opens nothing, so this check
    cannot stall; a folder or socket under a rule name just fails to open.)"""
    try:
        mode = os.stat(path).st_mode
    except OSError:
        return False  # missing (rg skips it too) or a dangling link
    return stat.S_ISFIFO(mode) or stat.S_ISCHR(mode) or stat.S_ISBLK(mode)


def stalling_rule_files(root_path: str) -> list[str]:
    """Rule files rg would open in a search of ``root_path`` that are not
    regular files (a FIFO, a device). Empty: rg is safe to run."""
    found = [p for p in _parent_chain(root_path) if _irregular(p)]
    stack = [root_path]
    while stack:
        try:
            entries = os.scandir(stack.pop())
        except OSError:
            continue  # rg cannot enter it either
        with entries:
            for entry in entries:
                name = entry.name
                if name in RULE_NAMES:
                    if not entry.is_file() and _irregular(entry.path):
                        found.append(entry.path)
                elif name == ".git":
                    exclude = os.path.join(entry.path, *_GIT_EXCLUDE[1:])
                    if _irregular(exclude):
                        found.append(exclude)
                elif name not in _PRUNED and entry.is_dir(follow_symlinks=False):
                    stack.append(entry.path)
    return found


class RuleFilesStall(Exception):
    """A helper ran long and a rule file it opens is a FIFO or a device: it
    was killed (:class:`StallGuard`)."""

    def __init__(self, paths: list[str]) -> None:
        super().__init__(f"rule files that would stall the helper: {paths}")
        self.paths = paths


class StallGuard:
    """The ``stop`` check (:func:`tooldeck.confine.helpers.run`) of a helper
    that opens the rule files of ``root_path`` (rg; git listing untracked
    files): the caller's own check first (a cancelled call), then, once the
    helper has run ``grace`` seconds, :func:`stalling_rule_files`, again
    every ``rescan`` seconds; one found raises :class:`RuleFilesStall` (the
    helper is then killed). A helper that ends within ``grace`` costs no
    pass over the tree; one stuck on a FIFO's open waits, using nothing,
    until the check finds it."""

    def __init__(
        self,
        root_path: str,
        stop: Callable[[], None] | None = None,
        *,
        grace: float = 0.2,
        rescan: float = 2.0,
        scan: Callable[[str], list[str]] | None = None,
    ) -> None:
        self.root_path, self.stop, self.rescan = root_path, stop, rescan
        self.scan = scan or stalling_rule_files
        self.next_check = time.monotonic() + grace

    def __call__(self) -> None:
        if self.stop is not None:
            self.stop()
        if time.monotonic() >= self.next_check:
            found = self.scan(self.root_path)
            if found:
                raise RuleFilesStall(found)
            self.next_check = time.monotonic() + self.rescan
