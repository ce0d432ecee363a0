"""Co-change: files that changed together in the repository's history.

A task's files are seldom all named by its words: a fix to ``core.py``
comes with its test, the doc page that describes the option, the module
whose helper it calls. The reference graph finds some of these, the test ↔
source pairing others; the history of the repository knows which files its
authors actually changed together. So once the ranking is known, each of the
best-ranked files lends its score to the files that changed with it, in
proportion to how often they did:

    bonus(f) = WEIGHT × Σ_a score(a) × together(a, f) / (commits(a) + 1)

over the ``TOP`` best-ranked files ``a``. The ``+ 1`` shrinks the evidence
of a file seen in one commit (one shared commit is a weak hint, not a
certainty). Commits that touched more than ``MAX_FILES`` files (a
reformatting, a rename of a package, a licence header) say nothing about
which files belong together and are skipped.

The history is read once per HEAD commit (``git log --name-only`` of the
newest ``COMMITS`` non-merge commits, through :mod:`tooldeck.git.runner`:
confined, with the repository's programs switched off) and kept with the
builder; a root that is not in a git checkout, or whose git fails, simply has
no co-change signal. Only what is committed counts: the task at hand is not
in the history yet.
"""

from __future__ import annotations

import logging
import os
import threading
from collections import Counter
from collections.abc import Iterable
from typing import TYPE_CHECKING

from tooldeck.context.pairs import best_first
from tooldeck.core.errors import ToolError
from tooldeck.git.repo import nearest_holding, open_repo
from tooldeck.git.runner import DIFF_SAFETY

if TYPE_CHECKING:
    from tooldeck.context.retrieve import FileInfo

log = logging.getLogger("tooldeck.context")

COMMITS = 2000  # the newest non-merge commits read
MAX_FILES = 20  # a commit touching more files than this pairs none of them
TOP = 8  # the best-ranked files whose co-changed files are lifted
WEIGHT = 0.25  # a co-changed file's bonus: this share of its partners' scores, by frequency
TIMEOUT = 10.0  # seconds git may take to list the history


class History:
    """Which files changed together: file → the commits (numbers) that touched it."""

    def __init__(self, commits: Iterable[Iterable[str]]) -> None:
        self.commits: list[tuple[str, ...]] = []
        self.touched: dict[str, list[int]] = {}
        for files in commits:
            unique = tuple(dict.fromkeys(files))
            if not unique or len(unique) > MAX_FILES:
                continue
            n = len(self.commits)
            self.commits.append(unique)
            for f in unique:
                self.touched.setdefault(f, []).append(n)

    def partners(self, path: str) -> dict[str, float]:
        """Each file that changed with ``path``: how often, as a share of
        ``path``'s commits plus one."""
        seen = self.touched.get(path)
        if not seen:
            return {}
        together: Counter[str] = Counter()
        for n in seen:
            together.update(self.commits[n])
        del together[path]
        total = len(seen) + 1
        return {f: k / total for f, k in together.items()}

    def lift(
        self, ranked: list[tuple[str, float]], top: int = TOP, weight: float = WEIGHT
    ) -> dict[str, tuple[float, str]]:
        """The bonus of every file that changed with one of the ``top`` best
        of ``ranked`` ((path, score), best first; paths as the history names
        them), and the partner that gave it the most."""
        bonus: dict[str, float] = {}
        best: dict[str, tuple[float, str]] = {}
        for path, score in ranked[:top]:
            for other, share in self.partners(path).items():
                b = weight * score * share
                bonus[other] = bonus.get(other, 0.0) + b
                if other not in best or b > best[other][0]:
                    best[other] = (b, path)
        return {f: (b, best[f][1]) for f, b in bonus.items()}


def parse_name_only(data: str) -> list[list[str]]:
    """The files of each commit of ``git log --format=%x1e --name-only -z``."""
    out: list[list[str]] = []
    for record in data.split("\x1e")[1:]:
        out.append([p for p in record.replace("\n", "\0").split("\0") if p])
    return out


