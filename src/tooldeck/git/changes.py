"""What changed between the two sides of a :class:`DiffSpec`, file by file,
and the unified patch of each file.

When a detail level shows patches, one ``git diff --raw -z -p`` gives
status, modes, rename pairs and the patches (NUL-separated records, so any
file name parses), and the line counts are read off the patches; past
:data:`MAX_PRELOAD_BYTES` (or with a conflicted file) the listing is a
``git diff --raw --numstat -z`` alone and the patches that can be shown are
fetched by a second call. Untracked files (working-tree specs) are listed by
``git ls-files --others --exclude-standard`` and their "new file" patches are
built here, reading each file without following a symlink."""

from __future__ import annotations

import os
import re
import stat
from collections.abc import Callable, Iterable, Sequence
from concurrent.futures import Future, ThreadPoolExecutor
from dataclasses import dataclass

from tooldeck.core.errors import ToolError
from tooldeck.git.compare import DiffSpec
from tooldeck.git.repo import Repo
from tooldeck.git.runner import DIFF_SAFETY
from tooldeck.git.status import stalled_note
from tooldeck.git.worktree_check import patch_matches_worktree, sides_match_blobs, unverified_note
from tooldeck.workspace.content import read_bytes
from tooldeck.workspace.hidden import is_hidden
from tooldeck.workspace.rulefiles import RuleFilesStall, StallGuard

MAX_UNTRACKED = 500  # untracked files listed per call
MAX_UNTRACKED_BYTES = 1_000_000  # larger untracked files get no patch
MAX_KEPT_BYTES = 64 << 10  # untracked files up to this size are kept from the listing for their patch
MAX_PRELOAD_BYTES = 4_000_000  # patches fetched with the listing up to this size (else only those shown)
MAX_NAMED_PATHS = 1000  # a patch call names at most this many files (else the listing's own pathspec)
_POOL = ThreadPoolExecutor(max_workers=4, thread_name_prefix="tdk-git-untracked")
_DIFF_FLAGS = (*DIFF_SAFETY, "--no-relative", "--src-prefix=a/", "--dst-prefix=b/", "-M", "--ignore-submodules=dirty")


@dataclass(slots=True)
class FileChange:
    status: str  # A M D R C T U X, or "?" for an untracked file
    path: str  # repository-relative, the new side
    old_path: str | None = None  # for renames and copies
    added: int | None = None  # None for binary files
    deleted: int | None = None
    similarity: int | None = None
    old_mode: str = ""
    new_mode: str = ""
    patch: str | None = None
    old_id: str = ""  # full blob ids from the listing ("0…0": not in the object store)
    new_id: str = ""
    content: bytes | None = None  # an untracked file's bytes as it was listed (small ones: read once)

    @property
    def binary(self) -> bool:
        return self.added is None

    @property
    def untracked(self) -> bool:
        return self.status == "?"

    @property
    def paths(self) -> tuple[str, ...]:
        return (self.old_path, self.path) if self.old_path else (self.path,)


@dataclass(slots=True)
class ChangeSet:
    spec: DiffSpec
    files: list[FileChange]
    untracked_skipped: int = 0  # untracked files beyond MAX_UNTRACKED
    paths: Sequence[str] | None = None  # the pathspec the listing was limited to
    untracked_note: str | None = None  # why untracked files were not listed (a FIFO rule file)
    # patches that came with the listing: (context flag, patch of each tracked file by id())
    preloaded: tuple[str, dict[int, str]] | None = None

    @property
    def added(self) -> int:
        return sum(f.added or 0 for f in self.files)

    @property
    def deleted(self) -> int:
        return sum(f.deleted or 0 for f in self.files)


def _pathspec(paths: Sequence[str] | None) -> list[str]:
    return ["--", *paths] if paths else []


