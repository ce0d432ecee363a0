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

from tooldeck.tools.edits.engine import Outcome, Written
from tooldeck.tools.edits.plan import Replacement

MAX_DIFF_LINES_PER_FILE = 40
MAX_DIFF_LINES = 240
CONTEXT = 1


def _count_lines(text: str | None) -> int:
    if not text:
        return 0
    return text.count("\n") + (0 if text.endswith("\n") else 1)


def hunk_lines(reps: Sequence[Replacement]) -> tuple[list[str], int, int]:
    """Unified-diff style lines for ``reps`` plus (insertions, deletions)."""
    out: list[str] = []
    ins = dels = 0
    shift = 0  # new-file line offset caused by earlier replacements
    for r in reps:
        matcher = difflib.SequenceMatcher(None, r.old, r.new, autojunk=False)
        for group in matcher.get_grouped_opcodes(CONTEXT):
            if all(tag == "equal" for tag, *_ in group):
                continue
            i1, j1 = group[0][1], group[0][3]
            i2, j2 = group[-1][2], group[-1][4]
            out.append(f"@@ -{r.start + i1 + 1},{i2 - i1} +{r.start + shift + j1 + 1},{j2 - j1} @@")
            for tag, a1, a2, b1, b2 in group:
                if tag == "equal":
                    out.extend(" " + line for line in r.old[a1:a2])
                    continue
                out.extend("-" + line for line in r.old[a1:a2])
                out.extend("+" + line for line in r.new[b1:b2])
                dels += a2 - a1
                ins += b2 - b1
        shift += len(r.new) - len(r.old)
    return out, ins, dels


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
    diff, ins, dels = hunk_lines(ev.replacements)
    hunks = sum(1 for line in diff if line.startswith("@@ "))
    moved = f" (moved from {w.moved_from})" if w.moved_from else ""
    head = f"M {w.shown}{moved}: +{ins} -{dels} in {hunks} hunk{'s' if hunks != 1 else ''}{digest}"
    lines = [head]
    lines.extend(f"  note: {n}" for n in ev.notes)
    room = min(MAX_DIFF_LINES_PER_FILE, budget)
    if len(diff) > room:
        lines.extend(diff[:room])
        lines.append(f"... {len(diff) - room} more diff lines not shown (read the file to check them)")
        return lines, room
    lines.extend(diff)
    return lines, len(diff)


def render_outcome(outcome: Outcome) -> str:
    parts = ["Success. Updated the following files:", *outcome.summary(), ""]
    budget = MAX_DIFF_LINES
    for w in outcome.files:
        lines, used = describe(w, budget)
        budget = max(0, budget - used)
        parts.extend(lines)
    return "\n".join(parts).rstrip() + "\n"
