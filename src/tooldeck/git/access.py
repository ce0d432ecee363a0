"""What a git process may touch: the policy :class:`~tooldeck.git.runner.Git`
runs it under (:mod:`tooldeck.confine`).

Every git command tooldeck runs reads: ``GIT_OPTIONAL_LOCKS=0`` keeps
``status`` from refreshing the index, ``hash-object`` is never given
``-w``, no command commits, fetches, creates or removes a worktree, and
diff artifacts are written by tooldeck itself into the state directory
(:mod:`tooldeck.git.artifacts`), not by git. So git gets no write access at
all, and reads:

* the working tree, beneath the folders it is limited to (the roots' folders
  in the checkout, else the checkout: ``reads``), or beneath its working
  directory; when limited, the checkout's folder listings too (names only:
  git lists the top level to find untracked files even with a pathspec, and
  Landlock's listing right holds for a whole tree);
* the repository's git directories, found as git finds them: the first
  ``.git`` at or above the working directory (a folder, or a ``.git`` file
  naming a linked worktree's or submodule's git directory and, through
  ``commondir``, the shared one);
* the ``.gitignore`` / ``.gitattributes`` files of the checkout's top level
  and of each folder between it and the folders it reads (git applies them);
* the ``.git`` pointer files of the repository's linked worktrees;
* the person's git configuration files: ``/etc/gitconfig``, ``~/.gitconfig``,
  ``$XDG_CONFIG_HOME/git/{config,ignore,attributes}`` (files only: never a
  folder of the person's home, where ``~/.config/git/credentials`` may live).
"""

from __future__ import annotations

import functools
import os
import shutil
from collections.abc import Iterable, Sequence

from tooldeck.confine.policy import Policy, program

RULE_FILES = (".gitignore", ".gitattributes")


@functools.cache
def git_exe() -> str:
    return shutil.which("git") or "/usr/bin/git"


def find_dot_git(start: str) -> str | None:
    """The ``.git`` entry git would use from ``start``: the nearest at or above it."""
    d = os.path.abspath(start)
    while True:
        entry = os.path.join(d, ".git")
        if os.path.lexists(entry):
            return entry
        parent = os.path.dirname(d)
        if parent == d:
            return None
        d = parent


def _read_line(path: str) -> str:
    try:
        with open(path, encoding="utf-8", errors="surrogateescape") as fh:
            return fh.readline().strip()
    except OSError:
        return ""


def git_dirs(entry: str) -> list[str]:
    """The ``.git`` entry, the git directory it names and the common one."""
    out = [entry]
    git_dir = entry
    if os.path.isfile(entry):
        line = _read_line(entry)
        if not line.startswith("gitdir:"):
            return out
        git_dir = os.path.join(os.path.dirname(entry), line.removeprefix("gitdir:").strip())
        out.append(os.path.realpath(git_dir))
    common = _read_line(os.path.join(git_dir, "commondir"))
    if common:
        out.append(os.path.realpath(os.path.join(git_dir, common)))
    return out


def worktree_entries(git_dirs_found: Iterable[str]) -> list[str]:
    """The ``.git`` files of the repository's linked worktrees (as its
    ``worktrees/*/gitdir`` name them): ``git worktree list`` checks each
    exists, and a namespace holding only the policy's paths would otherwise
    call every linked worktree prunable. Pointer files, no content."""
    out: list[str] = []
    for d in git_dirs_found:
        try:
            names = os.listdir(os.path.join(d, "worktrees"))
        except OSError:
            continue
        for name in names:
            named = _read_line(os.path.join(d, "worktrees", name, "gitdir"))
            if named and os.path.isabs(named) and os.path.basename(named) == ".git":
                out.append(named)
    return out


def rule_files(toplevel: str, folders: Iterable[str]) -> list[str]:
    """``.gitignore``/``.gitattributes`` of ``toplevel`` and of every folder
    between it and each of ``folders`` (those inside are read anyway)."""
    out: list[str] = []
    for folder in folders:
        rel = os.path.relpath(folder, toplevel)
        if rel.startswith(".."):
            continue
        d = toplevel
        parts = [] if rel == "." else rel.split(os.sep)
        for part in ["", *parts[:-1]]:
            d = os.path.join(d, part) if part else d
            out += [os.path.join(d, name) for name in RULE_FILES]
    return out


def user_config_files() -> list[str]:
    home = os.path.expanduser("~")
    xdg = os.environ.get("XDG_CONFIG_HOME") or os.path.join(home, ".config")
    files = ["/etc/gitconfig", os.path.join(home, ".gitconfig")]
    files += [os.path.join(xdg, "git", name) for name in ("config", "ignore", "attributes")]
    return files


def git_policy(cwd: str, reads: Sequence[str] = ()) -> Policy:
    """The policy of a git process run in ``cwd`` that reads the working
    tree beneath ``reads`` (default: ``cwd``)."""
    folders = list(reads) or [cwd]
    read, listing = [*folders], []
    entry = find_dot_git(cwd)
    if entry is not None:
        toplevel = os.path.dirname(entry)
        found = git_dirs(entry)
        read += found
        read += worktree_entries(found[1:] or found)
        read += rule_files(toplevel, folders)
        if toplevel not in folders:
            listing.append(toplevel)
    read += user_config_files()
    return program("git", git_exe(), read=read, listing=listing)
