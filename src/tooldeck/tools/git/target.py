"""Which checkout a call is about, and how its paths are shown.

``repo_root`` is a root id or a path (a root's path rules apply), optionally
with a suffix: ``:worktree`` (this checkout, the default) or ``:main`` (the
repository's main checkout, for a root that is a linked worktree). The main
checkout and the other worktrees of a repository under a root may live
outside the roots: they are the same repository, so they are allowed.

Paths in output are relative to the root the repository was reached from
(the repository's own top level when it lies outside every root), and a
model-supplied ``path`` is read the same way, so what the tool prints can be
passed back.
"""

from __future__ import annotations

import os
from dataclasses import dataclass, field

from tooldeck.core.errors import ErrorCode, ToolError, invalid_arguments
from tooldeck.git.repo import Repo, jj_installed, open_repo, reading_only, worktrees
from tooldeck.git.runner import refuse_option
from tooldeck.runtime import Runtime
from tooldeck.workspace.roots import Root

SUFFIXES = ("main", "worktree")


def _inside(path: str, parent: str) -> bool:
    return path == parent or path.startswith(parent.rstrip(os.sep) + os.sep)


@dataclass
class Target:
    repo: Repo
    base_dir: str  # output paths are relative to this directory
    notes: list[str] = field(default_factory=list)
    # repository-relative folders git is limited to, when the roots are
    # subdirectories of the repository (None: the whole checkout is inside a root)
    limits: list[str] | None = None

    def within_limits(self, rel: str) -> bool:
        if self.limits is None:
            return True
        return any(lim == "." or rel == lim or rel.startswith(lim + "/") for lim in self.limits)

    @property
    def label(self) -> str:
        return self.repo.toplevel

    def show(self, repo_rel: str) -> str:
        """A repository-relative path as the model sees it."""
        if self.base_dir == self.repo.toplevel:
            return repo_rel
        rel = os.path.relpath(os.path.join(self.repo.toplevel, repo_rel), self.base_dir)
        return rel.replace(os.sep, "/")

    def repo_path(self, path: str, field_name: str = "path") -> str:
        """A model-supplied path (relative to :attr:`base_dir`, or absolute) →
        repository-relative, refusing options and anything outside the checkout."""
        path = refuse_option(path, field_name)
        full = os.path.normpath(path if os.path.isabs(path) else os.path.join(self.base_dir, path))
        top = self.repo.toplevel
        if not _inside(full, top):
            raise ToolError(
                ErrorCode.OUTSIDE_ROOTS,
                f"field `{field_name}`: {path!r} is outside the repository {top}; give a path inside it",
            )
        rel = os.path.relpath(full, top).replace(os.sep, "/")
        if rel == ".git" or rel.startswith(".git/"):
            raise invalid_arguments(f"field `{field_name}`: {path!r} is inside .git", field=field_name)
        if not self.within_limits(rel):
            shown = ", ".join(self.show(lim) if lim != "." else "." for lim in self.limits or [])
            raise ToolError(
                ErrorCode.OUTSIDE_ROOTS,
                f"field `{field_name}`: {path!r} is outside the workspace roots (the repository {top} is larger "
                f"than the roots; git is limited to {shown}); give a path inside a root",
            )
        return rel

    def limit(self, paths: list[str] | None) -> list[str] | None:
        """``paths`` (repository-relative, already checked), or the roots'
        folders when git must not look at the whole repository."""
        return paths if paths is not None else (list(self.limits) if self.limits is not None else None)

    def worktree_line(self) -> str | None:
        """Worktree metadata (branch, main checkout path) when the repository
        has more than one checkout."""
        wts = worktrees(self.repo)
        if len(wts) <= 1:
            return None
        main = wts[0]
        if self.repo.is_linked_worktree:
            this = next((w for w in wts if w.path == self.repo.toplevel), None)
            what = f"branch {this.branch}" if this and this.branch else "detached HEAD"
            others = len(wts) - 2
            more = f"; {others} other linked worktree(s)" if others > 0 else ""
            return f"worktree: linked checkout ({what}); main checkout: {main.describe()}{more}"
        linked = wts[1:]
        shown = ", ".join(w.describe() for w in linked[:8])
        more = f" and {len(linked) - 8} more" if len(linked) > 8 else ""
        return f"worktree: main checkout; linked worktrees: {shown}{more}"


def _strip_suffix(raw: str, root_ids: set[str]) -> tuple[str, str | None]:
    if raw in root_ids:
        return raw, None
    for suffix in SUFFIXES:
        if raw.endswith(":" + suffix):
            return raw[: -len(suffix) - 1], suffix
    return raw, None