def parse_raw_numstat(data: str) -> list[FileChange]:
    """Parse ``git diff --raw --numstat -z`` (raw records, then numstat)."""
    tokens = data.split("\0")
    raw: list[FileChange] = []
    stats: list[tuple[int | None, int | None]] = []
    i = 0
    while i < len(tokens):
        tok = tokens[i]
        if not tok:
            i += 1
            continue
        if tok.startswith(":"):
            meta = tok[1:].split()
            old_mode, new_mode, code = meta[0], meta[1], meta[4]
            letter = code[0]
            score = int(code[1:]) if code[1:].isdigit() else None
            if letter in "RC":
                fc = FileChange(letter, tokens[i + 2], tokens[i + 1], similarity=score)
                i += 3
            else:
                fc = FileChange(letter, tokens[i + 1])
                i += 2
            fc.old_mode, fc.new_mode = old_mode, new_mode
            fc.old_id, fc.new_id = meta[2], meta[3]
            raw.append(fc)
            continue
        added, deleted, path = tok.split("\t", 2)
        count = (None, None) if added == "-" else (int(added), int(deleted))
        stats.append(count)
        i += 3 if path == "" else 1  # a rename's two names follow as their own tokens
    for fc, (a, d) in zip(raw, stats, strict=False):
        fc.added, fc.deleted = a, d
    return _coalesce_unmerged(raw)


def _coalesce_unmerged(files: list[FileChange]) -> list[FileChange]:
    """git lists a conflicted path twice (``U``, then our side against the
    working tree); keep one ``U`` entry with the second entry's counts."""
    out: list[FileChange] = []
    for fc in files:
        prev = out[-1] if out else None
        if prev is not None and prev.status == "U" and prev.path == fc.path and prev.added in (0, None):
            prev.added, prev.deleted = fc.added, fc.deleted
            prev.old_mode, prev.new_mode = fc.old_mode, fc.new_mode
            continue
        out.append(fc)
    return out


def context_flag(context: int | None) -> str:
    """git's flag for ``context`` lines around each hunk (None: whole functions)."""
    return "--function-context" if context is None else f"-U{context}"


def list_changes(
    repo: Repo, spec: DiffSpec, paths: Sequence[str] | None = None, *, patches: str | None = None
) -> ChangeSet:
    """Every changed file of ``spec`` (limited to ``paths``, repository-relative).

    ``patches`` (a :func:`context_flag`, for :func:`load_patches` later) asks the
    same ``git diff`` for the patches too (one process instead of two), unless
    they pass :data:`MAX_PRELOAD_BYTES`: then the listing comes alone and
    :func:`load_patches` fetches only the patches that can be shown. Untracked
    files are listed meanwhile, in parallel with git."""
    untracked: Future[tuple[str | None, list[FileChange], int]] | None = None
    if spec.worktree:
        untracked = _POOL.submit(_untracked_or_note, repo, paths)
    try:
        files, preloaded = _listing(repo, spec, paths, patches)
    except BaseException:
        if untracked is not None:
            untracked.cancel()
        raise
    note, extra, skipped = untracked.result() if untracked is not None else (None, [], 0)
    files.extend(extra)
    return ChangeSet(spec, files, skipped, paths, note, preloaded)


def _untracked_or_note(repo: Repo, paths: Sequence[str] | None) -> tuple[str | None, list[FileChange], int]:
    """The untracked files (and how many were left out), or the note saying
    why they cannot be listed safely (``ls-files --exclude-standard`` opens
    every ``.gitignore``: a FIFO among them would stall it; looked for only
    if git runs long, :func:`tooldeck.git.status.stalled_note`)."""
    try:
        return None, *list_untracked(repo, paths, stop=StallGuard(repo.toplevel))
    except RuleFilesStall as stall:
        return stalled_note(repo, stall.paths), [], 0


def _listing(
    repo: Repo, spec: DiffSpec, paths: Sequence[str] | None, patches: str | None
) -> tuple[list[FileChange], tuple[str, dict[int, str]] | None]:
    """:func:`list_changes`' tracked files, with their patches when asked and small enough."""
    args = ["diff", *_DIFF_FLAGS, "--raw", "-z", "--no-abbrev"]
    if patches is not None:
        # no --numstat here: git would run each file's diff twice (once to count, once to print);
        # the counts are read off the patches instead, which is what --numstat counts
        res = repo.git.run_capped([*args, "-p", patches, *spec.args, *_pathspec(paths)], MAX_PRELOAD_BYTES)
        meta, _, text = res.text.partition("\0\0") if res is not None else ("", "", "")
        # the patches follow the last record and an empty one. A conflicted file turns the
        # listing into combined records (``::``) or ``U`` ones, whose counts are git's own: then two calls
        if res is not None and "\0::" not in "\0" + meta:
            files = parse_raw_numstat(meta)
            found = _assign(files, split_patches(text))
            if all(fc.status != "U" and id(fc) in found for fc in files):
                for fc in files:
                    fc.added, fc.deleted = patch_counts(found[id(fc)])
                return files, (patches, found)
    res = repo.git.run([*args, "--numstat", *spec.args, *_pathspec(paths)])
    return parse_raw_numstat(res.text), None


