"""Commits and line attribution: ``git log`` with per-file stats, one
commit's metadata for ``show``, and ``git blame --porcelain``.

Formats use ASCII record/unit separators (``%x1e`` / ``%x1f``) and ``-z`` so
that subjects, bodies and file names parse whatever they contain. Every
revision passed in is an object id already resolved by
:func:`tooldeck.git.repo.resolve_commit`.
"""

from __future__ import annotations

import time
from collections.abc import Sequence
from dataclasses import dataclass, field

from tooldeck.core.errors import ErrorCode, ToolError, invalid_arguments
from tooldeck.git.changes import split_patches
from tooldeck.git.repo import Repo
from tooldeck.git.runner import DIFF_SAFETY
from tooldeck.git.worktree_check import sides_match_blobs, unverified_note
from tooldeck.workspace.content import read_bytes

_LOG_FIELDS = ("%H", "%an", "%ae", "%aI", "%cn", "%cI", "%P", "%D", "%s", "%b")
_LOG_FORMAT = "%x1e" + "%x1f".join(_LOG_FIELDS)
_LOG_FLAGS = (*DIFF_SAFETY, "-M", "--diff-merges=first-parent", "--no-relative")


@dataclass(slots=True)
class FileStat:
    path: str
    added: int | None  # None for binary
    deleted: int | None
    old_path: str | None = None


@dataclass(slots=True)
class Commit:
    sha: str
    author: str
    email: str
    date: str  # ISO 8601, author date
    committer: str
    commit_date: str
    parents: list[str]
    refs: str  # "HEAD -> main, origin/main"
    subject: str
    body: str
    files: list[FileStat] = field(default_factory=list)
    patch: str | None = None

    @property
    def added(self) -> int:
        return sum(f.added or 0 for f in self.files)

    @property
    def deleted(self) -> int:
        return sum(f.deleted or 0 for f in self.files)


def parse_numstat_z(data: str) -> list[FileStat]:
    tokens = [t for t in data.lstrip("\n").split("\0")]
    out: list[FileStat] = []
    i = 0
    while i < len(tokens):
        tok = tokens[i].lstrip("\n")
        if not tok or "\t" not in tok:
            i += 1
            continue
        added, deleted, path = tok.split("\t", 2)
        a, d = (None, None) if added == "-" else (int(added), int(deleted))
        if path == "" and i + 2 < len(tokens):
            out.append(FileStat(tokens[i + 2], a, d, tokens[i + 1]))
            i += 3
        else:
            out.append(FileStat(path, a, d))
            i += 1
    return out


def parse_log(data: str) -> list[Commit]:
    commits: list[Commit] = []
    for record in data.split("\x1e")[1:]:
        header, _, rest = record.partition("\0")
        f = header.split("\x1f")
        if len(f) < len(_LOG_FIELDS):
            continue
        body = f[9].strip()
        commits.append(
            Commit(f[0], f[1], f[2], f[3], f[4], f[5], f[6].split(), f[7], f[8], body, parse_numstat_z(rest))
        )
    return commits


def log(repo: Repo, start: str, count: int, *, exclude: str | None = None, paths: Sequence[str] = ()) -> list[Commit]:
    """Up to ``count`` commits reachable from ``start`` (not from ``exclude``),
    newest first, each with per-file line counts."""
    revs = [start] + ([f"^{exclude}"] if exclude else [])
    args = ["log", *_LOG_FLAGS, f"--max-count={count}", f"--format={_LOG_FORMAT}", "--numstat", "-z", *revs]
    args += ["--", *paths] if paths else []
    return parse_log(repo.git.text(args))


def commit_patches(
    repo: Repo, commits: Sequence[Commit], *, context: int | None = 3, paths: Sequence[str] = ()
) -> None:
    """Fill ``patch`` on each commit (its diff against its first parent),
    limited to ``paths`` (repository-relative) when given."""
    if not commits:
        return
    ctx_flag = "--function-context" if context is None else f"-U{context}"
    args = ["log", *_LOG_FLAGS, "--no-walk=unsorted", "-p", ctx_flag, "--src-prefix=a/", "--dst-prefix=b/"]
    args += ["--format=%x1e%H", *[c.sha for c in commits]]
    args += ["--", *paths] if paths else []
    by_sha: dict[str, list[str]] = {}
    for record in repo.git.text(args).split("\x1e")[1:]:
        sha, _, patch = record.partition("\n")
        by_sha[sha.strip()] = split_patches(patch.strip("\n") + "\n") if patch.strip() else []
    # a blob git finds unchanged in the working tree is read from there, by name (worktree_check)
    chunks = [chunk for parts in by_sha.values() for chunk in parts]
    verdicts = iter(sides_match_blobs(repo.git, chunks))
    checked = {
        sha: "".join(p if next(verdicts) else unverified_note(p.split("\n", 1)[0] + "\n") for p in parts)
        for sha, parts in by_sha.items()
    }
    for c in commits:
        c.patch = checked.get(c.sha, "")


