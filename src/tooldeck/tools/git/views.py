"""Text for ``status``, ``log``, ``show`` headers and ``blame``: compact,
one fact per line, paths as the model passes them back."""

from __future__ import annotations

from collections.abc import Sequence

from tooldeck.git.history import BlameCommit, BlameLine, Commit, FileStat
from tooldeck.git.status import RepoStatus, StatusEntry
from tooldeck.tools.git.diff_view import Budget
from tooldeck.tools.git.target import Target

MAX_STATUS_ENTRIES = 200  # per group


def branch_line(st: RepoStatus) -> str:
    if st.head_oid is None:
        head = f"branch {st.branch} (no commits yet)"
    elif st.branch is None:
        head = f"detached HEAD at {st.head_oid[:7]}"
    else:
        head = f"branch {st.branch} at {st.head_oid[:7]}"
    if st.upstream:
        ab = ""
        if st.ahead is not None:
            ab = f", ahead {st.ahead}, behind {st.behind}"
        head += f" (upstream {st.upstream}{ab})"
    elif st.branch is not None and st.head_oid is not None:
        head += " (no upstream)"
    return head


def _entry(t: Target, e: StatusEntry) -> str:
    name = t.show(e.path)
    if e.old_path:
        name = f"{t.show(e.old_path)} → {name}"
    return f"  {e.code} {name}" if e.code != "?" else f"  {name}"


def render_status(t: Target, st: RepoStatus, context: Sequence[str]) -> str:
    lines = [f"repo: {t.label}", branch_line(st), *context]
    if st.operation:
        lines.append(f"in progress: {st.operation}")
    if st.stash:
        lines.append(f"stash: {st.stash} entr{'y' if st.stash == 1 else 'ies'}")
    if st.untracked_note:
        lines.append(f"[{st.untracked_note}]")
    if st.clean:
        lines.append("working tree clean")
        return "\n".join(lines)
    groups = (
        ("conflicts", st.conflicts),
        ("staged", st.staged),
        ("modified (not staged)", st.modified),
        ("untracked", st.untracked),
    )
    for title, entries in groups:
        if not entries:
            continue
        lines.append(f"{title} ({len(entries)}):")
        lines += [_entry(t, e) for e in entries[:MAX_STATUS_ENTRIES]]
        if len(entries) > MAX_STATUS_ENTRIES:
            lines.append(f"  … {len(entries) - MAX_STATUS_ENTRIES} more; narrow with path=")
    return "\n".join(lines)


# -- log / show ----------------------------------------------------------------


def _stat(f: FileStat) -> str:
    return "binary" if f.added is None else f"+{f.added} -{f.deleted}"


def commit_line(c: Commit) -> str:
    refs = f" [{c.refs}]" if c.refs else ""
    merge = " (merge)" if len(c.parents) > 1 else ""
    files = f"{len(c.files)} file{'s' if len(c.files) != 1 else ''} +{c.added} -{c.deleted}"
    return f"{c.sha[:7]} {c.date[:10]} {c.author}: {c.subject}{merge}{refs} ({files})"


def file_stat_lines(t: Target, files: Sequence[FileStat], indent: str = "    ") -> list[str]:
    out = []
    for f in files:
        name = t.show(f.path)
        if f.old_path:
            name = f"{t.show(f.old_path)} → {name}"
        out.append(f"{indent}{name}  {_stat(f)}")
    return out


def render_log(t: Target, commits: Sequence[Commit], detail: str, budget: Budget, title: str) -> str:
    """One line per commit always; then, while the budget lasts, each
    commit's file list (and body, for ``full``), then each commit's patch."""
    head = [title]
    if not commits:
        return "\n".join([*head, "no commits"])
    if detail == "summary":
        return "\n".join(head + [commit_line(c) for c in commits])
    used = budget.count("\n".join(head + [commit_line(c) for c in commits]))
    extras: dict[str, list[str]] = {}
    lists_left_out: list[Commit] = []
    for c in commits:
        extra = ["    " + ln for ln in c.body.splitlines()] if detail == "full" and c.body else []
        extra += file_stat_lines(t, c.files)
        cost = budget.count("\n".join(extra)) if extra else 0
        if used + cost <= budget.tokens:
            extras[c.sha] = extra
            used += cost
        else:
            lists_left_out.append(c)
    patches: dict[str, str] = {}
    for c in commits:
        patch = (c.patch or "").rstrip("\n")
        if detail not in ("patches", "full") or not patch or c.sha not in extras:
            continue
        cost = budget.count(patch)
        if used + cost <= budget.tokens:
            patches[c.sha] = patch
            used += cost
    patches_left_out: list[Commit] = []
    if detail in ("patches", "full"):
        patches_left_out = [c for c in commits if c.sha not in patches and c.files]
    out = list(head)
    for c in commits:
        out.append(commit_line(c))
        out += extras.get(c.sha, [])
        if c.sha in patches:
            out += [patches[c.sha], ""]
    for what, left in (("file lists", lists_left_out), ("patches", patches_left_out)):
        if left:
            shas = ", ".join(c.sha[:7] for c in left[:10])
            out.append(
                f"[{what} of {len(left)} commit(s) left out to fit the ~{budget.tokens}-token budget: {shas}; "
                "see one with op=show ref=<sha>]"
            )
    return "\n".join(out).rstrip("\n")


def show_header(c: Commit) -> list[str]:
    lines = [f"commit {c.sha}" + (f" [{c.refs}]" if c.refs else "")]
    lines.append(f"author: {c.author} <{c.email}> {c.date}")
    if c.committer != c.author or c.commit_date[:10] != c.date[:10]:
        lines.append(f"committer: {c.committer} {c.commit_date}")
    if len(c.parents) > 1:
        lines.append(f"merge of {' '.join(p[:7] for p in c.parents)} (diff against the first parent)")
    elif c.parents:
        lines.append(f"parent: {c.parents[0][:7]}")
    else:
        lines.append("root commit (no parent)")
    lines.append("")
    lines.append("    " + c.subject)
    if c.body:
        lines.append("")
        lines += ["    " + ln if ln else "" for ln in c.body.splitlines()]
    lines.append("")
    return lines


# -- blame -----------------------------------------------------------------------


def render_blame(
    shown_path: str, where: str, lines: Sequence[BlameLine], commits: dict[str, BlameCommit], range_text: str
) -> str:
    out = [f"blame {shown_path}{range_text} ({where})"]
    if not lines:
        return "\n".join([*out, "(no lines)"])
    width = len(str(max(bl.line for bl in lines)))
    last = None
    for bl in lines:
        if bl.sha != last:
            c = commits.get(bl.sha)
            if c is None or c.uncommitted:
                out.append("0000000 not committed yet")
            else:
                out.append(f"{c.sha[:7]} {c.author} {c.date} {c.summary}")
            last = bl.sha
        out.append(f"  {bl.line:>{width}}| {bl.text}")
    return "\n".join(out)
