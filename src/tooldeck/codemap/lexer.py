"""Comments and strings blanked by one regular expression per language.

A codemap's references are the identifiers of a file's *code*: words inside
comments and string literals do not count. Finding those regions with a
tree-sitter query means walking every node of the tree, which costs about a
third of the parse; the definitions query itself only needs the outline
levels of the tree (see :mod:`tooldeck.codemap.extract`). So for the common
languages the regions come from one compiled regular expression instead (C
speed, about a tenth of that walk), and the query walk is kept for the
languages listed without one here (their literal syntax is too irregular:
heredocs, nested interpolation, verbatim strings...).

The expressions follow the grammars' own notion of a skipped node (the
``skip_types`` of :mod:`tooldeck.codemap.specs`): what those nodes cover is
blanked, what they do not (Go runes, Java/Rust char literals, JavaScript
regular expressions) is matched only so that a quote inside it does not open
a string, and is kept. On the benchmark corpora (1,500 Python files; 1,500
Go/Rust/Java/TypeScript/JavaScript files) the reference words are identical
to the tree walk's for every Python file and for 99.3% of the others; the
differences are template literals nested two levels deep and regular
expressions after a keyword (``return /x/``), a handful of words per file.

Known approximation: in Python, an identifier made only of string-prefix
letters (``rb``, ``f``) written directly before a ``#`` comment with no space
is dropped from that file's words.
"""

from __future__ import annotations

import functools
import re
from typing import NamedTuple

_DQ = rb'"[^"\\\n]*(?:\\[\s\S][^"\\\n]*)*"'
_SQ = rb"'[^'\\\n]*(?:\\[\s\S][^'\\\n]*)*'"
_BLOCK = rb"/\*[^*]*\*+(?:[^/*][^*]*\*+)*/"
_LINE = rb"//[^\n]*"
_CHAR = rb"'((?:\\[\s\S][^'\\\n]{0,9}|[^'\\\n]))'"  # a char/rune literal: its inside is kept
_TRIPLE_D = rb'"""[^"\\]*(?:(?:\\[\s\S]|"(?!""))[^"\\]*)*"""'
_TRIPLE_S = rb"'''[^'\\]*(?:(?:\\[\s\S]|'(?!''))[^'\\]*)*'''"
# `...${ expr }...`, one level of braces or nested template inside a substitution
_TEMPLATE = rb"`[^`\\$]*(?:(?:\\[\s\S]|\$(?!\{)|\$\{(?:[^{}`]|\{[^{}]*\}|`[^`]*`)*\})[^`\\$]*)*`"
# a regular expression literal where one may start (after an operator or an open bracket, and up
# to two blanks, or alone on a line): kept. It starts with its `/` (the look-behind follows): an expression whose
# alternatives all start with a known byte is searched fast.
_P = rb"[(,=:\[!&|?{};]"
_REGEX = (
    rb"/(?:"
    + b"|".join(rb"(?<=" + before + rb"/)" for before in (_P, _P + rb"\s", _P + rb"\s\s"))
    + b"".join(rb"|(?<=\n" + b" " * n + rb"/)" for n in (2, 4, 6, 8, 10, 12))  # a value on its own line
    + rb")(?![/*])"
    rb"((?:[^/\\\[\n]|\\.|\[(?:[^\]\\\n]|\\.)*\])+/[a-z]*)"
)
_RUST_RAW = rb'#(?P<hashes>#*)"[\s\S]*?"#(?P=hashes)'  # r#"..."#: the r is removed with the other prefixes

