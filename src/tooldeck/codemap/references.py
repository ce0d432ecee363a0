"""Reference lines of one name in one file.

A lexical pass finds where the name's text occurs; the syntax tree then keeps
only occurrences that are identifier nodes (not text inside a comment or a
string, not part of a longer name). A file without the text is never parsed.
Each kept line is attributed to the innermost definition whose span holds it,
from the file's codemap.
"""

from __future__ import annotations

import re

from tooldeck.codemap import grammars
from tooldeck.codemap.model import Symbol, enclosing

MAX_LINE_CHARS = 200


def occurrences(data: bytes, name: str) -> list[int]:
    """Byte offsets where ``name`` appears as a whole word."""
    pattern = re.compile(rb"(?<![A-Za-z0-9_])" + re.escape(name.encode("utf-8")) + rb"(?![A-Za-z0-9_])")
    return [m.start() for m in pattern.finditer(data)]


def qualified(sym: Symbol | None) -> str | None:
    if sym is None:
        return None
    return f"{sym.parent}.{sym.name}" if sym.parent else sym.name


def scan(language: str, data: bytes, name: str, symbols: list[Symbol]) -> list[tuple[int, str, str | None]]:
    """``(line, line text, enclosing definition)`` for each line using ``name``."""
    offsets = occurrences(data, name)
    if not offsets:
        return []
    tree = grammars.parse(language, data)
    root = tree.root_node
    kinds = set(grammars.spec(language).identifier_types)
    width = len(name.encode("utf-8"))
    definition_lines = {s.line for s in symbols if s.name == name}
    out: list[tuple[int, str, str | None]] = []
    last_line = 0
    for pos in offsets:
        node = root.named_descendant_for_byte_range(pos, pos + width)
        if node is None or node.type not in kinds or node.start_byte != pos or node.end_byte != pos + width:
            continue
        line = node.start_point[0] + 1
        if line == last_line or line in definition_lines:
            continue
        last_line = line
        start = data.rfind(b"\n", 0, pos) + 1
        end = data.find(b"\n", pos)
        text = data[start : end if end != -1 else len(data)].decode("utf-8", "replace").strip()
        if len(text) > MAX_LINE_CHARS:
            text = text[: MAX_LINE_CHARS - 1] + "…"
        out.append((line, text, qualified(enclosing(symbols, line))))
    return out
