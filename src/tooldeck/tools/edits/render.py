"""What a successful edit says back: short, annotated diffs.

A model that just edited files needs to see that the edit landed where it
meant, not the whole file again. Diffs are built from the replacements the
planner made (each chunk's old and new lines), so their cost follows the size
of the change, not of the file; runs of unchanged lines collapse to one line
of context. The new content hash of each file is printed so the next edit can
pass it back.
"""

from __future__ import annotations

import difflib
from collections.abc import Sequence
from dataclasses import dataclass, field

from tooldeck.tools.edits.engine import Outcome, Written
from tooldeck.tools.edits.exact import Replacement, Spliced, as_lines

MAX_DIFF_LINES_PER_FILE = 40
MAX_DIFF_LINES = 240
MAX_DETAILED_FILES = 100
CONTEXT = 1


def _count_lines(text: str | bytes | None) -> int:
    if not text:
        return 0
    if isinstance(text, bytes):
        return text.count(b"\n") + (0 if text.endswith(b"\n") else 1)
    return text.count("\n") + (0 if text.endswith("\n") else 1)


def _common_ends(old: Sequence[str], new: Sequence[str]) -> tuple[int, int]:
    """Lengths of the common prefix and (non-overlapping) common suffix."""
    limit = min(len(old), len(new))
    p = 0
    while p < limit and old[p] == new[p]:
        p += 1
    q = 0
    while q < limit - p and old[-1 - q] == new[-1 - q]:
        q += 1
    return p, q


def _one_hunk(r: Replacement, shift: int) -> tuple[list[str], int, int] | None:
    """The usual chunk, one changed run between unchanged ends, without difflib."""
    p, q = _common_ends(r.old, r.new)
    old_mid, new_mid = r.old[p : len(r.old) - q], r.new[p : len(r.new) - q]
    if not old_mid and not new_mid:
        return [], 0, 0
    if set(old_mid) & set(new_mid):
        return None  # several changed runs: let difflib split them
    before = r.old[max(0, p - CONTEXT) : p]
    after = r.old[len(r.old) - q : len(r.old) - q + CONTEXT]
    i1 = p - len(before)
    old_len = len(before) + len(old_mid) + len(after)
    new_len = len(before) + len(new_mid) + len(after)
    out = [f"@@ -{r.start + i1 + 1},{old_len} +{r.start + shift + i1 + 1},{new_len} @@"]
    out.extend(" " + x for x in before)
    out.extend("-" + x for x in old_mid)
    out.extend("+" + x for x in new_mid)
    out.extend(" " + x for x in after)
    return out, len(new_mid), len(old_mid)


@dataclass
class Diff:
    lines: list[str] = field(default_factory=list)  # shown, at most the limit
    hunks: int = 0
    ins: int = 0
    dels: int = 0
    hidden: int = 0  # hunks counted but not shown

    def add(self, hunk: list[str], ins: int, dels: int, limit: int | None) -> None:
        if not hunk:
            return
        self.hunks += 1
        self.ins, self.dels = self.ins + ins, self.dels + dels
        if limit is None or len(self.lines) + len(hunk) <= limit:
            self.lines.extend(hunk)
        else:
            self.hidden += 1


def _count_rest(diff: Diff, reps: Sequence[Replacement | Spliced]) -> None:
    """Count hunks that will not be shown: the changed run between the common
    ends of each chunk, without copying it unless it may hold equal lines.
    One loop over every remaining chunk (a big patch has thousands), its
    body inlined: a call per chunk was a fifth of it."""
    hunks = ins = dels = 0
    for r in reps:
        if type(r) is Spliced:  # its lines as bytes (spliced_lines, inlined)
            o, n = r.old, r.new
            if not o or not n:  # only adds or only removes: no common end
                if o or n:
                    hunks += 1
                    ins += n.count(b"\n")
                    dels += o.count(b"\n") - 1 if o else 0
                continue
            old: Sequence[str | bytes] = o[1:-1].split(b"\n")
            new: Sequence[str | bytes] = n[:-1].split(b"\n")
        else:
            old, new = r.old, r.new
        lo, ln = len(old), len(new)
        limit = lo if lo < ln else ln
        p = 0
        while p < limit and old[p] == new[p]:
            p += 1
        q = 0
        while q < limit - p and old[lo - 1 - q] == new[ln - 1 - q]:
            q += 1
        d, i = lo - p - q, ln - p - q
        if not d and not i:
            continue
        # one line each (the usual chunk) cannot share a line: the ends took the equal ones
        if (d > 1 or i > 1) and set(old[p : lo - q]) & set(new[p : ln - q]):
            # several runs: difflib decides what is unchanged, on the whole chunk as a shown hunk is
            matcher = difflib.SequenceMatcher(None, old, new, autojunk=False)
            same = sum(size for _, _, size in matcher.get_matching_blocks())
            d, i = lo - same, ln - same
        hunks += 1
        ins += i
        dels += d
    diff.hunks += hunks
    diff.hidden += hunks
    diff.ins += ins
    diff.dels += dels