_PATTERNS: dict[str, bytes] = {
    # no leading group or assertion: the engine then skips fast to the next byte an alternative starts with
    "python": b"|".join([rb"#[^\n]*", _TRIPLE_D, _TRIPLE_S, _DQ, _SQ]),
    "go": b"|".join([_LINE, _BLOCK, _DQ, rb"`[^`]*`", _CHAR]),
    "java": b"|".join([_LINE, _BLOCK, _TRIPLE_D, _DQ, _CHAR]),
    "rust": b"|".join([_LINE, _BLOCK, _RUST_RAW, rb'"[^"\\]*(?:\\[\s\S][^"\\]*)*"', _CHAR]),
    "javascript": b"|".join([_LINE, _BLOCK, _DQ, _SQ, _TEMPLATE, _REGEX]),
}
_PATTERNS["typescript"] = _PATTERNS["tsx"] = _PATTERNS["javascript"]


# what a match becomes: its kept group (char literal, regular expression) if any, between two \x01
# (non-word bytes). Python keeps no group: a match becomes one \x01 (see blank). Rust's group 1
# is a raw string's hashes (not kept), group 2 a char literal's inside.
# string prefixes (r, b, f, rb, ...) left before a blanked Python string, found on the reversed text
# (a pattern that starts with a literal is searched fast; one that starts with letters is not)
_PY_PREFIX_REVERSED = re.compile(rb"\x01[rRbBuUfFtT]{1,2}(?![A-Za-z0-9_])")
# Rust raw/byte/C strings: the r / b / c prefix before a blanked string
_RUST_PREFIX_REVERSED = re.compile(rb"\x01(?:rb|rc|r|b|c)(?![A-Za-z0-9_])")


# Python, marked: the same expression on the text with a \x02 put before every `#`, `"` and `'`.
# Python's `re` scans for a match start byte by byte (~8 ns a byte) unless every match starts
# with one literal byte, which it finds at memchr speed; the three bytes.replace calls that
# put the marks cost less than that scan (Python corpus: 0.15 -> 0.12 ms per file). Inside a
# literal, a marked byte is taken with its mark, so the marked text matches where the plain
# one does; a file that holds a \x02 itself is blanked with the plain expression.
_M = rb"\x02"
_ESC = rb"\\(?:\x02[\s\S]|[^\x02])"  # a backslash and the byte it escapes (with its mark)


def _marked_triple(q: bytes, other: bytes) -> bytes:
    plain = rb"[^\x02\"'#\\]*"
    close = (_M + q) * 3
    inner = rb"(?:" + _ESC + rb"|\x02[#" + other + rb"]|\x02" + q + rb"(?!" + (_M + q) * 2 + rb"))"
    return close + plain + rb"(?:" + inner + plain + rb")*" + close


def _marked_single(q: bytes, other: bytes) -> bytes:
    plain = rb"[^\x02\"'#\\\n]*"
    return _M + q + plain + rb"(?:(?:" + _ESC + rb"|\x02[#" + other + rb"])" + plain + rb")*" + _M + q


_PYTHON_MARKED = b"|".join(
    [
        rb"\x02#[^\n]*",
        _marked_triple(b'"', b"'"),
        _marked_triple(b"'", b'"'),
        _marked_single(b'"', b"'"),
        _marked_single(b"'", b'"'),
    ]
)


def marked(data: bytes) -> bytes:
    """``data`` with a \x02 before every ``#``, ``"`` and ``'``: the text
    :data:`_PYTHON_MARKED` reads (for ``data`` that holds no \x02)."""
    return data.replace(b"#", b"\x02#").replace(b'"', b'\x02"').replace(b"'", b"\x02'")


class Pieces(NamedTuple):
    """A file cut at its strings and comments by one ``split`` (C speed): what
    both its references (:func:`blank`) and the text its hollowed parse is
    planned on (:func:`code_only`) are made of."""

    parts: list[bytes | None]  # code, the token, its groups..., code, ... (code: the file's bytes, see pieces())
    stride: int  # items per code piece and token: 2 for Python, 2 + the expression's groups elsewhere
    mark: bytes  # b"\x02" when the tokens come from Python's marked text (each marked byte marked), else b""
    comment: int  # the byte a comment token starts with


