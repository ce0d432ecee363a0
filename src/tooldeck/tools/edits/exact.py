"""The exact fast path of an Update: every chunk found verbatim, in order. No I/O.

Most patches a model sends match the file exactly, chunk after chunk. For
those, splitting the file into lines, keying them and splicing a list of
20,000 strings is wasted work: the first level of the fuzz ladder ("the
lines, exactly, at or after the cursor") is one C-speed ``find`` of the
chunk's old lines (joined, preceded by a line break) from the cursor's
offset, and the new text is the old one with those spans replaced.

It works on the file's bytes as read, not on decoded text: UTF-8 keeps a
line break a line break and a match a match (the needle starts with a line
break, so it can only match on character boundaries), and the new file is
joined from views of the old bytes and the chunks' new lines — one
allocation, the bytes to write, where text would cost a decoded copy,
a slice per kept span, the joined text and its encoding (each a fresh
buffer of the file's size, page faults included).

The result is the same as :func:`plan.apply_chunks` computes line by line —
same positions, same replacements, same line ending and BOM on the way out —
because it *is* the ladder's first level, searched the same way. Whenever
anything needs more than that (an anchor or a chunk not found exactly after
the cursor, an ``*** End of File`` chunk, an empty file), it returns None
and the caller runs the full ladder from the start, so no leniency is lost.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import NamedTuple, TypeVar

from tooldeck.tools.common import BOM
from tooldeck.tools.edits.plain import PlainChunks
from tooldeck.tools.edits.v4a_parser import Chunk


class Replacement(NamedTuple):
    """One chunk's change, as the planner and the rendered diff see it (a
    tuple: cheap to make by the thousand)."""

    start: int  # 0-based line in the file before the update
    old: Sequence[str]  # the chunk's (a tuple) on the exact path and the ladder's
    new: Sequence[str]


class Spliced(NamedTuple):
    """A chunk's change as the bulk-parsed path keeps it: the old and new
    lines joined as bytes, split, and its line number counted, only for the
    few hunks a diff shows (counting the lines before every chunk is a pass
    over the whole file)."""

    at: int  # byte offset of the chunk's first line in ``text``
    old: bytes  # b"\na\nb\n" (the needle searched for), b"" when the chunk only adds
    new: bytes  # b"a\nc\n", b"" when the chunk only removes
    text: bytes  # the file before the update, with "\n" line breaks (shared by every chunk)


R = TypeVar("R", Replacement, Spliced)
_replacement = tuple.__new__  # a Replacement without the Python-level __new__ of a named tuple
_BOM = BOM.encode("utf-8")


def as_lines(r: Replacement | Spliced, start: int | None = None) -> Replacement:
    """A replacement with its old and new lines as sequences of text lines
    (``start``: a Spliced's line number when the caller counted it already)."""
    if isinstance(r, Replacement):
        return r
    old, new = spliced_lines(r)
    if start is None:
        start = r.text.count(b"\n", 0, r.at)
    return Replacement(start, tuple(x.decode("utf-8") for x in old), tuple(x.decode("utf-8") for x in new))


def spliced_lines(r: Spliced) -> tuple[Sequence[bytes], Sequence[bytes]]:
    """The old and new lines of a :class:`Spliced`, as bytes."""
    return (r.old[1:-1].split(b"\n") if r.old else ()), (r.new[:-1].split(b"\n") if r.new else ())


def apply_exact(text: str, chunks: tuple[Chunk, ...]) -> tuple[str, list[Replacement]] | None:
    """:func:`apply_exact_bytes` on text (for callers that hold text)."""
    try:
        data = text.encode("utf-8")
    except UnicodeEncodeError:
        return None
    quick = apply_exact_bytes(data, chunks)
    if quick is None:
        return None
    return quick[0].decode("utf-8"), quick[1]


def apply_exact_bytes(data: bytes, chunks: tuple[Chunk, ...]) -> tuple[bytes, list[Replacement]] | None:
    """The new content (UTF-8 ``data`` patched) and the replacements, or None
    when a chunk needs the ladder."""
    return _spelt(data, lambda body: _splice(body, chunks))


def apply_plain_bytes(data: bytes, chunks: PlainChunks) -> tuple[bytes, list[Spliced]] | None:
    """:func:`apply_exact_bytes` for the chunks of the bulk parse (:mod:`plain`)."""
    return _spelt(data, lambda body: _splice_plain(body, chunks))


def _spelt(data: bytes, splice: Callable[[bytes], tuple[bytes, list[R]] | None]) -> tuple[bytes, list[R]] | None:
    """``splice`` on the file's lines with ``\n`` breaks, each line ending
    with one; the result spelt as the file was (BOM, CRLF)."""
    bom = b""
    if data.startswith(_BOM):
        bom, data = _BOM, data[len(_BOM) :]
    crlf = b"\r" in data and data.count(b"\r\n") == data.count(b"\n") > 0  # the rule of TextFile.parse
    if crlf:
        data = data.replace(b"\r\n", b"\n")
    if not data:
        return None
    if not data.endswith(b"\n"):
        data += b"\n"  # the lines, each with its break (the result ends with one, as the ladder's)
    try:
        found = splice(data)
    except UnicodeEncodeError:  # a lone surrogate in the patch: the ladder says what is wrong with it
        return None
    if found is None:
        return None
    result, reps = found
    if not result:
        return bom, reps
    return bom + (result.replace(b"\n", b"\r\n") if crlf else result), reps


def _splice(body: bytes, chunks: tuple[Chunk, ...]) -> tuple[bytes, list[Replacement]] | None:
    """Find every chunk of ``body`` (whole lines, each ending with a break)
    in order and join the new content from views of ``body``."""
    count = body.count
    view = memoryview(body)
    out: list[bytes | memoryview] = []
    emit = out.append
    reps: list[Replacement] = []
    keep = reps.append
    pos = done = 0  # offset of the cursor's line; offset up to which ``body`` is copied to ``out``
    line = 0  # the line number (0-based) of offset ``done``
    for anchors, _raw, end_of_file, _at, old, new in chunks:  # the hot loop of a big patch: calls kept few
        if end_of_file:
            return None
        if anchors:
            pos = _past_anchors(body, anchors, pos)
            if pos < 0:
                return None
        if old:
            want = ("\n" + "\n".join(old) + "\n").encode("utf-8")
            at = _seek(body, want, pos)
            if at < 0:
                return None
            size = len(want) - 1
        else:  # pure addition: after the anchor, else at the end of the file
            at, size = (pos if anchors else len(body)), 0
        line += count(b"\n", done, at)  # the lines from the previous chunk's end (anchors included)
        keep(_replacement(Replacement, (line, old, new)))
        emit(view[done:at])
        if new:
            emit(("\n".join(new) + "\n").encode("utf-8"))
        done = pos = at + size
        line += len(old)
    emit(view[done:])
    return b"".join(out), reps


def _seek(body: bytes, want: bytes, pos: int) -> int:
    """The offset of the first line start at or after ``pos`` (itself a line
    start) where the lines ``want`` (a line break, the lines, a line break)
    occur in ``body``, or -1: the ladder's first level, one C-speed find."""
    if pos:  # body[pos - 1] is the line break before the cursor's line
        at = body.find(want, pos - 1)
    elif body.startswith(want[1:]):
        return 0  # the first line: no line break before it
    else:
        at = body.find(want)
    return at + 1 if at >= 0 else -1


def _past_anchors(body: bytes, anchors: Sequence[str], pos: int) -> int:
    """The cursor after each anchor's line, each found at or after the
    previous one (from ``pos``), or -1 when one is not there."""
    for anchor in anchors:
        want = ("\n" + anchor + "\n").encode("utf-8")
        at = _seek(body, want, pos)
        if at < 0:
            return -1
        pos = at + len(want) - 1
    return pos


def _splice_plain(body: bytes, chunks: PlainChunks) -> tuple[bytes, list[Spliced]] | None:
    """:func:`_splice` for bulk-parsed chunks: the needles and new lines come
    joined and encoded already, so a chunk costs its finds and two slices."""
    view = memoryview(body)
    out: list[bytes | memoryview] = []
    emit = out.append
    reps: list[Spliced] = []
    keep = reps.append
    pos = done = 0
    for anchor, want, new in zip(*chunks, strict=True):
        if anchor:
            pos = _past_anchors(body, anchor.split("\n") if "\n" in anchor else (anchor,), pos)
            if pos < 0:
                return None
        if want:
            at = _seek(body, want, pos)
            if at < 0:
                return None
            end = at + len(want) - 1
        else:  # pure addition: after the anchor, else at the end of the file
            at = end = pos if anchor else len(body)
        keep(_replacement(Spliced, (at, want, new, body)))
        emit(view[done:at])
        if new:
            emit(new)
        done = pos = end
    emit(view[done:])
    return b"".join(out), reps
