"""Function bodies hollowed out before the parse: a codemap never shows them.

Parsing is most of what a codemap costs, and most of a Python file's bytes
are function bodies, which a codemap never shows. So before the parse, each
body is overwritten with spaces (line breaks kept, so every byte offset and
line number stays what it was) except a ``0`` placeholder statement on its
first and last code line — the block then starts where the real one does and
the function still ends on its real last line — and the ``import``
statements at the body's first level, which the codemap lists. Parsing that
text builds the same outline in about half the time; every name, signature
and line is still read from the real bytes.

What counts as a body is Python's own rule, applied to the text with its
strings and comments blanked (:func:`lexer.code_only`): after a ``def``
header's closing ``:`` (at bracket depth 0, ending its line), every line
more indented than the ``def``, up to the first code line that is not. Where
that rule could err (a dedented line inside brackets) it cuts a body short,
and what is left then fails to parse: the caller checks the tree for errors
and parses the real text instead, so a hollowed parse is never trusted when
it is not clean. Files this does not handle at all (tabs or form feeds in
indentation, CR line breaks) are parsed whole.
"""

from __future__ import annotations

import functools
import re
from typing import Any

from tooldeck.codemap import lexer

# two or more lines of nothing but spaces; possessive (a line of code fails at once, nothing to back
# off to): 33 -> 23 us a hollowed file, the same matches
_BLANK_LINES = re.compile(rb"\n(?: *+\n){2,}+")
_COLON_AT_EOL = re.compile(rb":[ \t]*\n")
CODE_BYTE = re.compile(rb"[^ \t\n]")  # a byte that is no blank
_ODD_INDENT = re.compile(rb"\n *[\t\f]")  # a literal first byte: searched fast (the first line: _odd_indent)
_DEF = re.compile(rb"def[ \t]")  # a literal first: searched fast; what comes before it is checked after
MAX_INDENT = 64
_DEF_PREFIXES = (b"", b"async")  # what may stand before `def` on its line (spaces aside)


@functools.cache
def line_at_most(width: int, also_blank: bytes = b"") -> re.Pattern[bytes]:
    """A line break, then a line indented ``width`` blanks or less whose first
    byte is no blank (nor one of ``also_blank``): where a body ends (a literal
    first byte: the engine skips from line break to line break; possessive: a
    deeper line fails at once, without backtracking). Both hollowing modules
    use it."""
    return re.compile(rb"\n[ \t]{0,%d}+[^ \t\n%s]" % (width, re.escape(also_blank)))


@functools.cache
def _import_at(indent: int) -> re.Pattern[bytes]:
    """A line break, then an import statement exactly ``indent`` spaces in."""
    return re.compile(rb"\n {%d}(?:import|from)[ \t][^\n]*" % indent)


def python(src: bytes, cut: lexer.Pieces) -> bytes | None:
    """``src`` with its function bodies hollowed out (same length, same line
    breaks), or None when there is nothing to hollow or the file's shape is
    one this does not handle. ``cut``: ``src``'s :func:`lexer.pieces`."""
    if b"def" not in src or b"\r" in src or _odd_indent(src):
        return None
    code = lexer.code_only(cut)
    blank = src.translate(lexer.SPACES_KEEP_BREAKS)
    out: list[bytes] = []
    pos = copied = 0  # searched from; copied up to
    search = _DEF.search
    while (m := search(code, pos)) is not None:
        at = m.start()
        line = code.rfind(b"\n", 0, at) + 1
        prefix = code[line:at]
        indent = len(prefix) - len(prefix.lstrip(b" "))
        pos_next = m.end()
        if indent <= MAX_INDENT and prefix.strip() in _DEF_PREFIXES:
            start = _body_start(code, at + 3)
            if start is not None:
                end = _body_end(code, start, indent)
                body = _hollowed(src, code, blank, start, end) if _whole_body(src, start, end, indent) else None
                if body is not None:
                    out.append(src[copied:start])
                    out.extend(body)
                    copied = pos_next = end
        pos = pos_next
    if not out:
        return None
    out.append(src[copied:])
    return b"".join(out)


