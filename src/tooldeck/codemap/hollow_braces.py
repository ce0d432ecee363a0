"""Function bodies hollowed out before the parse, for languages of braces.

The idea of :mod:`tooldeck.codemap.hollow`, for Go, Rust, Java, JavaScript
and TypeScript: a function's body between its ``{`` and ``}`` becomes spaces
(line breaks kept), an empty block the grammar accepts, so the parser skips
what a codemap never shows while every offset and line stays where it was.

Which ``{`` opens a function body is guessed from its line (it ends the line,
after a closing parenthesis or an arrow, and the line is not a control
statement); the matching ``}`` is the first line that starts with ``}`` at
the same indentation (what every formatter writes), and the text between
must balance its brackets once strings and comments are blanked. A guess is
never trusted: after the parse, every hollowed ``{`` must open the body of a
function node (:func:`confirmed`), else the caller parses the real text.
The guess only decides how often that second parse is needed.
"""

from __future__ import annotations

import functools
import re
from itertools import accumulate
from typing import Any

from tooldeck.codemap import lexer
from tooldeck.codemap.hollow import CODE_BYTE, line_at_most

# the node a function body's block hangs from, per language
FUNCTIONS: dict[str, frozenset[str]] = {
    "go": frozenset({"function_declaration", "method_declaration"}),
    "rust": frozenset({"function_item"}),
    "java": frozenset({"method_declaration", "constructor_declaration", "lambda_expression"}),
    "javascript": frozenset(
        {
            "function_declaration",
            "generator_function_declaration",
            "method_definition",
            "function_expression",
            "arrow_function",
        }
    ),
}
FUNCTIONS["typescript"] = FUNCTIONS["tsx"] = FUNCTIONS["javascript"]

# A line that may open a function body, matched after its indentation: Go's `func` (at column 0),
# Rust's `fn`, elsewhere a line with a parameter list (or an arrow) that is no control statement
# and declares no class. Its `{` ends the line, after a name, a closing bracket or a type.
_CONTROL = rb"(?!\}|(?:if|for|while|switch|catch|else|do|try|with|synchronized|return)\b)"
_HEADS: dict[str, re.Pattern[bytes]] = {
    "go": re.compile(rb"func[ (]"),
    "rust": re.compile(rb"(?:[\w()]+ +)*fn "),
    "java": re.compile(_CONTROL + rb"(?!.*\b(?:class|interface|enum|record|new)\b).*\)"),
    "javascript": re.compile(_CONTROL + rb"(?!.*\b(?:class|interface|enum|namespace|module)\b).*(?:\)|=>)"),
}
_HEADS["typescript"] = _HEADS["tsx"] = _HEADS["javascript"]
_BRACE_AT_EOL = re.compile(rb"\{[ \t]*\n")  # a literal first byte: searched fast
_BEFORE_BRACE = frozenset(b"_)]>?0123456789abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ")
# a block whose inside is not code of the file's own (a Rust macro's): never emptied, nor searched
_OPAQUE: dict[str, re.Pattern[bytes]] = {"rust": re.compile(rb"(?:#\[.*\] *)?[\w:]+!")}
# statements a body keeps, at its first level: the codemap lists them (Rust's `use` inside a function)
_KEPT: dict[str, bytes] = {"rust": rb"(?:pub(?:\([^)\n]*\))? +)?(?:use |extern crate )"}


def hollow(language: str, src: bytes, cut: lexer.Pieces) -> tuple[bytes, list[int]] | None:
    """``src`` with the bodies it takes for functions emptied, and the offset
    of each emptied body's ``{`` (for :func:`confirmed`); None when it finds
    none, or the file has CR line breaks. ``cut``: ``src``'s :func:`lexer.pieces`."""
    head = _HEADS.get(language)
    if head is None or b"\r" in src or b"{" not in src:
        return None
    opaque = _OPAQUE.get(language)
    code = lexer.code_only(cut)
    out: list[bytes] = []
    openings: list[int] = []
    pos = searched = 0  # copied up to; searched up to (a body is never searched)
    while (m := _BRACE_AT_EOL.search(code, searched)) is not None:
        brace = m.start()
        searched = m.end() - 1  # the next line, unless a block is skipped
        line = code.rfind(b"\n", 0, brace) + 1
        text = code[line:brace].rstrip()
        stripped = text.lstrip()
        if not stripped or stripped[-1] not in _BEFORE_BRACE:
            continue
        indent = text[: len(text) - len(stripped)]
        skip = opaque is not None and opaque.match(stripped) is not None
        if not skip and (head.match(stripped) is None or (language == "go" and indent)):
            continue
        end = _closing(src, code, brace, searched, indent)
        if end is None:
            continue
        searched = end
        if skip:
            continue
        out.append(src[pos : brace + 1])
        out.extend(_emptied(language, src, code, brace + 1, end))
        openings.append(brace)
        pos = end
    if not openings:
        return None
    out.append(src[pos:])
    return b"".join(out), openings