def read_history(directory: str, count: int = COMMITS) -> tuple[str, str, History] | None:
    """(repository top level, HEAD commit, history) of the checkout holding
    ``directory``; None when it is not in one, has no commit, or git fails."""
    try:
        repo = open_repo(directory, timeout=TIMEOUT)
        head = repo._cache.get("head")
        if not isinstance(head, str) or not head:
            return None
        args = ["log", *DIFF_SAFETY, "--no-merges", "--no-renames", "--name-only", "-z", "--format=%x1e"]
        data = repo.git.text([*args, f"--max-count={count}", head])
    except (ToolError, OSError) as exc:
        log.debug("no co-change history for %s: %s", directory, exc)
        return None
    return repo.toplevel, head, History(parse_name_only(data))


def in_checkout(directory: str) -> bool:
    """Whether a ``.git`` entry is at or above ``directory``: git finds a
    checkout no other way (its ``GIT_*`` variables are dropped), so a folder
    without one costs a few ``lstat`` calls, not a git process per build."""
    return nearest_holding(os.path.abspath(directory), ".git") is not None


def head_of(directory: str) -> str | None:
    """The HEAD commit of the checkout holding ``directory`` (git's own
    discovery is kept while the files it read are unchanged: no process)."""
    if not in_checkout(directory):
        return None
    try:
        head = open_repo(directory, timeout=TIMEOUT)._cache.get("head")
    except (ToolError, OSError):
        return None
    return head if isinstance(head, str) and head else None


def cochange_reason(partner: str) -> str:
    return f"changed together with {os.path.basename(partner)} in the history"


class CoChange:
    """The history of each root, kept per HEAD commit (a new commit, a
    checkout of another branch: read again)."""

    def __init__(self) -> None:
        # root path → (the HEAD it was read at, (top level, history) or None)
        self._kept: dict[str, tuple[str | None, tuple[str, History] | None]] = {}
        self._lock = threading.Lock()

    def history(self, root_path: str) -> tuple[str, History] | None:
        """(repository top level, history) for a root, or None."""
        head = head_of(root_path)
        with self._lock:
            kept = self._kept.get(root_path)
        if kept is not None and kept[0] == head:
            return kept[1]
        got = read_history(root_path) if head is not None else None
        value = None if got is None else (got[0], got[2])
        with self._lock:
            self._kept[root_path] = (head, value)
        return value

    def bonus(self, ranked: list[tuple[str, float]], roots: Iterable[str]) -> dict[str, tuple[float, str]]:
        """Absolute path → (co-change bonus, the absolute path of the partner
        that gave the most), from ``ranked`` ((absolute path, score), best
        first) and the histories of ``roots`` (their paths)."""
        out: dict[str, tuple[float, str]] = {}
        for root in roots:
            got = self.history(root)
            if got is None:
                continue
            top, history = got
            prefix = top.rstrip(os.sep) + os.sep
            inside = [(k[len(prefix) :], s) for k, s in ranked[:TOP] if k.startswith(prefix)]
            for rel, (b, partner) in history.lift(inside).items():
                key = prefix + rel
                if key in out:  # two roots in one checkout: the larger share names the partner
                    b, partner = b + out[key][0], partner if b > out[key][0] else out[key][1][len(prefix) :]
                out[key] = (b, prefix + partner)
        return out


def lift_cochanged(
    cochange: CoChange, ranked: list[tuple[str, float]], roots: list[str], files: list[FileInfo], candidates: int
) -> tuple[list[tuple[str, float]], dict[str, str]]:
    """``ranked`` ((absolute path, score), best first) with each walked
    file's co-change bonus added, best first again; and for each file the
    bonus brought into the first ``candidates``, the partner that lifted it."""
    bonus = cochange.bonus(ranked, roots)
    if not bonus:
        return ranked, {}
    walked = {f.abs for f in files}
    scores = dict(ranked)
    before = {k for k, _ in ranked[:candidates]}
    for key, (b, _partner) in bonus.items():
        if key in walked and b > 0:
            scores[key] = scores.get(key, 0.0) + b
    out = best_first(scores)
    partners = {k: bonus[k][1] for k, _ in out[:candidates] if k not in before and k in bonus}
    return out, partners