def ranges(text: bytes) -> list[Any]:
    """The parts of ``text`` (a hollowed file, any language) a parser must
    read: all but its runs of blank lines. Blank lines mean nothing to these
    grammars, yet the parser reads them byte by byte (a hollowed body is
    mostly those); skipped as ``included_ranges``, they cost nothing, and
    every node keeps its position in the real file."""
    from tree_sitter import Range

    out: list[Any] = []
    pos = row = 0  # where the next range starts (always a line start), and its row
    for m in _BLANK_LINES.finditer(text):
        skip_from, skip_to = m.start() + 1, m.end()
        end_row = row + text.count(b"\n", pos, skip_from)
        out.append(Range((row, 0), (end_row, 0), pos, skip_from))
        pos, row = skip_to, end_row + text.count(b"\n", skip_from, skip_to)
    if not out:
        return out
    last_row = row + text.count(b"\n", pos)
    out.append(Range((row, 0), (last_row, len(text) - (text.rfind(b"\n") + 1)), pos, len(text)))
    return out


def _odd_indent(src: bytes) -> bool:
    """Whether a line of ``src`` is indented with a tab or a form feed."""
    if b"\t" not in src and b"\f" not in src:
        return False
    return _ODD_INDENT.search(src) is not None or src.lstrip(b" ")[:1] in (b"\t", b"\f")


def _whole_body(src: bytes, start: int, end: int, indent: int) -> bool:
    """Whether the real text agrees that no line of the body comes back to
    the ``def``'s indentation: the rule ran on the text with strings
    blanked, and a string the lexer misread could hide where the body ends
    (and the functions after it). A real multi-line string with a line at
    that indentation just keeps its body whole."""
    return line_at_most(indent, b"#").search(src, start - 1, end) is None  # a comment line does not count


def _depth(text: bytes) -> int:
    """Brackets opened minus brackets closed in ``text`` (strings blanked)."""
    return len(text.translate(None, b")]}")) - len(text.translate(None, b"([{"))  # two C calls, not six


def _body_start(code: bytes, at: int) -> int | None:
    """Where the body of the ``def`` whose header goes on at ``at`` begins
    (the line after its closing ``:``), or None: a one-line body, or no
    header ending found before a line break outside brackets."""
    search = at
    while True:
        m = _COLON_AT_EOL.search(code, search)
        if m is None:
            return None
        header = code[at : m.start()]
        depth = _depth(header)
        if depth > 0:  # a `:` inside brackets (a lambda, a dict): look further
            search = m.start() + 1
            continue
        if depth < 0:
            return None
        if b"\n" in header:  # every line break before the colon must be inside brackets
            depth = 0
            for piece in header.split(b"\n")[:-1]:
                depth += _depth(piece)
                if depth <= 0 and not piece.endswith(b"\\"):
                    return None
        return m.end()


def _body_end(code: bytes, start: int, indent: int) -> int:
    """The offset of the first code line from ``start`` on indented ``indent``
    or less (one a backslash continues is not one), else the end of the text."""
    pattern = line_at_most(indent)
    search = start - 1  # the line break that ends the header
    while True:
        m = pattern.search(code, search)
        if m is None:
            return len(code)
        if code[m.start() - 1] != 92:  # no backslash before the break: a line of its own
            return m.start() + 1
        search = m.start() + 1


