"""The usual patch, parsed in bulk: only Update sections of plain op lines. No I/O.

A model's patch is almost always ``*** Begin Patch``, ``*** Update File:``
sections of ``@@`` headers and `` ``/``-``/``+`` lines, ``*** End Patch``.
For that patch the line-by-line parser's work (a slice, a test and two
appends per line, a list per chunk) is more than the exact path needs: each
chunk's old lines joined (the needle it searches for) and its new lines
joined (what it writes). Both come out of a few C-speed passes over the whole
patch encoded once: drop the ``+`` lines and strip the op of the others for
the old side, drop the ``-`` lines for the new side, then split the three
texts (patch, old side, new side) at the same section and chunk headers —
one slice per chunk instead of Python work per line.

That is sound only when no line can be misread, so :func:`plain_sections`
answers None (the line-by-line parser then runs, with every leniency and
every error message) unless every line starts with a marker, ``@@``, or an
op; the only markers are ``*** Update File:``; no line is empty (an empty
line may be a separator or an empty context line) or padded before a marker;
and no op line holds ``@@`` or ``***`` (once its op is stripped it could read
as a header; with padding it may be a marker). The chunks it gives are the
parser's chunks: a property test holds the two equal.
"""

from __future__ import annotations

import re
from typing import NamedTuple

BEGIN = "*** Begin Patch\n"
END = "*** End Patch"
UPDATE = "\n*** Update File: "
_UPDATE_B = UPDATE.encode()
# an empty line, a tab, a "\\" note, a lone "\r"..., a marker other than Update
_ODD_LINE = re.compile(rb"\n(?:[^ +\-@*]|\*(?!\*\* Update File: ))")
_PLUS = re.compile(rb"\n\+[^\n]*")
_MINUS = re.compile(rb"\n-[^\n]*")
# an op line holding "@@" or "***": once stripped it may read as a header, or it is a padded marker
_MISREAD = re.compile(rb"\n[ +\-][^\n]*?(?:@@|\*\*\*)")
_HEADER = re.compile(rb"\n@@([^\n]*)")  # a "@@" line; split keeps its text after the "@@"
_RANGE_RE = re.compile(r"^@@\s*-\d+(?:,\d+)?\s+\+\d+(?:,\d+)?\s*@@\s?(.*)$")


class PlainChunks(NamedTuple):
    """An Update's chunks, column by column (a handful of lists, not a tuple
    per chunk: the garbage collector has little to walk)."""

    anchors: list[str]  # per chunk: "" (none), or its anchors joined by "\n" (each found after the previous)
    olds: list[bytes]  # the old lines, each after a line break, plus a final one (b"\na\nb\n"); b"" if none
    news: list[bytes]  # the new lines, each ending with a line break (b"a\nc\n"); b"" if none


class PlainSection(NamedTuple):
    """One ``*** Update File:`` section: what follows the marker on its line,
    the marker's patch line, the section's text (for the line-by-line parser,
    should the file need the ladder) and its chunks."""

    head: str
    line: int
    text: bytes  # from the marker's text on (UTF-8)
    chunks: PlainChunks


def anchor_of(line: str) -> str:
    """The anchor of a ``@@`` header line (a unified-diff range is dropped)."""
    s = line.strip()
    if s[2:].lstrip()[:1] == "-":  # perhaps a unified-diff range header
        m = _RANGE_RE.match(s)
        if m:
            return m.group(1).strip()
    return s[2:].strip()


