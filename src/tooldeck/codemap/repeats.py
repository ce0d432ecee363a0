"""Long bracketed texts that repeat in one codemap, shown once.

Generated clients repeat their biggest annotations on every overload and
every sync/async twin: one ``Literal[...]`` of 130 model names appears eight
times in a file, and those copies were most of its codemap. Nothing of it is
dropped here: the first copy is labelled where it stands and every later copy
of the same text becomes a reference to that label::

    12⇥create(*,model:«1=Union[Literal["a","b",...],str]»,stream:bool=False)
    40⇥acreate(*,model:«1»,stream:bool=True)

A span is a bracketed group of at least :data:`MIN_CHARS` characters
(brackets inside string literals not counted): a subscript with its dotted
name (``Union[...]``, ``Callable[[...],...]``), a parameter list without
(the definition's name always stays on its line).
An outer span that repeats is referenced whole; the spans inside one that
does not are looked at in turn. Labels are numbered in the order the text
shows them, and a label is written only when a reference uses it.
:func:`expand` gives the rows back in full.
"""

from __future__ import annotations

import re

MIN_CHARS = 64  # shorter texts cost about what a reference does
_OPEN = "([{"
_SPECIAL = re.compile(r"[\"'`\[\](){}]")  # what _spans looks at
_REF = re.compile(r"«(\d+)»")
_LABEL = re.compile(r"«(\d+)=")


def _spans(text: str) -> list[tuple[int, int]]:
    """Every bracketed span of ``text`` of at least :data:`MIN_CHARS`
    characters, at any depth, ``(start, end)``, outer ones before the spans
    they hold; string literals are skipped, unbalanced text ends the search.
    One pass: between brackets and quotes the search runs at C speed."""
    out: list[tuple[int, int]] = []
    opened: list[int] = []
    i = 0
    search = _SPECIAL.search
    while (m := search(text, i)) is not None:
        i = m.start()
        c = text[i]
        if c in "\"'`":
            close = text.find(c, i + 1)
            while close > 0 and text[close - 1] == "\\" and c != "`":
                close = text.find(c, close + 1)
            if close < 0:
                break
            i = close + 1
            continue
        if c in _OPEN:
            opened.append(i)
        else:
            if not opened:
                break
            at = opened.pop()
            if i + 1 - at >= MIN_CHARS:
                # a subscript keeps its name (`Union[...]`); a parameter list never takes the
                # definition's (`create(...)`: the name stays on its line)
                out.append((_name_start(text, at) if c == "]" else at, i + 1))
        i += 1
    out.sort(key=lambda span: (span[0], -span[1]))
    return out


def _name_start(text: str, at: int) -> int:
    """Where the dotted name right before ``at`` starts (``at`` if none)."""
    j = at
    while j > 0 and (text[j - 1].isalnum() or text[j - 1] in "_."):
        j -= 1
    while j < at and not (text[j].isalpha() or text[j] == "_"):  # a name starts with a letter
        j += 1
    return j


class _Folder:
    """Walks the rows in order, replacing each repeat by a reference."""

    def __init__(self) -> None:
        self.first: dict[str, int] = {}  # span text -> tentative id
        self.used: set[int] = set()

    def fold(self, text: str) -> list[str | int]:
        """``text`` as pieces: strings; for a span seen before, ``-id`` (a
        reference) in its place; around a first occurrence, ``id`` before it
        and ``0`` after it."""
        if len(text) < MIN_CHARS:  # no span long enough to count
            return [text]
        out: list[str | int] = []
        pos = 0
        open_ends: list[int] = []  # ends of the first occurrences around the cursor
        skip_to = -1  # the end of the last span referenced: what lies inside is gone
        for start, end in _spans(text):
            if start < skip_to:
                continue
            while open_ends and open_ends[-1] <= start:
                pos = self._close(text, pos, open_ends.pop(), out)
            out.append(text[pos:start])
            span = text[start:end]
            seen = self.first.get(span)
            if seen is not None:
                self.used.add(seen)
                out.append(-seen)
                pos = skip_to = end
            else:
                self.first[span] = len(self.first) + 1
                out.append(self.first[span])
                pos = start
                open_ends.append(end)
        while open_ends:
            pos = self._close(text, pos, open_ends.pop(), out)
        out.append(text[pos:])
        return out

    @staticmethod
    def _close(text: str, pos: int, end: int, out: list[str | int]) -> int:
        out.append(text[pos:end])
        out.append(0)
        return end


def fold(rows: list[str]) -> list[str]:
    """``rows`` with every long bracketed text that an earlier row (or an
    earlier place in its own row) already showed replaced by ``«n»``, its
    first showing labelled ``«n=...»``."""
    folder = _Folder()
    pieces = [folder.fold(row) for row in rows]
    if not folder.used:
        return rows
    numbers: dict[int, int] = {}

    def shown(ident: int) -> int:
        return numbers.setdefault(ident, len(numbers) + 1)

    out: list[str] = []
    for row in pieces:
        parts: list[str] = []
        labels: list[bool] = []  # per open first occurrence: whether it was labelled
        for piece in row:
            if isinstance(piece, str):
                parts.append(piece)
            elif piece > 0:
                labelled = piece in folder.used
                labels.append(labelled)
                if labelled:
                    parts.append(f"«{shown(piece)}=")
            elif piece < 0:
                parts.append(f"«{shown(-piece)}»")
            elif labels.pop():
                parts.append("»")
        out.append("".join(parts))
    return out


def expand(rows: list[str]) -> list[str]:
    """The rows of a folded codemap in full: each ``«n»`` replaced by the
    text labelled ``«n=...»``, the labels removed."""
    texts: dict[str, str] = {}  # label -> its text, filled as the rows are read in order
    return [_expand_row(row, texts) for row in rows]


def _expand_row(row: str, texts: dict[str, str]) -> str:
    parts: list[str] = []
    stack: list[tuple[str, int]] = []  # (label, index in parts where its text starts)
    pos = 0
    while pos < len(row):
        ref = _REF.match(row, pos)
        label = _LABEL.match(row, pos)
        if ref is not None:
            parts.append(texts.get(ref.group(1), ref.group(0)))
            pos = ref.end()
        elif label is not None:
            stack.append((label.group(1), len(parts)))
            pos = label.end()
        elif row[pos] == "»" and stack:
            name, at = stack.pop()
            texts[name] = "".join(parts[at:])
            pos += 1
        else:
            parts.append(row[pos])
            pos += 1
    return "".join(parts)
