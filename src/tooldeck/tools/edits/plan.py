"""Parsed patch + original file texts → the new content of every file. No I/O.

Operations run in patch order against a virtual tree, so a patch may touch one
file twice (add then update, update then move...) and still be computed in
full before anything is written. Within an Update, chunks are located with
the fuzz ladder of :mod:`locate`, each after the previous one; context lines
are copied from the file, never from the patch, so a fuzzily matched line
keeps its real spelling. A chunk whose context sits *before* the previous
chunk is still accepted when it does not overlap another chunk (models do
send chunks out of order).

Every failure is a ToolError that names the file, the chunk's line in the
patch, what was expected, the nearest lines the file actually has and the
fuzz levels tried.
"""

from __future__ import annotations

import itertools
from collections.abc import Mapping
from dataclasses import dataclass, field

from tooldeck.core.errors import ErrorCode, ToolError
from tooldeck.tools.edits.exact import Replacement, Spliced, apply_exact, apply_exact_bytes, apply_plain_bytes
from tooldeck.tools.edits.locate import (
    FUZZIEST,
    LEVELS,
    PATCH_LADDER,
    Found,
    LineIndex,
    close_lines,
    nearest,
    normalise,
)
from tooldeck.tools.edits.textfile import TextFile
from tooldeck.tools.edits.v4a_parser import AddFile, Chunk, DeleteFile, Patch, UpdateFile

TRIED = ", ".join(PATCH_LADDER)
SHOW_LINES = 12


Replaced = list[Replacement] | list[Spliced]  # the ladder's and the exact path's, or the bulk-parsed path's


@dataclass
class Event:
    """One line of the summary: ``A``/``M``/``D`` and the file, plus what to say about it."""

    kind: str
    key: str
    moved_from: str | None = None
    replaced: bool = False  # an Add over an existing file
    replacements: Replaced = field(default_factory=list)
    notes: list[str] = field(default_factory=list)


# A file's content while a patch is planned: the bytes read (valid UTF-8, as
# long as no operation has rewritten the file; the exact path patches them
# as they are), or text computed by an operation. None: the file is absent.
Content = str | bytes | None


@dataclass(frozen=True, slots=True)
class Change:
    """The final state of one file: ``after`` None means deleted."""

    key: str
    before: Content
    after: Content
    mode_from: str | None = None  # take the file mode from this key (a move's source)


@dataclass
class Plan:
    changes: list[Change]
    events: list[Event]


def plan_patch(
    patch: Patch,
    keys: Mapping[str, str],
    contents: Mapping[str, Content],
    shown: Mapping[str, str],
) -> Plan:
    """``keys`` maps each path written in the patch to a file key, ``contents``
    each key to its current content (text, or the UTF-8 bytes read; None =
    absent), ``shown`` each key to the name to use in messages."""
    state: dict[str, Content] = dict(contents)
    order: list[str] = []
    mode_from: dict[str, str] = {}
    events: list[Event] = []

    def touch(key: str) -> None:
        if key not in order:
            order.append(key)

    for op in patch.ops:
        key = keys[op.path]
        name = shown[key]
        if isinstance(op, AddFile):
            previous = state.get(key)
            eol = TextFile.parse(as_text(previous, replace=True)).eol if previous else "\n"
            state[key] = eol.join(op.lines) + eol if op.lines else ""
            touch(key)
            events.append(Event("A", key, replaced=previous is not None))
        elif isinstance(op, DeleteFile):
            if state.get(key) is None:
                raise ToolError(
                    ErrorCode.NOT_FOUND,
                    f"patch line {op.line}: cannot delete {name}: it does not exist. Nothing was changed.",
                    {"path": name, "line": op.line},
                )
            state[key] = None
            touch(key)
            events.append(Event("D", key))
        elif isinstance(op, UpdateFile):
            current = state.get(key)
            if current is None:
                raise ToolError(
                    ErrorCode.NOT_FOUND,
                    f"patch line {op.line}: cannot update {name}: it does not exist (use '*** Add File:' to "
                    "create it). Nothing was changed.",
                    {"path": name, "line": op.line},
                )
            event = Event("M", key)
            new_text: Content = current
            if op.plain is not None or op.chunks:  # (a bulk-parsed Update has chunks)
                new_text, event.replacements, event.notes = _update(current, op, name)
            touch(key)
            if op.move_to is not None:
                dest = keys[op.move_to]
                if dest != key:
                    state[key] = None
                    mode_from[dest] = mode_from.get(key, key)
                    event = Event("M", dest, moved_from=key, replacements=event.replacements, notes=event.notes)
                    key = dest
                    touch(key)
            state[key] = new_text
            events.append(event)

    changes = [
        Change(k, contents.get(k), state.get(k), mode_from.get(k))
        for k in order
        if not _same(contents.get(k), state.get(k)) or k in mode_from
    ]
    return Plan(changes, events)


