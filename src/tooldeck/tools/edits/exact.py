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


_replacement = tuple.__new__  # a Replacement without the Python-level __new__ of a named tuple


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
    # the file's lines, each with its break, after one line break: every line
    # start s then has body[s - 1] == "\n", so "lines at or after the cursor"
    # is one find of "\n" + lines + "\n" from the cursor - 1, with no case for
    # the first line
    body = "\n" + text if text.endswith("\n") else "\n" + text + "\n"
    find, count = body.find, body.count
    out: list[str] = []
    emit = out.append
    reps: list[Replacement] = []
    keep = reps.append
    pos = done = 1  # offset of the cursor's line; offset up to which ``body`` is copied to ``out``
    line = 0  # the cursor's line number (0-based)
    for anchors, _raw, end_of_file, _at, old, new in chunks:  # the hot loop of a big patch: calls kept few
        if end_of_file:
            return None
        for anchor in anchors:  # each anchor moves the cursor past its line
            at = find("\n" + anchor + "\n", pos - 1) + 1
            if not at:
                return None
            line += count("\n", pos, at) + 1
            pos = at + len(anchor) + 1
        if old:
            want = "\n".join(old)
            at = find("\n" + want + "\n", pos - 1) + 1
            if not at:
                return None
            at_line = line + count("\n", pos, at)
            size = len(want) + 1
        elif anchors:  # pure addition: after the anchor, else at the end of the file
            at, at_line, size = pos, line, 0
        else:
            at, at_line, size = len(body), line + count("\n", pos), 0
        keep(_replacement(Replacement, (at_line, old, new)))
        emit(body[done:at])
        if new:
            emit("\n".join(new) + "\n")
        done = pos = at + size
        line = at_line + len(old)
    emit(body[done:])
    result = "".join(out)
    if not result:
        return bom, reps
    return bom + (result.replace("\n", "\r\n") if crlf else result), reps
