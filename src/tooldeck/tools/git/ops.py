"""The five git operations for one checkout: status, diff, log, show, blame.

Each takes a resolved :class:`Target`, the validated input and a budget, and
returns text. Model-supplied revisions go through ``resolve_commit`` and
paths through :meth:`Target.repo_path` before git sees them.
"""

from __future__ import annotations

import os

from tooldeck.core.errors import ErrorCode, ToolError, invalid_arguments
from tooldeck.git.artifacts import Snapshot, write_snapshot
from tooldeck.git.changes import ChangeSet, context_flag, list_changes, load_patches
from tooldeck.git.compare import DiffSpec, parse_compare
from tooldeck.git.history import blame, commit_info, commit_patches, log, parse_line_range
from tooldeck.git.repo import current_branch, empty_tree, head_commit, resolve_commit
from tooldeck.git.status import repo_status
from tooldeck.runtime import Runtime
from tooldeck.tools.git.diff_view import Budget, render_changes
from tooldeck.tools.git.model import GitInput
from tooldeck.tools.git.target import Target, selected_repo_paths
from tooldeck.tools.git.views import render_blame, render_log, render_status, show_header


class NothingSelected(Exception):
    """scope=selected with no selected file in this repository: a notice, not an error."""


def pathspecs(rt: Runtime, t: Target, args: GitInput) -> list[str] | None:
    """Repository-relative paths the op is limited to (None: everything)."""
    only = [t.repo_path(args.path)] if args.path else None
    if args.scope != "selected":
        return t.limit(only)
    selected = selected_repo_paths(rt, t)
    if selected is not None:
        selected = [p for p in selected if t.within_limits(p)]
    if selected is None:
        raise NothingSelected(
            "scope=selected: no selection is available (no selection domain is loaded); use scope=all or path="
        )
    if only is not None:
        base = only[0].rstrip("/")
        selected = [p for p in selected if base in (".", p) or p.startswith(base + "/")]
    if not selected:
        raise NothingSelected(
            "scope=selected: no selected file is in this repository; select files with manage_selection "
            "or use scope=all"
        )
    return selected


def context_lines(t: Target, args: GitInput, paths: list[str] | None) -> list[str]:
    lines: list[str] = []
    wt = t.worktree_line()
    if wt:
        lines.append(wt)
    lines += t.notes
    if args.scope == "selected" and paths:
        lines.append(f"scope: {len(paths)} selected path(s)")
    elif args.path:
        lines.append(f"limited to: {args.path}")
    elif t.limits:
        lines.append("limited to the roots' folders (the repository is larger): " + ", ".join(t.limits))
    return lines


def repo_line(t: Target) -> str:
    branch = current_branch(t.repo)
    return f"repo: {t.label}" + (f" (branch {branch})" if branch else " (detached HEAD)")


# -- status ----------------------------------------------------------------------


def op_status(rt: Runtime, t: Target, args: GitInput, budget: Budget) -> str:
    paths = pathspecs(rt, t, args)
    return render_status(t, repo_status(t.repo, paths), context_lines(t, args, paths))


# -- diff / show -------------------------------------------------------------------


def _artifacts(rt: Runtime, t: Target, cs: ChangeSet, detail: str) -> tuple[Snapshot | None, list[str]]:
    if not cs.files:
        return None, ["[artifacts: nothing changed, nothing written]"]
    load_patches(t.repo, cs, context=None if detail == "full" else 3)
    snap = write_snapshot(str(rt.state_dir), cs, repo_label=t.label, show_path=t.show)
    return snap, [
        f"artifacts: {snap.directory}",
        f"  {os.path.basename(snap.map_path)} (file list with stats) and {len(snap.patches)} .patch file(s)",
    ]


def _changes_text(
    rt: Runtime, t: Target, args: GitInput, budget: Budget, spec: DiffSpec, paths: list[str] | None, header: list[str]
) -> str:
    # the patches the detail shows come with the listing (one git process instead of two)
    wanted = {"files": context_flag(0), "patches": context_flag(3), "full": context_flag(None)}.get(args.detail)
    cs = list_changes(t.repo, spec, paths, patches=wanted)
    footer: list[str] = []
    snap = None
    if args.artifacts:
        snap, footer = _artifacts(rt, t, cs, args.detail)
    room = Budget(max(500, budget.tokens - budget.count("\n".join(footer))), budget.count)
    body = render_changes(t, cs, args.detail, room, header, preloaded=snap is not None)
    return "\n".join([body, *footer]) if footer else body