@functools.cache
def _split(language: str, on_marked: bool = False) -> re.Pattern[bytes]:
    """``language``'s expression with the whole match as group 1 (``split``
    keeps it; its own groups follow), compiled on first use: compiling them
    all cost every worker process ~7 ms at start, and most batches hold one
    or two languages."""
    return re.compile(b"(" + (_PYTHON_MARKED if on_marked else _PATTERNS[language]) + b")")


def pieces(language: str, data: bytes) -> Pieces:
    """``data`` cut at its strings and comments (a :func:`has_lexer` language)."""
    if language != "python":
        pattern = _split(language)
        return Pieces(pattern.split(data), pattern.groups + 1, b"", 47)  # "/"
    if b"\x02" in data:  # a file that holds a mark itself: the plain expression
        return Pieces(_split(language).split(data), 2, b"", 35)  # type: ignore[arg-type]
    # a code piece is the file's own bytes, but a mark before a quote that opens no string (unterminated)
    return Pieces(_split(language, True).split(marked(data)), 2, b"\x02", 35)  # type: ignore[arg-type]


# every byte a space but line breaks: text blanked this way keeps its offsets and its lines
SPACES_KEEP_BREAKS = bytes(10 if c == 10 else 32 for c in range(256))


def code_only(cut: Pieces) -> bytes:
    """The file with its comments turned to spaces, and its strings (and
    other literals) too but their first byte (a line a string starts is a
    code line; one inside a string is not): the same length, every other
    byte where it was, line breaks kept."""
    mark, k, step, comment = cut.mark, len(cut.mark), cut.stride, cut.comment
    parts = cut.parts
    blanked = SPACES_KEEP_BREAKS
    tokens = [
        t.translate(blanked, mark) if t[k] == comment else t[k : k + 1] + t[k + 1 :].translate(blanked, mark)
        for t in parts[1::step]  # type: ignore[union-attr]
    ]
    code = b"".join(_interleave(parts[0::step], tokens))  # type: ignore[arg-type]
    if mark and mark in code:  # a quote that opens no string (unterminated) kept its mark in a code piece
        code = code.replace(mark, b"")
    return code


def _interleave(code: list[bytes | None], between: list[bytes]) -> list[bytes | None]:
    """code[0], between[0], code[1], ... code[-1] (slice assignments: C speed)."""
    out: list[bytes | None] = [None] * (len(code) + len(between))
    out[0::2] = code
    out[1::2] = between
    return out


def blank(language: str, data: bytes, cut: Pieces | None = None) -> bytes:
    """``data`` with its comments and string literals replaced by non-word
    bytes (identifiers elsewhere untouched): a match becomes one \x01, or
    the group it keeps (a char literal's inside, a regular expression)
    between two. Only for :func:`has_lexer` languages; ``cut``: ``data``'s
    :func:`pieces`, when the caller has them."""
    if cut is None:
        cut = pieces(language, data)
    step = cut.stride
    if step == 2:  # Python: no group kept
        out = b"\x01".join(cut.parts[0::2])  # type: ignore[arg-type]
    else:
        # ``pattern.sub(b"\x01\\1\x01", data)``, without its cost: on Python 3.11 a
        # replacement with a group calls two Python functions per match; ``split``
        # returns the code between matches and each match's groups in one C call.
        # The last group is the one kept (Rust's first is a raw string's hashes).
        kept = [g or b"" for g in cut.parts[step - 1 :: step]]
        out = b"\x01".join(_interleave(cut.parts[0::step], kept))  # type: ignore[arg-type]
    prefix = _PY_PREFIX_REVERSED if language == "python" else _RUST_PREFIX_REVERSED if language == "rust" else None
    if prefix is not None and b"\x01" in out:
        out = prefix.sub(b"\x01", out[::-1])[::-1]
    return out


def has_lexer(language: str) -> bool:
    return language in _PATTERNS
