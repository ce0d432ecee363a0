"""git (seed 004): status, diff, log, show and blame over the workspace's
repositories, token-efficient and safe (see :mod:`tooldeck.git.runner`)."""

from __future__ import annotations

from typing import Literal

from pydantic import Field

from tooldeck.core import ToolInput, tool
from tooldeck.core.errors import invalid_arguments
from tooldeck.core.tool import Tool
from tooldeck.runtime import Runtime
from tooldeck.tools.git.diff_view import Budget
from tooldeck.tools.git.ops import OPS, NothingSelected
from tooldeck.tools.git.target import resolve_target

MAX_REPOS = 16


class GitInput(ToolInput):
    op: Literal["status", "diff", "log", "show", "blame"] = Field(
        description="status: branch, upstream, staged/modified/untracked. diff: changes (see compare). "
        "log: commits with stats. show: one commit. blame: who wrote which lines of `path`."
    )
    repo_root: str | None = Field(
        None,
        description="Root id or path of a checkout (default: the first root). Suffix ':main' = the main checkout "
        "of a worktree setup, ':worktree' = this checkout.",
    )
    repo_roots: list[str] | None = Field(None, description="Several checkouts at once (same syntax as repo_root).")
    compare: str = Field(
        "uncommitted",
        description="diff only: uncommitted (HEAD → working tree, with untracked files), staged, unstaged, last, "
        "back:N (last N commits), mergebase:X (since branching from X, incl. uncommitted), main/trunk (same, "
        "with the default branch), or a revspec: A..B, A...B, A.",
    )
    detail: Literal["summary", "files", "patches", "full"] = Field(
        "summary",
        description="diff/show/log: summary (counts, a line per file), files (+ hunk headers), patches "
        "(+ unified diffs), full (+ whole functions as context). Degrades to fit the output budget.",
    )
    scope: Literal["all", "selected"] = Field("all", description="selected: only the files in the selection.")
    artifacts: bool = Field(
        False, description="diff/show: also write MAP.txt and one .patch per file to the state directory."
    )
    ref: str | None = Field(
        None, description="show: the commit (default HEAD). log: start commit or range A..B. blame: a revision."
    )
    path: str | None = Field(None, description="blame: the file (required). status/diff/log/show: limit to this path.")
    lines: str | None = Field(None, description="blame: line range, e.g. '45-60'.")
    count: int = Field(10, ge=1, le=200, description="log: number of commits.")


def _check_fields(args: GitInput) -> None:
    """Arguments that only make sense for some ops: say so instead of ignoring them."""
    if args.lines is not None and args.op != "blame":
        raise invalid_arguments("field `lines` applies to op=blame only", field="lines")
    if args.artifacts and args.op not in ("diff", "show"):
        raise invalid_arguments("field `artifacts` applies to op=diff and op=show", field="artifacts")
    if args.compare.strip() != "uncommitted" and args.op != "diff":
        hint = " (use ref=A..B for a range)" if args.op == "log" else " (use ref=)" if args.op == "show" else ""
        raise invalid_arguments(f"field `compare` applies to op=diff only{hint}", field="compare")
    if args.repo_root is not None and args.repo_roots is not None:
        raise invalid_arguments("give `repo_root` or `repo_roots`, not both", field="repo_roots")
    if args.repo_roots is not None and not 1 <= len(args.repo_roots) <= MAX_REPOS:
        raise invalid_arguments(f"field `repo_roots`: give 1 to {MAX_REPOS} checkouts", field="repo_roots")


def build(rt: Runtime) -> Tool:
    def git(args: GitInput) -> str:
        _check_fields(args)
        specs: list[str | None] = list(args.repo_roots) if args.repo_roots else [args.repo_root]
        budget = Budget(int(rt.budget_tokens * 0.9), rt.count_tokens).split(len(specs))
        run = OPS[args.op]
        field_name = "repo_roots" if args.repo_roots else "repo_root"
        if len(specs) == 1:
            target = resolve_target(rt, specs[0], field_name)
            try:
                return run(rt, target, args, budget)
            except NothingSelected as notice:
                return str(notice)
        # several checkouts: resolve all first (a bad name fails the call), then one section each
        targets = [resolve_target(rt, s, field_name) for s in specs]
        sections: list[str] = []
        for spec, target in zip(specs, targets, strict=True):
            try:
                body = run(rt, target, args, budget)
            except NothingSelected as notice:
                body = str(notice)
            sections.append(f"=== {spec} ===\n{body}")
        return "\n\n".join(sections)

    return tool(
        git,
        description="Read-only git: status, diff of changes (per `compare`, default uncommitted), commit log, "
        "show, blame. Worktree-aware (repo_root suffix :main / :worktree); never runs external diff or filters.",
        read_only=True,
    )
