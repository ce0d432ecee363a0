"""The git tool's input model: a module of its own so the operations
(``ops.py``) and the tool (``tool.py``) both read it without importing each other."""

from __future__ import annotations

from typing import Literal

from pydantic import Field

from tooldeck.core import ToolInput


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
