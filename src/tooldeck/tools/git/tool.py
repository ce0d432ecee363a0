"""git (seed 004): status, diff, log, show and blame over the workspace's
repositories, token-efficient and safe (see :mod:`tooldeck.git.runner`)."""

from __future__ import annotations

from tooldeck.core import tool
from tooldeck.core.errors import invalid_arguments
from tooldeck.core.tool import Tool
from tooldeck.runtime import Runtime
from tooldeck.tools.git.diff_view import Budget
from tooldeck.tools.git.model import GitInput
from tooldeck.tools.git.ops import OPS, NothingSelected
from tooldeck.tools.git.target import resolve_target

MAX_REPOS = 16


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
