"""stdin/stdout for the MCP stdio transport, read and written by the event loop.

The SDK's ``stdio_server()`` wraps stdin/stdout with ``anyio.wrap_file``: every
line read and every write + flush is a hop to a worker thread, three per tool
call, which measured as a sizeable share of a small call's round trip. The
SDK accepts explicit streams (``stdio_server(stdin=..., stdout=...)``), so this
module hands it two tiny adapters over asyncio pipe transports instead (no
threads); the SDK still does all the protocol work.

Like the SDK's own claim, fd 0 is pointed at /dev/null and fd 1 at stderr
while serving, so a child process (a shell tool) can neither steal requests
nor write into the protocol stream; both are restored afterwards. When stdin
or stdout is not a pipe or socket (a regular file, /dev/null, a terminal),
:func:`open_pipes` returns None and the caller falls back to the SDK's default.
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import re
import stat
from collections.abc import AsyncIterator

LINE_LIMIT = 1 << 30  # a request line may be huge (a whole file in `content`)

# a JSON \uXXXX escape of a UTF-16 surrogate: a high+low pair, or a lone one
# (an odd run of backslashes before the "u" makes it an escape)
_SURROGATE_ESCAPE = re.compile(
    r"(?<!\\)(?P<pre>(?:\\\\)*)\\u(?P<hi>d[89ab][0-9a-f]{2})(?:\\u(?P<lo>d[c-f][0-9a-f]{2}))?"
    r"|(?<!\\)(?P<pre2>(?:\\\\)*)\\u(?P<lone>d[c-f][0-9a-f]{2})",
    re.IGNORECASE,
)


def _replace_lone(m: re.Match[str]) -> str:
    if m.group("hi") is not None and m.group("lo") is not None:
        return m.group(0)  # a valid pair
    pre = m.group("pre") if m.group("hi") is not None else m.group("pre2")
    return f"{pre}\\ufffd"


def repair_surrogate_escapes(line: str) -> str:
    """Replace JSON escapes of lone surrogates (``"\\ud800"``) with U+FFFD.

    The SDK's JSON parser rejects them, and a line it cannot parse gets no
    answer at all: the client would wait forever for that request. Repaired,
    the request is parsed and answered (a lone surrogate names no file and is
    no valid text anyway)."""
    if "\\u" not in line:
        return line
    return _SURROGATE_ESCAPE.sub(_replace_lone, line)


class LineReader:
    """``async for line in reader`` over a pipe (what the SDK iterates)."""

    def __init__(self, reader: asyncio.StreamReader) -> None:
        self._reader = reader

    def __aiter__(self) -> LineReader:
        return self

    async def __anext__(self) -> str:
        line = await self._reader.readline()
        if not line:
            raise StopAsyncIteration
        # as the SDK: bad bytes never stop the server
        return repair_surrogate_escapes(line.decode("utf-8", "replace"))


class LineWriter:
    """``await write(text)`` / ``await flush()`` over a pipe."""

    def __init__(self, writer: asyncio.StreamWriter) -> None:
        self._writer = writer

    async def write(self, text: str) -> int:
        data = text.encode("utf-8", "backslashreplace")
        self._writer.write(data)
        return len(text)

    async def flush(self) -> None:
        await self._writer.drain()


def _is_pipe(fd: int) -> bool:
    try:
        mode = os.fstat(fd).st_mode
    except OSError:
        return False
    return stat.S_ISFIFO(mode) or stat.S_ISSOCK(mode)


@contextlib.asynccontextmanager
async def open_pipes() -> AsyncIterator[tuple[LineReader, LineWriter] | None]:
    if not (_is_pipe(0) and _is_pipe(1)):
        # a file, /dev/null or a terminal: epoll cannot (or need not) watch it
        yield None
        return
    loop = asyncio.get_running_loop()
    wire_in, wire_out = os.dup(0), os.dup(1)
    rfile = os.fdopen(wire_in, "rb", buffering=0)
    wfile = os.fdopen(wire_out, "wb", buffering=0)
    transports: list[asyncio.BaseTransport] = []
    try:
        reader = asyncio.StreamReader(limit=LINE_LIMIT, loop=loop)
        r_transport, _ = await loop.connect_read_pipe(lambda: asyncio.StreamReaderProtocol(reader, loop=loop), rfile)
        transports.append(r_transport)
        w_transport, w_protocol = await loop.connect_write_pipe(asyncio.streams.FlowControlMixin, wfile)
        transports.append(w_transport)
    except (ValueError, OSError):  # not a pipe/socket/tty: let the SDK use its own streams
        for t in transports:
            t.close()
        rfile.close()
        wfile.close()
        yield None
        return
    writer = asyncio.StreamWriter(w_transport, w_protocol, None, loop)
    devnull = os.open(os.devnull, os.O_RDONLY)
    saved_in, saved_out = os.dup(0), os.dup(1)
    os.dup2(devnull, 0)
    os.dup2(2, 1)
    os.close(devnull)
    try:
        yield LineReader(reader), LineWriter(writer)
    finally:
        with contextlib.suppress(Exception):
            await writer.drain()
        for t in transports:
            t.close()
        os.dup2(saved_in, 0)
        os.dup2(saved_out, 1)
        os.close(saved_in)
        os.close(saved_out)