def commit_info(repo: Repo, sha: str) -> Commit:
    """One commit's metadata (no file stats: ``show`` lists its changes itself)."""
    args = ["log", "--no-walk", f"--format={_LOG_FORMAT}", "-z", sha]
    commits = parse_log(repo.git.text(args))
    if not commits:
        raise ToolError(ErrorCode.GIT_ERROR, f"commit {sha[:12]} could not be read")
    return commits[0]


# -- blame -------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class BlameLine:
    sha: str
    line: int  # line number in the blamed version
    text: str


@dataclass(frozen=True, slots=True)
class BlameCommit:
    sha: str
    author: str
    time: int  # author time, epoch seconds
    summary: str

    @property
    def uncommitted(self) -> bool:
        return set(self.sha) == {"0"}

    @property
    def date(self) -> str:
        return time.strftime("%Y-%m-%d", time.gmtime(self.time))


def parse_line_range(lines: str | None) -> tuple[int, int | None] | None:
    """``"45-60"`` → (45, 60); ``"45"`` → (45, 45); ``"45-"`` → (45, None)."""
    if lines is None or not lines.strip():
        return None
    text = lines.strip().replace(" ", "")
    start_s, sep, end_s = text.partition("-")
    if not start_s.isdigit() or (end_s and not end_s.isdigit()):
        raise invalid_arguments(f"field `lines`: write a range like '45-60' or '45' (got {lines!r})", field="lines")
    start = int(start_s)
    end = int(end_s) if end_s else (None if sep else start)
    if start < 1 or (end is not None and end < start):
        raise invalid_arguments(f"field `lines`: {lines!r} is not a valid range (1-based, start ≤ end)", field="lines")
    return start, end


MAX_BLAME_BYTES = 64 * 1024 * 1024


def blame(
    repo: Repo, path: str, *, rev: str | None = None, line_range: tuple[int, int | None] | None = None
) -> tuple[list[BlameLine], dict[str, BlameCommit]]:
    """Blame ``path`` (repository-relative) at ``rev`` (default: the working tree)."""
    args = ["blame", "--porcelain", "--no-textconv"]
    if line_range is not None:
        start, end = line_range
        args.append(f"-L{start},{end if end is not None else ''}")
    data: bytes | None = None
    if rev:
        args.append(rev)
    else:
        # git would open the working-tree file by name (following a folder
        # swapped for a link): read it through the safe path and hand it over
        fb = read_bytes(repo.path_of(path), path, MAX_BLAME_BYTES, root=repo.toplevel)
        if fb.truncated:
            raise ToolError(ErrorCode.TOO_LARGE, f"{path!r} is over {MAX_BLAME_BYTES} bytes; blame a commit with `ref`")
        data = fb.data
        args += ["--contents", "-"]
    args += ["--", path]
    res = repo.git.run(args, ok=(0, 128), input=data)
    if res.code != 0:
        msg = res.stderr.strip().removeprefix("fatal: ")
        if "has only" in msg and "line" in msg:
            raise invalid_arguments(f"field `lines`: {msg}; ask for a range inside the file", field="lines")
        if "no such path" in msg or "no such ref" in msg:
            where = f" in {rev[:12]}" if rev else ""
            raise ToolError(ErrorCode.NOT_FOUND, f"{path!r} is not tracked{where}: {msg}; check the path")
        raise ToolError(ErrorCode.GIT_ERROR, f"git blame failed: {msg}")
    return parse_blame(res.text)


def parse_blame(data: str) -> tuple[list[BlameLine], dict[str, BlameCommit]]:
    lines: list[BlameLine] = []
    info: dict[str, dict[str, str]] = {}
    sha, final = "", 0
    for raw in data.split("\n"):
        if raw.startswith("\t"):
            lines.append(BlameLine(sha, final, raw[1:]))
            continue
        head, _, value = raw.partition(" ")
        if len(head) in (40, 64) and all(c in "0123456789abcdef" for c in head):
            parts = value.split()
            sha, final = head, int(parts[1])
            info.setdefault(sha, {})
        elif sha and head in ("author", "author-time", "summary"):
            info[sha][head] = value
    commits = {
        s: BlameCommit(s, d.get("author", "?"), int(d.get("author-time", "0") or 0), d.get("summary", ""))
        for s, d in info.items()
    }
    return lines, commits