def _emptied(language: str, src: bytes, code: bytes, start: int, end: int) -> list[bytes]:
    """The pieces that replace ``src[start:end]`` (a body between its braces):
    spaces and line breaks, but the statements of :data:`_KEPT` at its first
    level, as written."""
    kept = _KEPT.get(language)
    first = CODE_BYTE.search(code, start, end)
    if kept is None or first is None or code.find(b";", start, end) < 0:
        return [src[start:end].translate(lexer.SPACES_KEEP_BREAKS)]
    line = code.rfind(b"\n", 0, first.start()) + 1
    pieces: list[bytes] = []
    pos = start
    for m in _kept_at(code[line : first.start()], kept).finditer(code, line - 1, end):
        stop = code.find(b";", m.end(), end)
        if stop < 0:
            break
        pieces.append(src[pos : m.start() + 1].translate(lexer.SPACES_KEEP_BREAKS))
        pieces.append(src[m.start() + 1 : stop + 1])
        pos = stop + 1
    pieces.append(src[pos:end].translate(lexer.SPACES_KEEP_BREAKS))
    return pieces


@functools.cache
def _kept_at(indent: bytes, kept: bytes) -> re.Pattern[bytes]:
    """A line break, then a kept statement exactly ``indent`` in."""
    return re.compile(b"\n" + re.escape(indent) + kept)


def _closing(src: bytes, code: bytes, brace: int, after: int, indent: bytes) -> int | None:
    """The offset of the ``}`` that closes the ``{`` at ``brace``: the first
    line back at the header's indentation, starting with ``}``, with the
    brackets between balanced; None when the text is not of that shape.
    The real text must agree that no line between comes back that far (a
    string the lexer misread — a template literal nested deeper than it
    follows — could otherwise hide the end of this body and the start of
    the next function; a real multi-line string at column 0 just keeps its
    body whole)."""
    close = code.find(b"\n" + indent + b"}", after)
    shallow = line_at_most(len(indent))
    first = shallow.search(code, after)
    if close < 0 or first is None or first.start() != close:
        return None
    first = shallow.search(src, after)
    if first is None or first.start() != close:
        return None
    end = close + 1 + len(indent)
    return end if _encloses(code[brace + 1 : end]) else None


_NOT_BRACES = bytes(c for c in range(256) if c not in b"{}")
_BRACE_STEP = {123: 1, 125: -1}.__getitem__


def _encloses(text: bytes) -> bool:
    """Whether ``text`` (what lies between a ``{`` and a ``}``) closes as
    many brackets as it opens, and never closes that ``{`` on the way: a
    body badly indented must not swallow the functions after it. In C calls
    only: the braces are picked out, then their running depth."""
    c = text.count
    if c(b"(") != c(b")") or c(b"[") != c(b"]"):
        return False
    braces = text.translate(None, _NOT_BRACES)
    if not braces:
        return True
    depths = list(accumulate(map(_BRACE_STEP, braces)))
    return depths[-1] == 0 and min(depths) >= 0


def confirmed(language: str, tree: Any, openings: list[int]) -> bool:
    """Whether every emptied ``{`` opens the body of a function in ``tree``
    (and the tree parsed without errors): only then is it the real outline."""
    root = tree.root_node
    if root.has_error:
        return False
    functions = FUNCTIONS[language]
    for at in openings:
        block = root.descendant_for_byte_range(at, at + 1).parent
        if block is None or block.start_byte != at or block.parent is None or block.parent.type not in functions:
            return False
    return True