def diff_of(reps: Sequence[Replacement | Spliced], limit: int | None = None) -> Diff:
    """Unified-diff hunks for ``reps`` (each chunk's old vs new lines) and
    their counts; hunks past ``limit`` lines are counted, not kept."""
    diff = Diff()
    shift = 0  # new-file line offset caused by earlier replacements
    mark = line = 0  # a byte offset in a Spliced's file and its line: shown hunks' lines counted forward once
    for k, item in enumerate(reps):
        if limit is not None and len(diff.lines) >= limit:
            _count_rest(diff, reps[k:])  # nothing more will be shown: skip building lines
            break
        if type(item) is Spliced:
            if item.at < mark:  # (the exact path's chunks come in file order: never, but stay exact)
                mark = line = 0
            line += item.text.count(b"\n", mark, item.at)
            mark = item.at
            r = as_lines(item, line)
        else:
            r = item
        quick = _one_hunk(r, shift)
        if quick is not None:
            diff.add(*quick, limit)
            shift += len(r.new) - len(r.old)
            continue
        matcher = difflib.SequenceMatcher(None, r.old, r.new, autojunk=False)
        for group in matcher.get_grouped_opcodes(CONTEXT):
            if all(tag == "equal" for tag, *_ in group):
                continue
            i1, j1 = group[0][1], group[0][3]
            i2, j2 = group[-1][2], group[-1][4]
            hunk = [f"@@ -{r.start + i1 + 1},{i2 - i1} +{r.start + shift + j1 + 1},{j2 - j1} @@"]
            ins = dels = 0
            for tag, a1, a2, b1, b2 in group:
                if tag == "equal":
                    hunk.extend(" " + line for line in r.old[a1:a2])
                    continue
                hunk.extend("-" + line for line in r.old[a1:a2])
                hunk.extend("+" + line for line in r.new[b1:b2])
                dels += a2 - a1
                ins += b2 - b1
            diff.add(hunk, ins, dels, limit)
        shift += len(r.new) - len(r.old)
    return diff


def _lines(n: int) -> str:
    return f"{n} line{'s' if n != 1 else ''}"


def describe(w: Written, budget: int) -> tuple[list[str], int]:
    """Lines describing one file and how many diff lines they used."""
    ev = w.event
    digest = f" [hash={w.digest}]" if w.digest else ""
    if ev.kind == "D":
        return [f"D {w.shown}: deleted ({_lines(_count_lines(w.before))})"], 0
    if ev.kind == "A":
        how = "replaced an existing file" if ev.replaced else "new file"
        return [f"A {w.shown}: {how}, {_lines(_count_lines(w.after))}{digest}"], 0
    room = min(MAX_DIFF_LINES_PER_FILE, budget)
    diff = diff_of(ev.replacements, room)
    moved = f" (moved from {w.moved_from})" if w.moved_from else ""
    plural = "s" if diff.hunks != 1 else ""
    lines = [f"M {w.shown}{moved}: +{diff.ins} -{diff.dels} in {diff.hunks} hunk{plural}{digest}"]
    lines.extend(f"  note: {n}" for n in ev.notes[:20])
    if len(ev.notes) > 20:
        lines.append(f"  note: ... {len(ev.notes) - 20} more")
    lines.extend(diff.lines)
    if diff.hidden and diff.lines:
        more = f"{diff.hidden} more hunk{'s' if diff.hidden != 1 else ''}"
        lines.append(f"... {more} not shown (read the file to check them)")
    return lines, len(diff.lines)


def render_outcome(outcome: Outcome) -> str:
    """Summary lines, then per-file details: diffs until the diff budget is
    spent, then header lines only, and past MAX_DETAILED_FILES files a count
    (the structured result still carries every file's hash)."""
    parts = ["Success. Updated the following files:", *outcome.summary(), ""]
    budget = MAX_DIFF_LINES
    undiffed = 0
    for n, w in enumerate(outcome.files):
        if n == MAX_DETAILED_FILES:
            parts.append(f"... details of {len(outcome.files) - n} more files not shown")
            break
        lines, used = describe(w, budget)
        if w.event.kind == "M" and budget == 0:
            undiffed += 1
        budget = max(0, budget - used)
        parts.extend(lines)
    if undiffed:
        parts.append(f"(diffs of {undiffed} files not shown to keep this short; read them to check)")
    return "\n".join(parts).rstrip() + "\n"