def _hollowed(src: bytes, code: bytes, blank: bytes, start: int, end: int) -> list[bytes] | None:
    """The pieces that replace ``src[start:end]`` (a body). Comments and blank
    lines before its first statement and after its last stay as written
    (whether a trailing comment belongs to the block is the parser's call, as
    before); from the first statement's line to the last one's, spaces and
    line breaks, a ``0`` on each of those two lines at the block's
    indentation, and the first-level imports as written. None when a
    placeholder does not fit on its line."""
    first = _first_statement(src, start, end)
    last_line = _last_statement_line(src, start, end)
    if first is None or last_line is None:
        return None
    first_line = src.rfind(b"\n", 0, first) + 1
    block = first - first_line
    stop = src.find(b"\n", last_line, end)
    stop = end if stop < 0 else stop  # the end of the last statement's line
    if code.find(b"import", first_line, stop) < 0:  # the usual body: two placeholders, nothing kept
        return _placeholders_only(src, blank, start, first_line, last_line, block, stop, end)
    edits: list[tuple[int, int, bytes]] = []  # (from, to, bytes), in order
    for m in _import_at(block).finditer(code, first_line - 1, stop):
        a, b = m.start() + 1, _statement_end(code, m.end(), stop)
        edits.append((a, b, src[a:b]))
    for line in (first_line, last_line) if last_line != first_line else (first_line,):
        if any(a <= line < b for a, b, _ in edits):
            continue  # a kept import is a statement already
        nl = src.find(b"\n", line, stop)
        if (nl if nl >= 0 else stop) - line <= block:
            return None
        edits.append((line + block, line + block + 1, b"0"))
    edits.sort()
    out = [src[start:first_line]]
    pos = first_line
    for a, b, text in edits:
        out.append(blank[pos:a])
        out.append(text)
        pos = b
    out.append(blank[pos:stop])
    out.append(src[stop:end])
    return out


def _placeholders_only(
    src: bytes, blank: bytes, start: int, first_line: int, last_line: int, block: int, stop: int, end: int
) -> list[bytes] | None:
    """:func:`_hollowed` for a body with no import to keep: blanks, and a
    ``0`` on the first and last statement lines (one when they are one)."""
    at = first_line + block
    nl = src.find(b"\n", first_line, stop)
    if (nl if nl >= 0 else stop) - first_line <= block:
        return None
    if last_line == first_line:
        return [src[start:first_line], blank[first_line:at], b"0", blank[at + 1 : stop], src[stop:end]]
    nl = src.find(b"\n", last_line, stop)
    if (nl if nl >= 0 else stop) - last_line <= block:
        return None
    last = last_line + block
    return [
        src[start:first_line],
        blank[first_line:at],
        b"0",
        blank[at + 1 : last],
        b"0",
        blank[last + 1 : stop],
        src[stop:end],
    ]


def _first_statement(src: bytes, start: int, end: int) -> int | None:
    """The offset of the body's first statement: its first byte that is not
    a space, a line break or in a comment line."""
    pos = start
    while True:
        m = CODE_BYTE.search(src, pos, end)
        if m is None:
            return None
        if src[m.start()] != 35:  # "#": a comment line
            return m.start()
        pos = src.find(b"\n", m.start(), end)
        if pos < 0:
            return None


def _last_statement_line(src: bytes, start: int, end: int) -> int | None:
    """The start of the line the body's last statement ends on: the last line
    that is neither blank nor a comment (in a string, a line is code)."""
    pos = end
    while pos > start:
        pos = start + len(src[start:pos].rstrip())  # past the last byte that is no blank (one C call)
        if pos == start:
            return None
        nl = src.rfind(b"\n", start, pos)
        line = start if nl < 0 else nl + 1
        if src[line:pos].lstrip()[:1] != b"#":
            return line
        pos = line
    return None


def _statement_end(code: bytes, end: int, limit: int) -> int:
    """The end of the import statement whose first line ends at ``end``: on
    past a parenthesised list or backslash-continued lines."""
    line = code[code.rfind(b"\n", 0, end) + 1 : end]
    if b"(" in line and b")" not in line:
        close = code.find(b")", end, limit)
        if close < 0:
            return end
        nl = code.find(b"\n", close, limit)
        return nl if nl >= 0 else limit
    while line.endswith(b"\\"):
        nl = code.find(b"\n", end + 1, limit)
        if nl < 0:
            return limit
        line, end = code[end + 1 : nl], nl
    return end
