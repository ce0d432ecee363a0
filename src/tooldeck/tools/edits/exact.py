"""The exact fast path of an Update: every chunk found verbatim, in order. No I/O.

Most patches a model sends match the file exactly, chunk after chunk. For
those, splitting the file into lines, keying them and splicing a list of
20,000 strings is wasted work: the first level of the fuzz ladder ("the
lines, exactly, at or after the cursor") is one C-speed ``str.find`` of the
chunk's old lines (joined, preceded by a line break) from the cursor's
offset, and the new text is the old one with those spans replaced.

The result is the same as :func:`plan.apply_chunks` computes line by line —
same positions, same replacements, same line ending and BOM on the way out —
because it *is* the ladder's first level, searched the same way. Whenever
anything needs more than that (an anchor or a chunk not found exactly after
the cursor, an ``*** End of File`` chunk, an empty file), :func:`apply_exact`
returns None and the caller runs the full ladder from the start, so no
leniency is lost.
"""

from __future__ import annotations

from typing import NamedTuple

from tooldeck.tools.common import BOM
from tooldeck.tools.edits.v4a_parser import Chunk


class Replacement(NamedTuple):
    """One chunk's change, as the planner and the rendered diff see it (a
    tuple: cheap to make by the thousand)."""

    start: int  # 0-based line in the file before the update
    old: list[str]
    new: list[str]


def _find_line(body: str, want: str, pos: int) -> int:
    """Offset of the first line start >= ``pos`` (itself a line start) where
    the lines ``want`` (a line break, then whole lines each ending with one)
    occur, or -1."""
    if pos:  # body[pos - 1] is the line break before the cursor's line
        at = body.find(want, pos - 1)
    elif body.startswith(want[1:]):
        return 0
    else:
        at = body.find(want)
    return at + 1 if at >= 0 else -1


def apply_exact(text: str, chunks: tuple[Chunk, ...]) -> tuple[str, list[Replacement]] | None:
    """The new text and the replacements, or None when a chunk needs the ladder."""
    bom = ""
    if text.startswith(BOM):
        bom, text = BOM, text[1:]
    crlf = "\r" in text and text.count("\r\n") == text.count("\n") > 0  # the rule of TextFile.parse
    if crlf:
        text = text.replace("\r\n", "\n")
    if not text:
        return None
    body = text if text.endswith("\n") else text + "\n"  # the file's lines, each with its break
    out: list[str] = []
    reps: list[Replacement] = []
    pos = 0  # offset of the cursor's line
    line = 0  # the cursor's line number (0-based)
    done = 0  # offset up to which ``body`` is copied to ``out``
    for chunk in chunks:  # the hot loop of a big patch: calls and copies kept few
        if chunk.end_of_file:
            return None
        for anchor in chunk.anchors:  # each anchor moves the cursor past its line
            at = _find_line(body, f"\n{anchor}\n", pos)
            if at < 0:
                return None
            line += body.count("\n", pos, at) + 1
            pos = at + len(anchor) + 1
        raw = chunk.lines
        old = [x[1:] for x in raw if x[0] != "+"]
        new = [x[1:] for x in raw if x[0] != "-"]
        if not old:  # pure addition: after the anchor, else at the end of the file
            at, at_line = (pos, line) if chunk.anchors else (len(body), line + body.count("\n", pos))
            size = 0
        else:
            want = "\n".join(old)
            at = _find_line(body, f"\n{want}\n", pos)
            if at < 0:
                return None
            at_line = line + body.count("\n", pos, at)
            size = len(want) + 1
        reps.append(Replacement(at_line, old, new))
        out.append(body[done:at])
        if new:
            out.append("\n".join(new) + "\n")
        done = pos = at + size
        line = at_line + len(old)
    out.append(body[done:])
    result = "".join(out)
    if not result:
        return bom, reps
    return bom + (result.replace("\n", "\r\n") if crlf else result), reps