_HUNK_COUNTS = re.compile(r"^@@ -\d+(?:,(\d+))? \+\d+(?:,(\d+))? @@")


def patch_counts(patch: str) -> tuple[int | None, int | None]:
    """Lines added and deleted in a single-file patch, as ``--numstat``
    counts them; (None, None) for a binary file. Each hunk is read for the
    number of lines its header gives, so a deleted line that reads ``-- x``
    (``--- x`` in the patch) is counted, not taken for a header."""
    added = deleted = 0
    old_left = new_left = 0
    for line in patch.split("\n"):
        if old_left > 0 or new_left > 0:
            first = line[:1]
            if first == "+":
                added += 1
                new_left -= 1
            elif first == "-":
                deleted += 1
                old_left -= 1
            elif first == " ":
                old_left -= 1
                new_left -= 1
            elif first != "\\":  # "\ No newline at end of file" belongs to the hunk
                old_left = new_left = 0
            continue
        if line.startswith("@@ "):
            m = _HUNK_COUNTS.match(line)
            if m:
                old_left = int(m.group(1) or 1)
                new_left = int(m.group(2) or 1)
        elif line.startswith("Binary files ") or line == "GIT binary patch":
            return None, None
    return added, deleted


def list_untracked(
    repo: Repo, paths: Sequence[str] | None = None, *, stop: Callable[[], None] | None = None
) -> tuple[list[FileChange], int]:
    res = repo.git.run(["ls-files", "--others", "--exclude-standard", "-z", *_pathspec(paths)], stop=stop)
    # the state directory is outside every root, even untracked inside this checkout
    names = sorted(n for n in res.text.split("\0") if n and not is_hidden(repo.path_of(n)))
    out: list[FileChange] = []
    for name in names[:MAX_UNTRACKED]:
        fc = FileChange("?", name, new_mode="100644")
        data = _read_untracked(repo, name, fc)
        if data is not None and b"\0" not in data[:8000]:
            text = data.decode("utf-8", "replace")
            fc.added, fc.deleted = len(text.splitlines()), 0
        if data is not None and len(data) <= MAX_KEPT_BYTES:
            fc.content = data  # its patch is made of the same bytes, not of a second read
        out.append(fc)
    return out, max(0, len(names) - MAX_UNTRACKED)


def _read_untracked(repo: Repo, rel: str, fc: FileChange) -> bytes | None:
    """The bytes git would record for an untracked file (a symlink's target
    text, never what it points to), or None when too large or unreadable."""
    full = repo.path_of(rel)
    try:
        st = os.lstat(full)
    except OSError:
        return None
    if stat.S_ISLNK(st.st_mode):
        fc.new_mode = "120000"
        return os.readlink(full).encode("utf-8", "surrogateescape")
    if not stat.S_ISREG(st.st_mode) or st.st_size > MAX_UNTRACKED_BYTES:
        return None
    if st.st_mode & 0o111:
        fc.new_mode = "100755"
    try:  # through the safe path from the checkout: no link followed, a FIFO never waited on
        return read_bytes(full, rel, MAX_UNTRACKED_BYTES + 1, root=repo.toplevel).data
    except (ToolError, OSError):
        return None


def untracked_patch(repo: Repo, fc: FileChange) -> str:
    """A ``new file`` patch for an untracked file, as ``git diff`` would show it
    after ``git add -N``."""
    head = f"diff --git a/{fc.path} b/{fc.path}\nnew file mode {fc.new_mode}\n"
    data = fc.content if fc.content is not None else _read_untracked(repo, fc.path, fc)
    if data is None:
        return head + f"(untracked file not shown: larger than {MAX_UNTRACKED_BYTES} bytes or unreadable)\n"
    if b"\0" in data[:8000]:
        return head + f"Binary files /dev/null and b/{fc.path} differ\n"
    if not data:
        return head
    text = data.decode("utf-8", "replace")
    lines = text.splitlines()
    body = "".join(f"+{line}\n" for line in lines)
    tail = "" if text.endswith("\n") else "\\ No newline at end of file\n"
    return head + f"--- /dev/null\n+++ b/{fc.path}\n@@ -0,0 +1,{len(lines)} @@\n" + body + tail


_PATCH_STARTS = ("diff --git ", "diff --cc ", "diff --combined ")


