"""Long bracketed texts that repeat in one codemap, shown once.

Generated clients repeat their biggest annotations on every overload and
every sync/async twin: one ``Literal[...]`` of 130 model names appears eight
times in a file, and those copies were most of its codemap. Nothing of it is
dropped here: the first copy is labelled where it stands and every later copy
of the same text becomes a reference to that label::

    12⇥create(*,model:«1=Union[Literal["a","b",...],str]»,stream:bool=False)
    40⇥acreate(*,model:«1»,stream:bool=False)

A span is a bracketed group of at least
:data:`MIN_CHARS` characters, brackets inside string literals not counted; a
subscript with its dotted name (``Union[...]``, ``Callable[[...],...]``), a
parameter list without (the definition's name always stays on its line).
An outer span that repeats is referenced whole; the spans inside one that
does not are looked at in turn. Labels are numbered in the order the text
shows them, and a label is written only when a reference uses it.
:func:`expand` gives the rows back in full.
"""

from __future__ import annotations

import re

MIN_CHARS = 64  # shorter texts cost about what a reference does
_OPEN = {"[": "]", "(": ")", "{": "}"}
_NAME_BEFORE = re.compile(r"[A-Za-z_][\w.]*$")
_REF = re.compile(r"«(\d+)»")
_LABEL = re.compile(r"«(\d+)=")


def _spans(text: str) -> list[tuple[int, int]]:
    """The outermost bracketed spans of ``text`` (with the name before each),
    ``(start, end)``; string literals are skipped, unbalanced text ends the
    search."""
    out: list[tuple[int, int]] = []
    depth = 0
    opened = 0
    i = 0
    n = len(text)
    while i < n:
        c = text[i]
        if c in "\"'`":
            close = text.find(c, i + 1)
            while close > 0 and text[close - 1] == "\\" and c != "`":
                close = text.find(c, close + 1)
            if close < 0:
                return out
            i = close + 1
            continue
        if c in _OPEN:
            if depth == 0:
                opened = i
            depth += 1
        elif c in "])}":
            depth -= 1
            if depth < 0:
                return out
            if depth == 0:
                # a subscript keeps its name (`Union[...]`); a parameter list never takes the
                # definition's (`create(...)`: the name stays on its line)
                name = _NAME_BEFORE.search(text, 0, opened) if text[opened] == "[" else None
                out.append((name.start() if name else opened, i + 1))
        i += 1
    return out


class _Folder:
    """Walks the rows in order, replacing each repeat by a reference."""

    def __init__(self) -> None:
        self.first: dict[str, int] = {}  # span text -> tentative id
        self.used: set[int] = set()

    def fold(self, text: str) -> list[str | int]:
        """``text`` as pieces: strings, and for a span seen before, ``-id``
        (a reference); a first occurrence is ``id``, text pieces, ``0``."""
        out: list[str | int] = []
        pos = 0
        for start, end in _spans(text):
            if end - start < MIN_CHARS:
                continue
            out.append(text[pos:start])
            span = text[start:end]
            seen = self.first.get(span)
            if seen is not None:
                self.used.add(seen)
                out.append(-seen)
            else:
                ident = self.first[span] = len(self.first) + 1
                bracket = min(span.index(b) for b in _OPEN if b in span)
                out.extend([ident, span[: bracket + 1], *self.fold(span[bracket + 1 : -1]), span[-1], 0])
            pos = end
        out.append(text[pos:])
        return out


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