def as_text(content: str | bytes, *, replace: bool = False) -> str:
    """Text of a content (bytes of an Update's file were checked to be UTF-8
    when read; ``replace`` for a file only an Add overwrites, maybe binary)."""
    if isinstance(content, bytes):
        return content.decode("utf-8", "replace" if replace else "strict")
    return content


def _same(a: Content, b: Content) -> bool:
    if isinstance(a, str) and isinstance(b, bytes):
        return a.encode("utf-8", "surrogatepass") == b
    if isinstance(a, bytes) and isinstance(b, str):
        return a == b.encode("utf-8", "surrogatepass")
    return a == b


def _update(current: str | bytes, op: UpdateFile, name: str) -> tuple[Content, Replaced, list[str]]:
    """An Update's chunks on the file's bytes by the exact path when it can
    (the bulk-parsed chunks when the parser made them), else on its text
    (exact, then the whole ladder)."""
    if isinstance(current, bytes):
        quick: tuple[bytes, Replaced] | None
        quick = apply_plain_bytes(current, op.plain) if op.plain is not None else apply_exact_bytes(current, op.chunks)
        if quick is not None:
            return quick[0], quick[1], []
        return apply_ladder(as_text(current), op.chunks, name)
    return apply_chunks(current, op.chunks, name)


# ---------------------------------------------------------------------------
# one file's chunks


def apply_chunks(text: str, chunks: tuple[Chunk, ...], name: str) -> tuple[str, list[Replacement], list[str]]:
    """The file's new text, the replacements made (for the diff) and notes on fuzzy matches.

    The usual patch (every chunk exact, in order) takes the text-level fast
    path of :mod:`exact`; anything else runs the whole ladder line by line."""
    quick = apply_exact(text, chunks)
    if quick is not None:
        return quick[0], quick[1], []
    return apply_ladder(text, chunks, name)


def apply_ladder(text: str, chunks: tuple[Chunk, ...], name: str) -> tuple[str, list[Replacement], list[str]]:
    """:func:`apply_chunks` line by line, with every level of the fuzz ladder."""
    tf = TextFile.parse(text)
    lines = tf.lines
    index = LineIndex(lines)
    cursor = 0
    reps: list[Replacement] = []
    notes: list[str] = []
    for number, chunk in enumerate(chunks, 1):
        cursor = _seek_anchors(index, chunk, cursor, name, number, notes)
        old = chunk.old_lines
        if not old:  # pure addition: after the anchor if there is one, else at the end
            at = len(lines) if chunk.end_of_file or not chunk.anchors else cursor
            reps.append(Replacement(at, (), chunk.new))
            cursor = at
            continue
        ops = chunk.ops
        found = index.seek(old, cursor, end_of_file=chunk.end_of_file)
        if found is None:
            trimmed = _without_trailing_blank_context(ops)
            if trimmed != ops and any(op != "+" for op, _ in trimmed):
                ops = trimmed
                old = [t for op, t in ops if op != "+"]
                found = index.seek(old, cursor, end_of_file=chunk.end_of_file)
        if found is None and cursor > 0 and not chunk.anchors:
            earlier = index.seek(old, 0, end_of_file=chunk.end_of_file)
            if earlier is not None and not _overlaps(earlier.start, len(old), reps):
                found = earlier
                notes.append(f"chunk {number} found before the previous chunk (line {earlier.start + 1})")
        if found is None:
            raise _mismatch(index, chunk, old, cursor, name, number)
        if found.level:
            notes.append(f"chunk {number} matched with {LEVELS[found.level]} (line {found.start + 1})")
        new: list[str] = []
        j = found.start
        for op, line in ops:
            if op == " ":
                new.append(lines[j])  # the file's spelling of a context line, never the patch's
                j += 1
            elif op == "-":
                j += 1
            else:
                new.append(line)
        reps.append(Replacement(found.start, tuple(lines[found.start : found.start + len(old)]), tuple(new)))
        cursor = found.start + len(old)
    reps.sort(key=lambda r: (r.start, len(r.old) > 0))
    for a, b in itertools.pairwise(reps):
        if a.start + len(a.old) > b.start:
            raise ToolError(
                ErrorCode.CONTEXT_MISMATCH,
                f"{name}: two chunks change the same lines (around line {b.start + 1}); merge them into one "
                "chunk. Nothing was changed.",
                {"path": name, "line": b.start + 1},
            )
    out: list[str] = []
    pos = 0
    for r in reps:
        out.extend(lines[pos : r.start])
        out.extend(r.new)
        pos = r.start + len(r.old)
    out.extend(lines[pos:])
    return tf.render(out), reps, notes