def split_patches(text: str) -> list[str]:
    """Split a multi-file patch at its ``diff --git`` headers."""
    chunks: list[str] = []
    current: list[str] = []
    for line in text.splitlines(keepends=True):
        if line.startswith(_PATCH_STARTS) and current:
            chunks.append("".join(current))
            current = []
        current.append(line)
    if current:
        chunks.append("".join(current))
    return chunks


_NEEDS_QUOTES = re.compile(r'["\\\x00-\x1f\x7f]')


def _quote(path: str) -> str:
    """git's C-style quoting of a name in a patch header (quotepath=false)."""
    if not _NEEDS_QUOTES.search(path):
        return path
    special = {'"': '\\"', "\\": "\\\\", "\t": "\\t", "\n": "\\n", "\r": "\\r", "\a": "\\a", "\b": "\\b"}
    out = "".join(special.get(c, f"\\{ord(c):03o}" if ord(c) < 0x20 or c == "\x7f" else c) for c in path)
    return f'"{out}"'


def _header(fc: FileChange) -> str:
    if fc.status == "U":  # a conflicted file: git shows a combined diff
        return f"diff --cc {_quote(fc.path)}\n"
    old = fc.old_path or fc.path
    a, b = _quote("a/" + old), _quote("b/" + fc.path)
    return f"diff --git {a} {b}\n"


def load_patches(
    repo: Repo,
    changes: ChangeSet,
    files: Iterable[FileChange] | None = None,
    *,
    context: int | None = 3,
) -> None:
    """Fill ``patch`` on ``files`` (default: all). ``context`` lines around
    each hunk; ``None`` shows whole functions (``--function-context``)."""
    wanted = list(changes.files if files is None else files)
    tracked = [f for f in wanted if not f.untracked]
    for fc in wanted:
        if fc.untracked:
            fc.patch = untracked_patch(repo, fc)
    if not tracked:
        return
    ctx_flag = context_flag(context)
    if changes.preloaded is not None and changes.preloaded[0] == ctx_flag:
        found = changes.preloaded[1]
    else:
        limit: list[str] = list(changes.paths or [])  # never more than the listing saw
        named = sorted({p for f in tracked for p in f.paths})
        if len(named) <= MAX_NAMED_PATHS:
            # the files the listing found, by name (literal pathspecs): git then stats only those in
            # the working tree instead of every tracked file again (3,000 files: 40 -> 12 ms)
            limit = named
        res = repo.git.run(["diff", *_DIFF_FLAGS, "-p", ctx_flag, *changes.spec.args, *_pathspec(limit)])
        found = _assign(tracked, split_patches(res.text))
    for fc in tracked:
        chunk = found.get(id(fc))
        if chunk is not None:
            fc.patch = chunk
    # git may read either side from the working tree by name (worktree_check): check every side
    shown = [fc for fc in tracked if fc.patch]
    full_ids = [(fc.old_id, fc.new_id) for fc in shown]
    objects = os.path.join(repo.common_dir, "objects")
    checked = sides_match_blobs(repo.git, [fc.patch for fc in shown], full_ids, objects)  # type: ignore[misc]
    for fc, ok in zip(shown, checked, strict=True):
        if not ok or (changes.spec.worktree and not patch_matches_worktree(repo.toplevel, fc.path, fc.patch)):
            fc.patch = unverified_note(_header(fc))


def _assign(files: Sequence[FileChange], chunks: list[str]) -> dict[int, str]:
    """Each tracked file's patch among ``chunks`` (by ``id()`` of the file),
    matched by its ``diff --git`` header (a type change has two chunks under
    one header, "deleted" then "new": both are its patch); chunks whose names
    git writes differently than expected go to the files left, in order."""
    by_header: dict[str, str] = {}
    for chunk in chunks:
        header = chunk.split("\n", 1)[0] + "\n"
        by_header[header] = by_header.get(header, "") + chunk
    out: dict[int, str] = {}
    unmatched: list[FileChange] = []
    for fc in files:
        if fc.untracked:
            continue
        chunk = by_header.pop(_header(fc), None)
        if chunk is None:
            unmatched.append(fc)
        else:
            out[id(fc)] = chunk
    for fc, chunk in zip(unmatched, by_header.values(), strict=False):
        out[id(fc)] = chunk
    return out


def hunk_headers(patch: str) -> list[str]:
    """The ``@@ ... @@`` lines of a patch (what changed where)."""
    return [line for line in patch.splitlines() if line.startswith("@@")]
