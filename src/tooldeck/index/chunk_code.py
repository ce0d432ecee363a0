"""Source files -> definition-aligned chunks, through the codemap layer.

The codemap's tree-sitter extraction gives every definition with its name
line, last line and nesting. A chunk is one *unit*: a top-level definition,
or a function directly inside a class-like one (a method) — the granularity
at which a question ("where is the option parser's error raised?") has one
answer. A class keeps its own chunk for the lines before its first method
(header, docstring, fields). Comments and decorators just above a
definition belong to it. Lines outside every unit (imports, module code)
become ``module`` chunks. A unit longer than ``MAX_LINES`` is cut into
windows, each still carrying the enclosing symbol, so every chunk answers
"which file, which lines, inside what".
"""

from __future__ import annotations

from tooldeck.codemap.model import CLASS_LIKE, Symbol
from tooldeck.index.model import Chunk

MAX_LINES = 80
_CLOSERS = frozenset({"}", "};", "end", ")", "]"})
_LEAD = ("@", "#", "//", "/*", "*", "///", "--", ";;", "(*")


def _units(symbols: list[Symbol]) -> list[Symbol]:
    out: list[Symbol] = []
    for s in symbols:
        if s.depth == 0 or (s.depth == 1 and s.kind in ("function", "method") and _parent_is_class(s, symbols)):
            out.append(s)
    return out


def _parent_is_class(s: Symbol, symbols: list[Symbol]) -> bool:
    for p in symbols:
        if p.depth == s.depth - 1 and p.line <= s.line <= max(p.end_line, p.line) and p.kind in CLASS_LIKE:
            return True
    return False


def _label(s: Symbol) -> str:
    return f"{s.parent}.{s.name}" if s.parent else s.name


def _bare_header(piece: list[str], u: Symbol | None) -> bool:
    """A class's own lines that are only its header and closing brace (``class
    Cart {`` ... ``}`` around methods): no chunk, its methods carry its name."""
    if u is None or u.kind not in CLASS_LIKE:
        return False
    body = [s.strip() for s in piece if s.strip()]
    return len(body) <= 2 and all(s in _CLOSERS or u.name in s for s in body)


def _free_or_outer(o: Symbol | None, u: Symbol) -> bool:
    """A line held by nobody, or by the class around ``u`` (a method's decorator)."""
    return o is None or (o is not u and o.line < u.line and o.end_line >= u.end_line)


def _windows(start: int, end: int) -> list[tuple[int, int]]:
    """1-based inclusive line ranges of at most MAX_LINES."""
    out = []
    a = start
    while a <= end:
        b = min(end, a + MAX_LINES - 1)
        out.append((a, b))
        a = b + 1
    return out


def chunk_code(path: str, text: str, symbols: list[Symbol]) -> list[Chunk]:
    """Chunks of one source file given its codemap symbols."""
    lines = text.splitlines()
    n = len(lines)
    if n == 0:
        return []
    owner: list[Symbol | None] = [None] * (n + 2)  # 1-based line -> unit
    units = sorted(_units(symbols), key=lambda s: (s.line, -s.end_line))
    for u in units:  # methods come after their class in this order, so they overwrite its span
        for ln in range(max(1, u.line), min(n, max(u.end_line, u.line)) + 1):
            owner[ln] = u
    for u in units:  # leading comments and decorators go with the definition below them
        ln = u.line - 1
        while ln >= 1 and _free_or_outer(owner[ln], u) and lines[ln - 1].strip().startswith(_LEAD):
            owner[ln] = u
            ln -= 1
    chunks: list[Chunk] = []
    ln = 1
    while ln <= n:
        u = owner[ln]
        end = ln
        while end + 1 <= n and owner[end + 1] is u:
            end += 1
        if any(lines[i - 1].strip() for i in range(ln, end + 1)) and not _bare_header(lines[ln - 1 : end], u):
            chunks.extend(_make(path, lines, ln, end, u))
        ln = end + 1
    return chunks


def _make(path: str, lines: list[str], start: int, end: int, u: Symbol | None) -> list[Chunk]:
    out = []
    while start <= end and not lines[start - 1].strip():
        start += 1
    while end >= start and not lines[end - 1].strip():
        end -= 1
    for a, b in _windows(start, end):
        body = "\n".join(lines[a - 1 : b])
        if u is None:
            title = f"{path} (module level)"
            out.append(Chunk(path, a, b, title, body, None, "module"))
        else:
            label = _label(u)
            title = f"{path} {u.kind} {label}: {u.signature}"
            out.append(Chunk(path, a, b, title, body, label, u.kind))
    return out