def _without_trailing_blank_context(ops: tuple[tuple[str, str], ...]) -> tuple[tuple[str, str], ...]:
    end = len(ops)
    while end and ops[end - 1][0] == " " and not ops[end - 1][1].strip():
        end -= 1
    return ops[:end]


def _overlaps(start: int, length: int, reps: list[Replacement]) -> bool:
    return any(start < r.start + len(r.old) and r.start < start + max(length, 1) for r in reps)


def _seek_anchors(index: LineIndex, chunk: Chunk, cursor: int, name: str, number: int, notes: list[str]) -> int:
    """Move the cursor past each ``@@`` anchor in turn (stacked anchors narrow)."""
    for anchor in chunk.anchors:
        found: Found | None = index.seek([anchor], cursor)
        if found is None and cursor > 0 and anchor is chunk.anchors[0]:
            found = index.seek([anchor], 0)
        if found is None:
            close = close_lines(index, anchor)
            hint = (
                "; lines most like it: " + "; ".join(f"{i + 1}: {index.lines[i].strip()[:80]!r}" for i in close)
                if close
                else ""
            )
            where = f" after line {cursor}" if cursor else ""
            raise ToolError(
                ErrorCode.CONTEXT_MISMATCH,
                f"{name}: chunk {number} (patch line {chunk.line}): the '@@ {anchor}' line was not found{where} "
                f"(tried {TRIED}){hint}. Nothing was changed. Read the file and copy the anchor line exactly, "
                "or drop the anchor.",
                {"path": name, "chunk": number, "patch_line": chunk.line, "anchor": anchor, "candidates": close},
            )
        if found.level:
            notes.append(f"chunk {number} anchor matched with {LEVELS[found.level]} (line {found.start + 1})")
        cursor = found.start + 1
    return cursor


def _mismatch(index: LineIndex, chunk: Chunk, old: list[str], cursor: int, name: str, number: int) -> ToolError:
    expected = "\n".join(f"    {'-' if op == '-' else ' '}{text}" for op, text in chunk.ops[:SHOW_LINES] if op != "+")
    if len([op for op, _ in chunk.ops if op != "+"]) > SHOW_LINES:
        expected += "\n    ..."
    cand = nearest(index, old, cursor)
    details: dict[str, object] = {"path": name, "chunk": number, "patch_line": chunk.line, "fuzz": list(PATCH_LADDER)}
    if cand is not None:
        shown_lines = index.lines[cand.start : cand.start + min(len(old), SHOW_LINES)]
        marks = []
        for j, line in enumerate(shown_lines):
            same = j < len(old) and _loose(line) == _loose(old[j])
            marks.append(f"  {' ' if same else '!'} {cand.start + j + 1:>5}| {line}")
        last = cand.start + len(shown_lines)
        near = (
            f"\nThe nearest lines in the file are {cand.start + 1}-{last} "
            f"({cand.equal} of {len(old)} lines equal; '!' marks lines that differ):\n" + "\n".join(marks)
        )
        details["candidates"] = [cand.start + 1]
    else:
        near = "\nNo line of the file resembles them."
    where = f" after line {cursor}" if cursor else ""
    return ToolError(
        ErrorCode.CONTEXT_MISMATCH,
        f"{name}: chunk {number} (patch line {chunk.line}): the lines to change were not found{where} "
        f"(tried {TRIED}). Expected:\n{expected}{near}\nNothing was changed. Read the file again and resend the "
        "patch with context and '-' lines copied exactly.",
        details,
    )


def _loose(line: str) -> str:
    return normalise(line, FUZZIEST)
