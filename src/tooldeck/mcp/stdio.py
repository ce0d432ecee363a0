"""stdin/stdout for the MCP stdio transport, read and written by the event loop.

The SDK's ``stdio_server()`` wraps stdin/stdout with ``anyio.wrap_file``: every
line read and every write + flush is a hop to a worker thread, three per tool
call, which measured as a sizeable share of a small call's round trip. The
SDK accepts explicit streams (``stdio_server(stdin=..., stdout=...)``), so this
module hands it two tiny adapters over asyncio pipe transports instead (no
threads); the SDK still does all the protocol work.

Like the SDK's own claim, fd 0 is pointed at /dev/null and fd 1 at stderr
while serving, so a child process (a shell tool) can neither steal requests
nor write into the protocol stream; both are restored afterwards. Input that
is not a pipe or socket (a regular file, /dev/null, a terminal) is read in a
worker thread instead; output that is not one is left to the SDK.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import os
import re
import stat
from collections.abc import AsyncIterator, Awaitable, Callable
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from tooldeck.mcp.handshake_front import Tap

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


Drain = Callable[[], Awaitable[None]]


Reject = Callable[[str], Awaitable[None]]


class LineReader:
    """``async for line in reader`` (what the SDK iterates).

    At end of input it first awaits ``drain`` (the host waits there for the
    requests already read to be answered: the SDK cancels whatever is still
    running once its input ends, so ``printf '...' | tooldeck serve`` would
    otherwise lose the answers).

    A line the SDK could not parse as a JSON-RPC message (not JSON, nested too
    deeply, not a message) would get no answer at all: the SDK drops it. Such
    a line is handed to ``reject`` (which answers it, see :func:`error_reply`)
    and never reaches the SDK, so every request gets an answer."""

    def __init__(
        self,
        readline: Callable[[], Awaitable[bytes]],
        drain: Drain | None = None,
        reject: Reject | None = None,
        tap: Tap | None = None,
    ) -> None:
        self._readline = readline
        self._drain = drain
        self._reject = reject
        self._tap = tap

    def __aiter__(self) -> LineReader:
        return self

    async def __anext__(self) -> str:
        while True:
            line = await self._readline()
            if not line:
                drain, self._drain = self._drain, None
                if drain is not None:
                    await drain()
                raise StopAsyncIteration
            # as the SDK: bad bytes never stop the server
            text = repair_surrogate_escapes(line.decode("utf-8", "replace"))
            if self._reject is None or not text.strip() or await _is_message_off_loop(text):
                if self._tap is not None:
                    self._tap.incoming(text)
                    if not self._tap.active:
                        self._tap = None
                return text
            await self._reject(text)


def is_message(text: str) -> bool:
    """Whether the SDK parses ``text`` as a JSON-RPC message (its own check;
    imported here: the early front uses this module before the SDK is loaded)."""
    from mcp_types import jsonrpc_message_adapter

    try:
        jsonrpc_message_adapter.validate_json(text, by_name=False)
    except ValueError:  # pydantic's ValidationError, recursion limit included
        return False
    return True


# A request line this long is checked in a worker thread: validating it costs
# ~4 ms of CPU per 500 KB, and the event loop may not spend more than 5 ms in
# one go (the SDK then validates the line once more, on the loop: its own work)
OFF_LOOP_CHARS = 64 * 1024


async def _is_message_off_loop(text: str) -> bool:
    if len(text) < OFF_LOOP_CHARS:
        return is_message(text)
    return await asyncio.to_thread(is_message, text)


_ID = re.compile(r'"id"\s*:\s*(-?\d+|"(?:[^"\\]|\\.)*")')


def error_reply(text: str) -> str:
    """The JSON-RPC error line answering an unparsable ``text``: -32700 when
    it is not JSON, -32600 when it is JSON but no valid message (e.g. nested
    too deeply), with the request's id when one can be found, else null (as
    JSON-RPC 2.0 requires when the id cannot be detected)."""
    code, why, ident = -32600, "invalid request", None
    try:
        data = json.loads(text)
    except RecursionError:
        why = "request nested too deeply"
        m = _ID.search(text)  # the top-level id of a request too deep to parse is usually first
        if m is not None:
            ident = json.loads(m.group(1))
    except ValueError as exc:
        code, why = -32700, f"parse error: not JSON ({exc})"
    else:
        if isinstance(data, dict):
            got = data.get("id")
            ident = got if isinstance(got, str | int) and not isinstance(got, bool) else None
        if _depth_exceeded(text):
            why = "request nested too deeply"
    return json.dumps({"jsonrpc": "2.0", "id": ident, "error": {"code": code, "message": why}})


def _depth_exceeded(text: str, limit: int = 200) -> bool:
    depth = top = 0
    for ch in text:
        if ch in "[{":
            depth += 1
            top = max(top, depth)
        elif ch in "]}":
            depth -= 1
    return top > limit


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


class FdWriter:
    """``await write(text)`` / ``await flush()`` over a descriptor that is not
    a pipe (a file, a terminal): plain blocking writes of whole lines."""

    def __init__(self, fd: int) -> None:
        self._fd = fd

    async def write(self, text: str) -> int:
        view = memoryview(text.encode("utf-8", "backslashreplace"))
        while view:
            view = view[os.write(self._fd, view) :]
        return len(text)

    async def flush(self) -> None:
        return None


class TapWriter:
    """A writer whose lines pass through a handshake :class:`Tap` (which may
    swallow an answer the front already gave, or add a notification) until
    the tap has nothing left to watch."""

    def __init__(self, inner: LineWriter | FdWriter, tap: Tap) -> None:
        self._inner = inner
        self._tap: Tap | None = tap

    async def write(self, text: str) -> int:
        tap = self._tap
        if tap is None:
            return await self._inner.write(text)
        for line in tap.outgoing(text):
            await self._inner.write(line)
        if not tap.active:
            self._tap = None
        return len(text)

    async def flush(self) -> None:
        await self._inner.flush()


def _is_pipe(fd: int) -> bool:
    try:
        mode = os.fstat(fd).st_mode
    except OSError:
        return False
    return stat.S_ISFIFO(mode) or stat.S_ISSOCK(mode)


Readline = Callable[[], Awaitable[bytes]]


@contextlib.asynccontextmanager
async def open_wire(prefix: bytes = b"", eof: bool = False) -> AsyncIterator[tuple[Readline, LineWriter | FdWriter]]:
    """``readline`` over fd 0 and the writer over fd 1. Pipes are watched by the
    event loop; anything else (a file, /dev/null, a terminal, which epoll
    cannot or need not watch) is read line by line in a worker thread and
    written with plain writes. While open, fd 0 is /dev/null and fd 1 is
    stderr (children never touch the protocol stream).

    ``prefix``: bytes already read from a piped stdin (``eof``: and the end
    of it), read before anything else."""
    loop = asyncio.get_running_loop()
    stack = contextlib.AsyncExitStack()
    async with stack:
        wire_in = os.dup(0)
        rfile = os.fdopen(wire_in, "rb", buffering=0 if _is_pipe(0) else -1)
        stack.callback(rfile.close)
        if _is_pipe(0):
            reader = asyncio.StreamReader(limit=LINE_LIMIT, loop=loop)
            if prefix:
                reader.feed_data(prefix)
            if eof:
                reader.feed_eof()
            else:
                r_transport, _ = await loop.connect_read_pipe(
                    lambda: asyncio.StreamReaderProtocol(reader, loop=loop), rfile
                )
                stack.callback(r_transport.close)
            readline: Readline = reader.readline
        else:

            async def read_in_thread() -> bytes:
                return await asyncio.to_thread(rfile.readline)

            readline = read_in_thread
        assert not prefix or _is_pipe(0), "a prefix comes from a piped stdin"
        writer: LineWriter | FdWriter
        if _is_pipe(1):
            wfile = os.fdopen(os.dup(1), "wb", buffering=0)
            w_transport, w_protocol = await loop.connect_write_pipe(asyncio.streams.FlowControlMixin, wfile)
            stream = asyncio.StreamWriter(w_transport, w_protocol, None, loop)
            stack.callback(w_transport.close)
            stack.push_async_callback(_drain_quietly, stream)
            writer = LineWriter(stream)
        else:
            out_fd = os.dup(1)
            stack.callback(os.close, out_fd)
            writer = FdWriter(out_fd)
        # fd 0 -> /dev/null and fd 1 -> stderr while serving
        _divert(stack, 0, os.open(os.devnull, os.O_RDONLY))
        _divert(stack, 1, os.dup(2))
        yield readline, writer


def sdk_streams(
    readline: Readline, raw: LineWriter | FdWriter, drain: Drain | None = None, tap: Tap | None = None
) -> tuple[LineReader, LineWriter | FdWriter | TapWriter]:
    """The reader and writer the SDK's ``stdio_server`` is given: lines the
    SDK cannot parse are answered here through the same writer (one whole
    line per write: never interleaved); ``tap`` watches the handshake
    (:mod:`tooldeck.mcp.handshake_front`)."""
    writer: LineWriter | FdWriter | TapWriter = TapWriter(raw, tap) if tap is not None else raw

    async def reject(text: str) -> None:
        await writer.write(error_reply(text) + "\n")
        await writer.flush()

    return LineReader(readline, drain, reject, tap), writer


@contextlib.asynccontextmanager
async def open_stdio(
    drain: Drain | None = None, prefix: bytes = b"", eof: bool = False, tap: Tap | None = None
) -> AsyncIterator[tuple[LineReader, LineWriter | FdWriter | TapWriter]]:
    """:func:`open_wire` as the SDK's streams (:func:`sdk_streams`)."""
    async with open_wire(prefix, eof) as (readline, raw):
        yield sdk_streams(readline, raw, drain, tap)


async def _drain_quietly(stream: asyncio.StreamWriter) -> None:
    with contextlib.suppress(Exception):
        await stream.drain()


def _divert(stack: contextlib.AsyncExitStack, fd: int, replacement: int) -> None:
    saved = os.dup(fd)
    os.dup2(replacement, fd)
    os.close(replacement)

    def restore() -> None:
        os.dup2(saved, fd)
        os.close(saved)

    stack.callback(restore)
