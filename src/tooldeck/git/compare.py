"""Compare specs (``uncommitted``, ``staged``, ``mergebase:X``, ``back:N``,
``A..B`` ...) → what ``git diff`` compares.

Every revision in a spec is resolved to an object id here, so the
:class:`DiffSpec` handed to ``git diff`` holds only ids and fixed flags.
Specs whose right side is the working tree also include untracked files (an
agent's new files are part of "what I changed").
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from tooldeck.core.errors import ErrorCode, ToolError, invalid_arguments
from tooldeck.git.repo import Repo, default_branch, empty_tree, head_commit, merge_base, resolve_commit, short
from tooldeck.git.runner import refuse_option

NAMED_SPECS = ("uncommitted", "staged", "unstaged", "last", "main", "trunk")
_BACK_RE = re.compile(r"^back:(\d{1,6})$")


@dataclass(frozen=True, slots=True)
class DiffSpec:
    label: str  # the spec as the model wrote it
    description: str  # "HEAD 1a2b3c4 → working tree"
    args: tuple[str, ...]  # revision arguments for `git diff`: ids and fixed flags only
    worktree: bool  # the right side is the working tree: untracked files count
    base: str | None = None  # left-side commit/tree id, when there is one
    head: str | None = None  # right-side commit id, when there is one


def _head_or_empty(repo: Repo) -> tuple[str, str]:
    head = head_commit(repo)
    if head is None:
        return empty_tree(repo), "empty tree (no commit yet)"
    return head, f"HEAD {short(repo, head)}"


def _require_head(repo: Repo, spec: str) -> str:
    head = head_commit(repo)
    if head is None:
        raise ToolError(ErrorCode.GIT_ERROR, f"compare={spec!r} needs a commit, but this branch has none yet")
    return head


def _back(repo: Repo, label: str, n: int) -> DiffSpec:
    head = _require_head(repo, label)
    if n == 0:
        raise invalid_arguments("compare back:N needs N ≥ 1 (back:1 is the last commit)", field="compare")
    res = repo.git.run(["rev-parse", "--verify", "--quiet", f"{head}~{n}^{{commit}}"], ok=(0, 1, 128))
    if res.code == 0 and res.text.strip():
        base = res.text.strip()
        base_desc = f"HEAD~{n} {short(repo, base)}"
    else:
        total = int(repo.git.text(["rev-list", "--count", "--first-parent", head]).strip() or "0")
        if n != total:
            raise invalid_arguments(
                f"compare {label!r}: HEAD has only {total} commit(s) on its first-parent line; use back:{total} "
                "or fewer",
                field="compare",
            )
        base, base_desc = empty_tree(repo), "empty tree (before the first commit)"
    return DiffSpec(label, f"{base_desc} → HEAD {short(repo, head)}", (base, head), False, base, head)


def _range(repo: Repo, label: str, left: str, right: str, three_dot: bool) -> DiffSpec:
    a = resolve_commit(repo, left, "compare") if left else _require_head(repo, label)
    b = resolve_commit(repo, right, "compare") if right else _require_head(repo, label)
    a_name, b_name = left or "HEAD", right or "HEAD"
    if three_dot:
        base = merge_base(repo, a, b)
        desc = f"merge-base({a_name}, {b_name}) {short(repo, base)} → {b_name} {short(repo, b)}"
        return DiffSpec(label, desc, (base, b), False, base, b)
    return DiffSpec(label, f"{a_name} {short(repo, a)} → {b_name} {short(repo, b)}", (a, b), False, a, b)


def _since_merge_base(repo: Repo, label: str, other: str, other_id: str) -> DiffSpec:
    head = _require_head(repo, label)
    base = merge_base(repo, other_id, head)
    desc = f"merge-base({other}, HEAD) {short(repo, base)} → working tree"
    return DiffSpec(label, desc, (base,), True, base, None)


def parse_compare(repo: Repo, spec: str | None) -> DiffSpec:
    """Resolve a compare spec for ``git diff``.

    * ``uncommitted`` (default): HEAD → working tree (staged + unstaged + untracked)
    * ``staged``: HEAD → index; ``unstaged``: index → working tree (+ untracked)
    * ``last``: HEAD~1 → HEAD; ``back:N``: HEAD~N → HEAD
    * ``mergebase:X``: merge-base(X, HEAD) → working tree (the branch's commits
      and what is not committed yet); ``main`` / ``trunk``: the same with the
      default branch
    * any revspec: ``A..B``, ``A...B`` (from their merge-base), or ``A``
      (A → working tree, as ``git diff A``)
    """
    label = (spec or "uncommitted").strip()
    if label == "uncommitted":
        base, desc = _head_or_empty(repo)
        return DiffSpec(label, f"{desc} → working tree", (base,), True, base, None)
    if label == "staged":
        base, desc = _head_or_empty(repo)
        return DiffSpec(label, f"{desc} → index (staged)", ("--cached", base), False, base, None)
    if label == "unstaged":
        return DiffSpec(label, "index → working tree (unstaged)", (), True, None, None)
    if label == "last":
        return _back(repo, label, 1)
    if m := _BACK_RE.match(label):
        return _back(repo, label, int(m.group(1)))
    if label.startswith("back:"):
        raise invalid_arguments(f"compare {label!r}: write back:N with N a number of commits", field="compare")
    if label in ("main", "trunk"):
        branch = default_branch(repo)
        return _since_merge_base(repo, label, branch, resolve_commit(repo, branch, "compare"))
    if label.startswith("mergebase:"):
        other = refuse_option(label[len("mergebase:") :], "compare")
        return _since_merge_base(repo, label, other, resolve_commit(repo, other, "compare"))
    refuse_option(label, "compare")
    if "..." in label:
        left, right = label.split("...", 1)
        return _range(repo, label, left, right, True)
    if ".." in label:
        left, right = label.split("..", 1)
        return _range(repo, label, left, right, False)
    rev = resolve_commit(repo, label, "compare")
    return DiffSpec(label, f"{label} {short(repo, rev)} → working tree", (rev,), True, rev, None)