def op_diff(rt: Runtime, t: Target, args: GitInput, budget: Budget) -> str:
    spec = parse_compare(t.repo, args.compare)
    paths = pathspecs(rt, t, args)
    header = [repo_line(t), *context_lines(t, args, paths), f"diff {spec.label}: {spec.description}"]
    return _changes_text(rt, t, args, budget, spec, paths, header)


def op_show(rt: Runtime, t: Target, args: GitInput, budget: Budget) -> str:
    ref = args.ref or "HEAD"
    sha = resolve_commit(t.repo, ref, "ref")
    commit = commit_info(t.repo, sha)
    base = commit.parents[0] if commit.parents else empty_tree(t.repo)
    spec = DiffSpec(ref, f"{base[:7]} → {sha[:7]}", (base, sha), False, base, sha)
    paths = pathspecs(rt, t, args)
    header = [f"repo: {t.label}", *context_lines(t, args, paths), *show_header(commit)]
    return _changes_text(rt, t, args, budget, spec, paths, header)


# -- log -------------------------------------------------------------------------


def op_log(rt: Runtime, t: Target, args: GitInput, budget: Budget) -> str:
    paths = pathspecs(rt, t, args)
    exclude: str | None = None
    if args.ref and ".." in args.ref:
        if "..." in args.ref:
            raise invalid_arguments("field `ref`: op=log takes a commit or a range A..B (not A...B)", field="ref")
        left, right = args.ref.split("..", 1)
        start = resolve_commit(t.repo, right, "ref") if right else head_commit(t.repo)
        exclude = resolve_commit(t.repo, left, "ref") if left else head_commit(t.repo)
        desc = args.ref
    elif args.ref:
        start, desc = resolve_commit(t.repo, args.ref, "ref"), args.ref
    else:
        start, desc = head_commit(t.repo), "HEAD"
    header = [repo_line(t), *context_lines(t, args, paths)]
    if start is None:
        return "\n".join([*header, "no commits yet"])
    commits = log(t.repo, start, args.count, exclude=exclude, paths=paths or ())
    if args.detail in ("patches", "full"):
        est, wanted = 0, []
        for c in commits:
            est += ((c.added + c.deleted) * 3 if args.detail == "full" else c.added + c.deleted) * 12 + 100
            if est > 3 * budget.tokens:
                break
            wanted.append(c)
        commit_patches(t.repo, wanted, context=None if args.detail == "full" else 3, paths=paths or ())
    limited = f", path {args.path}" if args.path else ""
    title = f"log {desc}: {len(commits)} commit(s), newest first{limited}"
    return render_log(t, commits, args.detail, budget, "\n".join([*header, title]))


# -- blame -----------------------------------------------------------------------


def op_blame(rt: Runtime, t: Target, args: GitInput, budget: Budget) -> str:
    if not args.path:
        raise invalid_arguments("op=blame needs `path` (a file) and optionally `lines` like '45-60'", field="path")
    rel = t.repo_path(args.path)
    rev = resolve_commit(t.repo, args.ref, "ref") if args.ref else None
    if rev is None:
        full = t.repo.path_of(rel)
        if os.path.isdir(full):
            raise ToolError(ErrorCode.NOT_A_FILE, f"{args.path!r} is a directory; blame takes a file")
        if not os.path.lexists(full):
            raise ToolError(ErrorCode.NOT_FOUND, f"{args.path!r} does not exist in the working tree; check the path")
    line_range = parse_line_range(args.lines)
    lines, commits = blame(t.repo, rel, rev=rev, line_range=line_range)
    where = f"at {args.ref} {rev[:7]}" if rev else "working tree"
    range_text = f":{args.lines.strip()}" if args.lines else ""
    return render_blame(t.show(rel), where, lines, commits, range_text)


OPS = {"status": op_status, "diff": op_diff, "log": op_log, "show": op_show, "blame": op_blame}
