"""Markdown and reStructuredText -> heading-aligned chunks.

A chunk is one section: a heading and the text up to the next heading of any
level, titled by its heading path (``Options > Multiple Values``) so that a
search hit says where in the document it lies and the title words count for
both the lexical and the dense search. A section longer than ``MAX_LINES`` or
``MAX_CHARS`` is cut at blank lines (never inside a fenced code block when it
can be avoided); each piece keeps the title. Headings inside fenced code are
not headings.
"""

from __future__ import annotations

import re

from tooldeck.index.model import Chunk

MAX_LINES = 60
MAX_CHARS = 2400
EXTENSIONS = (".md", ".markdown", ".mdx", ".rst", ".txt")

_ATX = re.compile(r"^ {0,3}(#{1,6})\s+(.*?)\s*#*\s*$")
_FENCE = re.compile(r"^ {0,3}(```+|~~~+)")
_SETEXT = re.compile(r"^ {0,3}(=+|-+)\s*$")
_RST_UNDER = re.compile(r"^([=\-~^\"'`*+#:.])\1{2,}\s*$")


def is_doc(path: str) -> bool:
    return path.lower().endswith(EXTENSIONS)


def _headings(lines: list[str], rst: bool) -> list[tuple[int, int, str, int]]:
    """``(first line index, level, text, lines used)`` of each heading."""
    out: list[tuple[int, int, str, int]] = []
    fence: str | None = None
    rst_levels: dict[str, int] = {}
    i = 0
    while i < len(lines):
        line = lines[i]
        m = _FENCE.match(line)
        if m:
            mark = m.group(1)[0] * 3
            fence = None if fence == mark else (fence or mark)
            i += 1
            continue
        if fence:
            i += 1
            continue
        nxt = lines[i + 1] if i + 1 < len(lines) else ""
        if not rst and (m := _ATX.match(line)):
            out.append((i, len(m.group(1)), m.group(2), 1))
        elif line.strip() and not line.startswith((" ", "\t")) and (m2 := _RST_UNDER.match(nxt) if rst else None):
            if len(m2.group(0).rstrip()) >= len(line.rstrip()) - 1:
                over = i > 0 and lines[i - 1].strip() == nxt.strip()
                key = ("o" if over else "u") + m2.group(1)
                level = rst_levels.setdefault(key, len(rst_levels) + 1)
                start = i - 1 if over else i
                if over and out and out[-1][0] == start:
                    out.pop()
                out.append((start, level, line.strip(), (i - start) + 2))
                i += 2
                continue
        elif (
            not rst
            and line.strip()
            and (m3 := _SETEXT.match(nxt))
            and not _ATX.match(line)
            and not (m3.group(1).startswith("-") and _looks_like_list(line))
        ):
            out.append((i, 1 if m3.group(1).startswith("=") else 2, line.strip(), 2))
            i += 2
            continue
        i += 1
    return out


def _looks_like_list(line: str) -> bool:
    return bool(re.match(r"^\s*([-*+]|\d+[.)])\s", line))


def _split_long(body: list[str], first: int) -> list[tuple[int, int]]:
    """``(start, end)`` line-index ranges (end exclusive) of at most
    MAX_LINES / MAX_CHARS each, cut at blank lines outside fences."""
    ranges: list[tuple[int, int]] = []
    start = 0
    size = 0
    fence = False
    last_blank = -1
    for j, line in enumerate(body):
        if _FENCE.match(line):
            fence = not fence
        if not line.strip() and not fence:
            last_blank = j
        size += len(line) + 1
        if (j - start + 1 >= MAX_LINES or size >= MAX_CHARS) and j + 1 < len(body):
            cut = last_blank + 1 if last_blank >= start + 5 else j + 1
            ranges.append((first + start, first + cut))
            start, size = cut, sum(len(x) + 1 for x in body[cut : j + 1])
    ranges.append((first + start, first + len(body)))
    return ranges


def chunk_markdown(path: str, text: str) -> list[Chunk]:
    """The chunks of one document (``path`` root-relative, for titles and hits)."""
    lines = text.splitlines()
    rst = path.lower().endswith(".rst")
    heads = _headings(lines, rst)
    doc_title = heads[0][2] if heads and heads[0][1] == 1 else path.rsplit("/", 1)[-1]
    # sections: (start index, end index exclusive, heading path)
    sections: list[tuple[int, int, str]] = []
    trail: list[tuple[int, str]] = []
    if not heads or heads[0][0] > 0:
        sections.append((0, heads[0][0] if heads else len(lines), doc_title))
    for n, (idx, level, title, _used) in enumerate(heads):
        while trail and trail[-1][0] >= level:
            trail.pop()
        trail.append((level, title))
        end = heads[n + 1][0] if n + 1 < len(heads) else len(lines)
        crumbs = [t for _lvl, t in trail]
        if crumbs[0] != doc_title:
            crumbs.insert(0, doc_title)
        sections.append((idx, end, " > ".join(crumbs)))
    chunks: list[Chunk] = []
    for start, end, title in sections:
        body = lines[start:end]
        if not any(s.strip() for s in body):
            continue
        for a, b in _split_long(body, start):
            piece = "\n".join(lines[a:b]).strip("\n")
            if not piece.strip():
                continue
            if len(piece.strip().splitlines()) == 1 and b - a <= 2 and _is_heading_only(lines[a:b], heads, a):
                continue  # a bare heading: its words live on in the following chunks' titles
            chunks.append(Chunk(path, a + 1, b, title, piece, None, "section"))
    return chunks


def _is_heading_only(piece: list[str], heads: list[tuple[int, int, str, int]], start: int) -> bool:
    return any(h[0] == start for h in heads)