def _known_worktree(rt: Runtime, real: str, timeout: float) -> Repo | None:
    """The checkout, under a root, of the repository that has a worktree at
    ``real`` (None when no root's repository has one)."""
    for root in rt.workspace.roots:
        try:
            repo = open_repo(root.path, timeout=timeout)
        except ToolError:
            continue
        for wt in worktrees(repo):
            if wt.path == real:
                return repo
    return None


def resolve_target(rt: Runtime, repo_root: str | None, field_name: str = "repo_root") -> Target:
    ws = rt.workspace
    timeout = float(rt.settings.get("git_timeout", 30.0))
    raw = repo_root.strip() if repo_root else ""
    if "\x00" in raw:
        raise invalid_arguments(f"field `{field_name}` contains a NUL byte", field=field_name)
    if raw.startswith("-"):
        refuse_option(raw, field_name)
    raw, suffix = _strip_suffix(raw, {r.id for r in ws.roots})
    root: Root | None
    known: Repo | None = None
    if not raw:
        root, directory = ws.primary, ws.primary.path
    elif any(r.id == raw for r in ws.roots):
        root = ws.root(raw)
        directory = root.path
    else:
        try:
            rp = ws.resolve(raw, field_name=field_name)
            root, directory = rp.root, rp.abs if os.path.isdir(rp.abs) else os.path.dirname(rp.abs)
        except ToolError as exc:
            real = os.path.realpath(os.path.join(ws.primary.path, raw))
            known = _known_worktree(rt, real, timeout) if exc.code == ErrorCode.OUTSIDE_ROOTS else None
            if known is None:
                raise
            root, directory = None, real
    repo = open_repo(directory, shown=repo_root or (root.id if root else directory), timeout=timeout)
    # the roots' folders relative to the checkout they are in, kept when moving to
    # another checkout of the repository (:main, a worktree outside the roots: same layout)
    first = _root_subdirs(rt, known if root is None and known is not None else repo)
    if suffix == "main":
        main = worktrees(repo)[0]
        if main.bare:
            raise ToolError(ErrorCode.UNSUPPORTED, f"the main repository of {repo.toplevel} is bare (no checkout)")
        if main.path != repo.toplevel:
            repo = open_repo(main.path, timeout=timeout)
            root = ws.containing_root(repo.toplevel)
    base = repo.toplevel
    if root is not None and (_inside(repo.toplevel, root.path) or _inside(root.path, repo.toplevel)):
        base = root.path
    limits = _root_limits(rt, repo, first)
    target = Target(reading_only(repo, limits), base, limits=limits)
    if repo.jj_root:
        missing = "; `jj` is not installed, so jj-only state (its working-copy commit) is not shown"
        state = "" if jj_installed() else missing
        target.notes.append(f"jj: this is a colocated Jujutsu repository, read through git{state}")
    return target


def _root_subdirs(rt: Runtime, repo: Repo) -> list[str] | None:
    """The roots inside ``repo`` as repository-relative folders; None when a
    root contains the whole checkout (no limit needed)."""
    subs: list[str] = []
    for r in rt.workspace.roots:
        if _inside(repo.toplevel, r.path):
            return None
        if _inside(r.path, repo.toplevel):
            subs.append(os.path.relpath(r.path, repo.toplevel).replace(os.sep, "/"))
    return subs


def _root_limits(rt: Runtime, repo: Repo, first: list[str] | None) -> list[str] | None:
    """What git is limited to in ``repo``: the roots' folders in it, else the
    folders found in the checkout the call started from (a ``:main`` checkout
    or a linked worktree outside the roots: the same layout)."""
    here = _root_subdirs(rt, repo)
    if here is None:
        return None
    return here or first or None


def selected_repo_paths(rt: Runtime, target: Target) -> list[str] | None:
    """The selection (from whichever domain provides ``selected_paths``) as
    repository-relative paths inside ``target``; None when no domain
    provides a selection."""
    provider = rt.provider("selected_paths")
    if provider is None:
        return None
    top = target.repo.toplevel
    out: list[str] = []
    for p in provider() or ():
        p = str(p)
        cands = [p] if os.path.isabs(p) else [os.path.join(r.path, p) for r in rt.workspace.roots]
        cands = [os.path.normpath(c) for c in cands if _inside(os.path.normpath(c), top)]
        if not cands:
            continue
        pick = next((c for c in cands if os.path.lexists(c)), cands[0])
        rel = os.path.relpath(pick, top).replace(os.sep, "/")
        if rel not in out:
            out.append(rel)
    return out
