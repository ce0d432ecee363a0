"""A :class:`ChangeSet` as text at a detail level, inside the output budget.

Levels: ``summary`` (totals and one line per file), ``files`` (plus each
file's hunk headers: where it changed), ``patches`` (plus unified patches, 3
lines of context), ``full`` (patches with whole functions as context).

Budget: a level that does not fit degrades instead of being cut: ``full``
falls back to ``patches``; ``patches`` keeps the patches that fit (in file
order) and lists the rest by name with a note saying how to get them;
``files`` keeps every file's line and drops hunk lists that do not fit. Patches are only fetched for files whose
estimated size could fit, so a huge diff never loads whole.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass

from tooldeck.git.changes import ChangeSet, FileChange, hunk_headers, load_patches
from tooldeck.tools.git.target import Target

MAX_HUNKS_PER_FILE = 12
_TOKENS_PER_LINE = 12  # rough upper estimate for a patch line


@dataclass(frozen=True, slots=True)
class Budget:
    tokens: int
    count: Callable[[str], int]

    def fits(self, text: str, tokens: int | None = None) -> bool:
        limit = self.tokens if tokens is None else tokens
        if len(text.encode("utf-8", "replace")) <= limit:
            return True
        return self.count(text) <= limit

    def split(self, parts: int) -> Budget:
        """A share of the budget for one of ``parts`` sections."""
        if parts <= 1:
            return self
        return Budget(max(1000, self.tokens // max(1, parts)), self.count)


def stats(fc: FileChange) -> str:
    if fc.binary:
        return "binary" if not fc.untracked else "new file (not shown: binary or large)"
    return f"+{fc.added} -{fc.deleted}"


def file_line(t: Target, fc: FileChange) -> str:
    code = "??" if fc.untracked else fc.status
    name = t.show(fc.path)
    if fc.old_path:
        name = f"{t.show(fc.old_path)} → {name}"
    extra = ""
    if fc.similarity is not None and fc.status in "RC":
        extra += f" ({fc.similarity}% similar)"
    if fc.old_mode and fc.new_mode and "000000" not in (fc.old_mode, fc.new_mode) and fc.old_mode != fc.new_mode:
        extra += f" mode {fc.old_mode}→{fc.new_mode}"
    return f"{code:<2} {name}  {stats(fc)}{extra}"


def totals_line(cs: ChangeSet) -> str:
    n = len(cs.files)
    untracked = sum(1 for f in cs.files if f.untracked)
    extra = f" ({untracked} untracked)" if untracked else ""
    return f"{n} file{'s' if n != 1 else ''} changed, +{cs.added} -{cs.deleted}{extra}"


def _estimate(fc: FileChange) -> int:
    if fc.binary:
        return 40
    return ((fc.added or 0) + (fc.deleted or 0) + 8) * _TOKENS_PER_LINE


def candidates(files: Sequence[FileChange], tokens: int) -> list[FileChange]:
    """Files, in order, whose patches could fit ``tokens`` (generously)."""
    out: list[FileChange] = []
    used = 0
    for fc in files:
        est = _estimate(fc)
        if used + est <= 3 * tokens:
            out.append(fc)
            used += est
    return out


def _listing(t: Target, cs: ChangeSet) -> list[str]:
    lines = [totals_line(cs), *(file_line(t, fc) for fc in cs.files)]
    if cs.untracked_skipped:
        lines.append(f"[{cs.untracked_skipped} more untracked files not listed; narrow with path=]")
    if cs.untracked_note:
        lines.append(f"[{cs.untracked_note}]")
    return lines


def rollup(t: Target, cs: ChangeSet, budget: Budget, tokens: int) -> list[str]:
    """Changes grouped by folder, as deep as fits ``tokens``: for a file list
    too long to show."""
    lines: list[str] = []
    for depth in (4, 3, 2, 1):
        groups: dict[str, list[int]] = {}
        for fc in cs.files:
            parts = t.show(fc.path).split("/")[:-1]
            key = "/".join(parts[:depth]) + "/" if parts else "./"
            g = groups.setdefault(key, [0, 0, 0])
            g[0] += 1
            g[1] += fc.added or 0
            g[2] += fc.deleted or 0
        lines = [f"{key}  {n} file{'s' if n != 1 else ''} +{a} -{d}" for key, (n, a, d) in sorted(groups.items())]
        if depth == 1 or budget.fits("\n".join(lines), tokens):
            break
    note = (
        f"[{len(cs.files)} files are too many to list within the output budget: grouped by folder. "
        "Ask again with path=<folder> (or scope=selected) to see its files, or artifacts=true for everything]"
    )
    return [totals_line(cs), *lines, note]


def _names(t: Target, files: Sequence[FileChange], limit: int = 10) -> str:
    shown = ", ".join(t.show(f.path) for f in files[:limit])
    return shown + (f" (+{len(files) - limit} more)" if len(files) > limit else "")


def render_changes(
    t: Target,
    cs: ChangeSet,
    detail: str,
    budget: Budget,
    header: Sequence[str],
    *,
    preloaded: bool = False,
) -> str:
    """``header`` lines, then the changes at ``detail`` (degraded to fit)."""
    head = list(header)
    if not cs.files:
        return "\n".join([*head, "no changes"])
    listing = _listing(t, cs)
    if not budget.fits("\n".join(head + listing)):
        return "\n".join(head + rollup(t, cs, budget, budget.tokens - budget.count("\n".join(head)) - 100))
    if detail == "summary":
        return "\n".join(head + listing)
    if detail == "files":
        return _render_files(t, cs, budget, head, listing)
    return _render_patches(t, cs, budget, head, listing, whole=detail == "full", preloaded=preloaded)


def _hunk_lines(fc: FileChange) -> list[str]:
    hunks = hunk_headers(fc.patch or "")
    lines = ["    " + h for h in hunks[:MAX_HUNKS_PER_FILE]]
    if len(hunks) > MAX_HUNKS_PER_FILE:
        lines.append(f"    … {len(hunks) - MAX_HUNKS_PER_FILE} more hunks")
    return lines


def _render_files(t: Target, cs: ChangeSet, budget: Budget, head: list[str], listing: list[str]) -> str:
    """Every file's line, plus its hunk headers while they fit the budget."""
    picked = candidates([f for f in cs.files if not f.untracked], budget.tokens)
    load_patches(t.repo, cs, picked, context=0)
    picked_ids = {id(f) for f in picked}
    room = budget.tokens - budget.count("\n".join(head + listing))
    per_file = {id(fc): _hunk_lines(fc) for fc in cs.files if id(fc) in picked_ids}
    # the usual case: every hunk list fits, one count for all of them instead of one per file
    all_fit = budget.fits("\n".join(h for lines in per_file.values() for h in lines), room)
    blocks = [listing[0]]
    left_out = 0
    for fc in cs.files:
        blocks.append(file_line(t, fc))
        lines = per_file.get(id(fc), [])
        if not lines:
            left_out += id(fc) not in picked_ids and not fc.untracked
            continue
        cost = 0 if all_fit else budget.count("\n".join(lines))
        if cost <= room:
            blocks += lines
            room -= cost
        else:
            left_out += 1
    blocks += listing[len(cs.files) + 1 :]  # the untracked-overflow note, if any
    if left_out:
        blocks.append(
            f"[hunk lists of {left_out} file(s) left out to fit the ~{budget.tokens}-token budget; "
            "ask again with path=<file>]"
        )
    return "\n".join(head + blocks)


