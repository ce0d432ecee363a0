"""Repository state from ``git status --porcelain=v2 --branch -z``: branch,
upstream, ahead/behind, staged / modified / untracked / conflicted files, the
stash, and an operation in progress (merge, rebase, ...).

Porcelain v2 is git's stable machine format; ``-z`` makes every file name
parse, whatever bytes it holds.
"""

from __future__ import annotations

import os
from collections.abc import Sequence
from dataclasses import dataclass, field

from tooldeck.git.repo import Repo
from tooldeck.workspace.hidden import is_hidden
from tooldeck.workspace.rulefiles import RuleFilesStall, StallGuard

_STATE_MARKERS = (
    ("rebase-merge", "rebase in progress"),
    ("rebase-apply", "rebase or am in progress"),
    ("MERGE_HEAD", "merge in progress"),
    ("CHERRY_PICK_HEAD", "cherry-pick in progress"),
    ("REVERT_HEAD", "revert in progress"),
    ("BISECT_LOG", "bisect in progress"),
)


@dataclass(frozen=True, slots=True)
class StatusEntry:
    code: str  # one letter: M A D R C T U, or "?" untracked
    path: str
    old_path: str | None = None


@dataclass(slots=True)
class RepoStatus:
    head_oid: str | None = None  # None on an unborn branch
    branch: str | None = None  # None when detached
    upstream: str | None = None
    ahead: int | None = None
    behind: int | None = None
    stash: int = 0
    staged: list[StatusEntry] = field(default_factory=list)
    modified: list[StatusEntry] = field(default_factory=list)  # unstaged changes to tracked files
    untracked: list[StatusEntry] = field(default_factory=list)
    conflicts: list[StatusEntry] = field(default_factory=list)
    operation: str | None = None
    untracked_note: str | None = None  # why untracked files were not listed

    @property
    def clean(self) -> bool:
        return not (self.staged or self.modified or self.untracked or self.conflicts)


def parse_status(data: str) -> RepoStatus:
    st = RepoStatus()
    tokens = data.split("\0")
    i = 0
    while i < len(tokens):
        tok = tokens[i]
        i += 1
        if not tok:
            continue
        if tok.startswith("# "):
            key, _, value = tok[2:].partition(" ")
            if key == "branch.oid":
                st.head_oid = None if value == "(initial)" else value
            elif key == "branch.head":
                st.branch = None if value == "(detached)" else value
            elif key == "branch.upstream":
                st.upstream = value
            elif key == "branch.ab":
                ahead, _, behind = value.partition(" ")
                st.ahead, st.behind = int(ahead.lstrip("+")), int(behind.lstrip("-"))
            elif key == "stash":
                st.stash = int(value)
            continue
        kind = tok[0]
        if kind == "?":
            st.untracked.append(StatusEntry("?", tok[2:]))
        elif kind == "1":
            parts = tok.split(" ", 8)
            _add(st, parts[1], parts[8], None)
        elif kind == "2":
            parts = tok.split(" ", 9)
            old = tokens[i]
            i += 1
            _add(st, parts[1], parts[9], old)
        elif kind == "u":
            parts = tok.split(" ", 10)
            st.conflicts.append(StatusEntry("U", parts[10]))
    return st


def _add(st: RepoStatus, xy: str, path: str, old: str | None) -> None:
    x, y = xy[0], xy[1]
    if x != ".":
        st.staged.append(StatusEntry(x, path, old if x in "RC" else None))
    if y != ".":
        st.modified.append(StatusEntry(y, path, old if y in "RC" else None))


def operation_in_progress(repo: Repo) -> str | None:
    for marker, what in _STATE_MARKERS:
        if os.path.exists(os.path.join(repo.git_dir, marker)):
            return what
    return None


def repo_status(repo: Repo, paths: Sequence[str] | None = None) -> RepoStatus:
    args = ["status", "--porcelain=v2", "--branch", "--show-stash", "-z", "--ignore-submodules=dirty"]
    spec = ["--", *paths] if paths else []
    note = None
    try:
        # a FIFO among the rule files would make git wait forever: looked for only if git runs long
        out = repo.git.text([*args, "--untracked-files=normal", *spec], stop=StallGuard(repo.toplevel))
    except RuleFilesStall as stall:
        note = stalled_note(repo, stall.paths)
        out = repo.git.text([*args, "--untracked-files=no", *spec])
    st = parse_status(out)
    # the state directory is outside every root, even untracked inside this checkout
    st.untracked = [e for e in st.untracked if not is_hidden(repo.path_of(e.path).rstrip("/"))]
    st.operation = operation_in_progress(repo)
    st.untracked_note = note
    return st


def stalled_note(repo: Repo, bad: Sequence[str]) -> str:
    """Why untracked files are not listed: rule files git would wait on.

    Listing untracked files makes git open every ``.gitignore`` (and
    ``.git/info/exclude``) with a blocking ``open``: one FIFO under such a
    name stalls it until its timeout. So the git that lists them runs with a
    :class:`~tooldeck.workspace.rulefiles.StallGuard`: past a short grace the
    rule files are looked at (from directory entries, nothing opened), and
    git is stopped when one is a FIFO or a device."""
    names = ", ".join(os.path.relpath(p, repo.toplevel) for p in bad[:3])
    return (
        f"untracked files not listed: {names} {'is' if len(bad) == 1 else 'are'} not a regular file "
        "(a FIFO or device) that git would wait on; remove it to list them"
    )