def plain_sections(text: str) -> list[PlainSection] | None:
    """The Update sections of ``text`` (CRLF already made LF, no BOM), or None
    when the patch needs the line-by-line parser."""
    if not text.startswith(BEGIN):
        return None
    end = text.rfind("\n" + END)
    if end < len(BEGIN) - 1 or text[end + 1 :].rstrip() != END:
        return None
    try:
        body = text[len(BEGIN) - 1 : end].encode("utf-8")  # every line after a line break
    except UnicodeEncodeError:  # a lone surrogate: the ladder says what is wrong with it
        return None
    files = body.count(_UPDATE_B)
    if not files or body.endswith(b"\n") or _ODD_LINE.search(body):
        return None
    if body.count(b"***") != files and _MISREAD.search(body):
        return None
    olds = _PLUS.sub(b"", body).replace(b"\n-", b"\n ").replace(b"\n ", b"\n").split(_UPDATE_B)
    news = _MINUS.sub(b"", body).replace(b"\n+", b"\n ").replace(b"\n ", b"\n").split(_UPDATE_B)
    parts = body.split(_UPDATE_B)
    if parts[0] or len(olds) != len(parts) or len(news) != len(parts):  # lines before the first file operation
        return None
    out: list[PlainSection] = []
    line = 2  # the patch line of the first section's marker
    headers = 0
    for part, old, new in zip(parts[1:], olds[1:], news[1:], strict=True):
        cut = part.find(b"\n")
        if cut < 0:  # no chunks (and no Move): the parser says so
            return None
        chunks = _chunks(part[cut:], old[cut:], new[cut:])
        if chunks is None:
            return None
        headers += chunks[1]
        out.append(PlainSection(part[:cut].decode("utf-8"), line, part, chunks[0]))
        line += part.count(b"\n") + 1
    if body.count(b"@@") != headers and _MISREAD.search(body):
        return None
    return out


def _chunks(part: bytes, old: bytes, new: bytes) -> tuple[PlainChunks, int] | None:
    """The chunks of one section's lines (each after a line break): the three
    texts split at the same ``@@`` header lines, one C call each, then one
    comprehension per column; and the number of headers."""
    heads = _HEADER.split(part)  # [lines before the first header, header, lines, header, lines...]
    olds = _HEADER.split(old)
    news = _HEADER.split(new)
    if len(olds) != len(heads) or len(news) != len(heads):  # an op line that holds "@@"
        return None
    first = heads[0]
    if first and not first[1:].partition(b"\n")[0].decode("utf-8").strip():
        return None  # the parser skips a blank line before any chunk
    if b"" in heads[2::2]:  # a header with no lines: stacked anchors, or a chunk with none (an error)
        return _stacked(heads, olds, news)
    anchors = [h.decode("utf-8").strip() for h in heads[1::2]]
    if "\n-" in "\n" + "\n".join(anchors):  # perhaps unified-diff range headers
        anchors = [anchor_of("@@" + h.decode("utf-8")) for h in heads[1::2]]
    out = PlainChunks(
        anchors, [o + b"\n" if o else b"" for o in olds[2::2]], [n[1:] + b"\n" if n else b"" for n in news[2::2]]
    )
    if first:  # the first chunk may omit its "@@"
        out.anchors.insert(0, "")
        out.olds.insert(0, olds[0] + b"\n" if olds[0] else b"")
        out.news.insert(0, news[0][1:] + b"\n" if news[0] else b"")
    return out, len(heads) // 2


def _stacked(heads: list[bytes], olds: list[bytes], news: list[bytes]) -> tuple[PlainChunks, int] | None:
    """:func:`_chunks` when some header has no lines of its own: each anchor
    of a run of headers narrows the search for the chunk that follows."""
    out = PlainChunks([], [], [])
    if heads[0]:
        out.anchors.append("")
        out.olds.append(olds[0] + b"\n" if olds[0] else b"")
        out.news.append(news[0][1:] + b"\n" if news[0] else b"")
    pending: list[str] = []
    for k in range(1, len(heads), 2):
        anchor = anchor_of("@@" + heads[k].decode("utf-8"))
        if anchor:
            pending.append(anchor)
        o, n = olds[k + 1], news[k + 1]
        if not heads[k + 1]:  # a header alone
            continue
        out.anchors.append("\n".join(pending))
        pending = []
        out.olds.append(o + b"\n" if o else b"")
        out.news.append(n[1:] + b"\n" if n else b"")
    if not heads[-1]:  # the last header has no lines: the parser says so
        return None
    return out, len(heads) // 2