def _fit(
    budget: Budget, files: Sequence[FileChange], picked: Sequence[FileChange], room: int
) -> tuple[list[str], list[FileChange]]:
    """Patches of ``picked`` that fit ``room`` tokens, in file order, and the
    files left out."""
    shown: list[str] = []
    omitted: list[FileChange] = []
    picked_ids = {id(f) for f in picked}
    ready = [fc.patch.rstrip("\n") for fc in files if id(fc) in picked_ids and fc.patch is not None]
    if ready and budget.fits("\n".join(ready), room):  # the usual case: one count, not one per file
        return ready, [fc for fc in files if id(fc) not in picked_ids or fc.patch is None]
    used = 0
    for fc in files:
        patch = fc.patch if id(fc) in picked_ids else None
        cost = budget.count(patch) if patch is not None else 0
        if patch is not None and used + cost <= room:
            shown.append(patch.rstrip("\n"))
            used += cost
        else:
            omitted.append(fc)
    return shown, omitted


def _render_patches(
    t: Target,
    cs: ChangeSet,
    budget: Budget,
    head: list[str],
    listing: list[str],
    *,
    whole: bool,
    preloaded: bool,
) -> str:
    notes: list[str] = []
    top = "\n".join(head + listing)
    room = budget.tokens - budget.count(top)
    if room <= 0:
        return top + (
            f"\n[patches left out: the file list alone fills the ~{budget.tokens}-token budget; "
            "narrow with path= or scope=selected, or use artifacts=true]"
        )
    files = list(cs.files)
    picked = files if preloaded else candidates(files, room)
    if not preloaded:
        load_patches(t.repo, cs, picked, context=None if whole else 3)
    ready = [fc.patch.rstrip("\n") for fc in picked if fc.patch is not None]
    if len(ready) == len(files):
        # the usual case, every patch at hand: the whole result counted once (the toolbox's own
        # count of it then finds that count: Runtime.count_tokens keeps the last few large ones)
        whole_text = "\n".join([top, "", *ready]).rstrip("\n")
        if budget.fits(whole_text):
            return whole_text
    shown, omitted = _fit(budget, files, picked, room)
    if whole and omitted:
        load_patches(t.repo, cs, picked, context=3)
        shown, omitted = _fit(budget, files, picked, room)
        notes.append("[detail=full (whole functions) did not fit the budget: showing patches with 3 lines of context]")
    if omitted:
        notes.append(
            f"[patches of {len(omitted)} of {len(files)} files left out to fit the ~{budget.tokens}-token budget: "
            f"{_names(t, omitted)}. Ask again with path=<file>, or artifacts=true to write every patch to disk]"
        )
    return "\n".join([top, "", *shown, *notes]).rstrip("\n")
