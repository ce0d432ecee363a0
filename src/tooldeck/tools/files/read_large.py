"""read_file for big files: hold only what is shown.

Reading a 200 MB file whole, decoding it and splitting it into lines cost
several times its size in memory. Above :data:`STREAM_BYTES` the file is
streamed instead, in chunks through the safe path: one pass hashes it (the
staleness hash covers the whole file), checks it is UTF-8 and counts its
lines; then only the window that can be shown (at most ``MAX_BYTES`` + 1
bytes from the first requested line) is read and rendered by the same code
as small files, so the output is identical.
"""

from __future__ import annotations

import codecs
import hashlib

from tooldeck.core.errors import ErrorCode, ToolError
from tooldeck.tools.files.read_args import ReadArgs
from tooldeck.tools.files.read_window import MAX_BYTES, render_window, window
from tooldeck.workspace.content import HASH_CHARS, SNIFF_BYTES, OpenFile, looks_binary

STREAM_BYTES = 4 * 1024 * 1024


def _scan(f: OpenFile, shown: str) -> tuple[str, int]:
    """(content hash, total lines) of the whole file; binary-like content is refused."""
    digest = hashlib.sha256()
    decoder = codecs.getincrementaldecoder("utf-8")()
    newlines = offset = 0
    last = b""
    for chunk in f.chunks():
        if offset == 0 and looks_binary(chunk[:SNIFF_BYTES]):
            raise ToolError(ErrorCode.BINARY_FILE, f"{shown!r} looks binary (contains NUL bytes); it was not read")
        digest.update(chunk)
        try:
            decoder.decode(chunk)
        except UnicodeDecodeError as exc:
            raise ToolError(
                ErrorCode.BINARY_FILE, f"{shown!r} is not valid UTF-8 text (byte {offset + exc.start}); it was not read"
            ) from exc
        newlines += chunk.count(b"\n")
        offset += len(chunk)
        last = chunk[-1:]
    try:
        decoder.decode(b"", final=True)
    except UnicodeDecodeError as exc:
        raise ToolError(ErrorCode.BINARY_FILE, f"{shown!r} ends inside a UTF-8 character; it was not read") from exc
    total = newlines + (1 if offset and last != b"\n" else 0)
    return digest.hexdigest()[:HASH_CHARS], total


def _line_offset(f: OpenFile, line: int) -> int:
    """The byte offset where 0-based ``line`` begins."""
    if line == 0:
        return 0
    seen = offset = 0
    for chunk in f.chunks():
        n = chunk.count(b"\n")
        if seen + n >= line:
            pos = -1
            for _ in range(line - seen):
                pos = chunk.index(b"\n", pos + 1)
            return offset + pos + 1
        seen += n
        offset += len(chunk)
    return offset


def read_streamed(f: OpenFile, shown: str, args: ReadArgs) -> str:
    digest, total = _scan(f, shown)
    start, end = window(shown, total, args)
    begin = _line_offset(f, start)
    data = b"".join(f.chunks(begin, MAX_BYTES + 1))
    lines = data.split(b"\n")
    if begin + len(data) >= f.size and lines and lines[-1] == b"":
        lines.pop()  # the file's final newline ends the last line; it starts none
    text = [piece.decode("utf-8", "ignore") for piece in lines]
    return render_window(shown, text, start, end, total, digest)
