"""Answering the MCP handshake over stdio before the SDK is imported.

A client spawns ``tooldeck serve`` and sends ``initialize`` at once; the SDK
takes ~0.65 s to import and the catalog ~0.4 s more. :class:`Front` runs on
the main thread while a start-up thread does that work: it reads stdin with
the standard library, answers ``initialize`` (and then plain ``tools/list``,
``resources/templates/list`` and ``prompts/list`` requests)
from the :mod:`handshake cache <tooldeck.mcp.handshake_cache>` and keeps
every byte it read. When the start-up thread is done, those bytes are handed
to the SDK's reader first, so the SDK sees the whole conversation from its
first line: it processes the ``initialize`` itself (its session state is then
exactly that of a normal start), and :class:`Tap` swallows its answers to the
requests the front already answered (same id).

Nothing is answered that the SDK would not answer the same way: the front
only takes a first line that is a well-formed ``initialize`` of the shape the
SDK accepts, with a cached result for the version the SDK would negotiate;
anything else (no cache, another first request, a malformed line) stops the
front, and the SDK answers it as it always did, only later. The cache is
written from the SDK's own answers (:class:`Tap` captures them), and a cached
``tools/list`` that turns out stale is corrected with
``notifications/tools/list_changed``.

Only the stdio host takes this path, and only when stdin is a pipe or socket
(what an MCP client gives its server); HTTP clients connect to a server that
is already up.
"""

from __future__ import annotations

import json
import logging
import os
import re
import select
import sys
import threading
from collections.abc import Callable
from typing import Any, TypeVar

from tooldeck.mcp.handshake_cache import HandshakeCache

log = logging.getLogger("tooldeck.mcp")

T = TypeVar("T")
_CAPABILITIES = {"experimental", "sampling", "elicitation", "roots", "extensions", "tasks"}
_CLIENT_INFO = {"name", "version", "title", "description", "websiteUrl"}
LIST_CHANGED = json.dumps({"jsonrpc": "2.0", "method": "notifications/tools/list_changed"})
# the lists a client asks for right after initialize, answered from the cache when
# their answer is a function of the cache key (resources/list walks the files of
# the roots: it is the SDK's to answer)
LISTS = ("tools/list", "resources/templates/list", "prompts/list")
_LIST_BYTES = tuple(f'"{m}"'.encode() for m in LISTS)


def _plain_id(value: object) -> bool:
    return isinstance(value, str | int) and not isinstance(value, bool)


def id_token(value: object) -> str:
    """A request id as one comparable string (``1`` and ``"1"`` differ)."""
    return json.dumps(value)


def plain_initialize(message: object) -> dict[str, Any] | None:
    """The params of ``message`` when it is an ``initialize`` request of the
    plain shape the SDK's ``InitializeRequestParams`` certainly accepts; None
    for anything unusual (which then goes to the SDK, whose answer is right
    by definition)."""
    if not isinstance(message, dict) or set(message) != {"jsonrpc", "id", "method", "params"}:
        return None
    if message["jsonrpc"] != "2.0" or message["method"] != "initialize" or not _plain_id(message["id"]):
        return None
    params = message["params"]
    if not isinstance(params, dict) or not set(params) <= {"protocolVersion", "capabilities", "clientInfo", "_meta"}:
        return None
    caps, info = params.get("capabilities"), params.get("clientInfo")
    if not isinstance(params.get("protocolVersion"), str) or not isinstance(caps, dict) or not isinstance(info, dict):
        return None
    if not set(caps) <= _CAPABILITIES or not all(isinstance(v, dict) for v in caps.values()):
        return None
    roots = caps.get("roots", {})
    if not set(roots) <= {"listChanged"} or not isinstance(roots.get("listChanged", False), bool):
        return None
    if not set(info) <= _CLIENT_INFO or not {"name", "version"} <= set(info):
        return None
    if not all(isinstance(v, str) for v in info.values()) or not isinstance(params.get("_meta", {}), dict):
        return None
    return params


def _plain_list(message: object) -> bool:
    """A request of one of :data:`LISTS` for the first page (no cursor)."""
    if not isinstance(message, dict) or message.get("method") not in LISTS or not _plain_id(message.get("id")):
        return False
    if set(message) - {"jsonrpc", "id", "method", "params"} or message.get("jsonrpc") != "2.0":
        return False
    params = message.get("params")
    return params is None or (isinstance(params, dict) and set(params) <= {"_meta"})


def _reply(ident: object, result: dict[str, Any]) -> bytes:
    return (json.dumps({"jsonrpc": "2.0", "id": ident, "result": result}) + "\n").encode()


class Front:
    """Reads and answers stdin until the start-up work is done (see the module
    docstring). ``prefix`` is every byte read, for the SDK's reader; ``eof``
    whether stdin already ended; ``answered`` maps request ids answered here
    to (method, the cached result sent) for :class:`Tap`."""

    def __init__(self, cache: HandshakeCache, fd_in: int = 0, fd_out: int = 1) -> None:
        self.cache = cache
        self._in, self._out = fd_in, fd_out
        self.prefix = bytearray()
        self.eof = False
        self.answered: dict[str, tuple[str, dict[str, Any]]] = {}
        self.version: str | None = None  # negotiated here, when initialize was answered here
        self._scanned = 0
        self._stopped = False  # stop reading: the SDK answers everything from here on

    def run_while(self, work: Callable[[], T]) -> T:
        """Run ``work`` in a start-up thread and serve stdin meanwhile; returns
        (or raises) what ``work`` did."""
        wake_r, wake_w = os.pipe()
        box: dict[str, Any] = {}

        def target() -> None:
            try:
                box["result"] = work()
            except BaseException as exc:  # re-raised on the main thread
                box["error"] = exc
            finally:
                os.write(wake_w, b"x")

        switch = sys.getswitchinterval()
        sys.setswitchinterval(0.001)  # hand the GIL to a request that arrived within 1 ms, not 5
        thread = threading.Thread(target=target, name="tooldeck-startup", daemon=True)
        thread.start()
        try:
            while True:
                watch = [wake_r] if self._stopped or self.eof else [wake_r, self._in]
                ready, _, _ = select.select(watch, [], [])
                if wake_r in ready:
                    break
                chunk = os.read(self._in, 1 << 16)
                if not chunk:
                    self.eof = True
                    continue
                self.prefix += chunk
                self._process()
            thread.join()
        finally:
            sys.setswitchinterval(switch)
            os.close(wake_r)
            os.close(wake_w)
        if "error" in box:
            raise box["error"]
        return box["result"]  # type: ignore[no-any-return]

    def _process(self) -> None:
        while not self._stopped:
            end = self.prefix.find(b"\n", self._scanned)
            if end < 0:
                return
            line = bytes(self.prefix[self._scanned : end])
            self._scanned = end + 1
            if line.strip():
                self._line(line)

    def _line(self, line: bytes) -> None:
        first = self.version is None
        if not first and not any(m in line for m in _LIST_BYTES):
            return  # buffered for the SDK; only a first-page list of LISTS is answered here
        try:
            message = json.loads(line)
        except (ValueError, RecursionError):
            message = None
        if first:
            self._initialize(message)
        elif _plain_list(message):
            assert self.version is not None and isinstance(message, dict)
            key, method = id_token(message["id"]), message["method"]
            cached = self.cache.result(method, self.version)
            if cached is not None and key not in self.answered:
                self._send(_reply(message["id"], cached))
                self.answered[key] = (method, cached)

    def _initialize(self, message: object) -> None:
        params = plain_initialize(message)
        version = self.cache.negotiate(params["protocolVersion"]) if params is not None else None
        cached = self.cache.result("initialize", version) if version is not None else None
        if cached is None or cached.get("protocolVersion") != version:
            self._stopped = True  # the SDK answers this first line, and everything after it
            return
        assert isinstance(message, dict)
        self._send(_reply(message["id"], cached))
        self.answered[id_token(message["id"])] = ("initialize", cached)
        self.version = version

    def _send(self, data: bytes) -> None:
        view = memoryview(data)
        while view:
            view = view[os.write(self._out, view) :]


_HEAD_ID = re.compile(r'\{"jsonrpc":"2\.0","id":(-?\d+|"(?:[^"\\]|\\.)*"),"(result|error)":')


class Tap:
    """Watches the lines between the SDK and the client while the handshake
    is in question (a few lines after start; then it costs one ``if``).

    * Incoming: notes the id of the first ``initialize`` and the first
      first-page request of each of :data:`LISTS` (their answers are cached).
    * Outgoing: an answer to a request the front already answered is not
      sent again. It is compared with what the front sent: ``tools/list``
      that differs is followed by ``notifications/tools/list_changed`` (the
      client lists again and gets the real tools); any difference updates
      the cache for the next start. Answers to noted requests are stored.

    ``save`` persists the cache (the host runs it off the event loop)."""

    def __init__(self, cache: HandshakeCache, front: Front | None, save: Callable[[], None]) -> None:
        self.cache = cache
        self.answered = dict(front.answered) if front is not None else {}
        self.version = front.version if front is not None else None
        self._save = save
        self._noted: dict[str, str] = {}
        self._wanted = {"initialize", *LISTS}  # not yet seen incoming

    @property
    def active(self) -> bool:
        return bool(self._wanted or self._noted or self.answered)

    def incoming(self, text: str) -> None:
        if not self._wanted or ('"initialize"' not in text and not any(f'"{m}"' in text for m in self._wanted)):
            return
        try:
            message = json.loads(text)
        except (ValueError, RecursionError):
            return
        if not isinstance(message, dict) or not _plain_id(message.get("id")):
            return
        method = message.get("method")
        if method == "initialize" and method in self._wanted:
            self._wanted.discard(method)
            if plain_initialize(message) is not None:
                self._note(message["id"], method)
        elif method in self._wanted and _plain_list(message):
            self._wanted.discard(method)
            self._note(message["id"], method)

    def _note(self, ident: object, method: str) -> None:
        key = id_token(ident)
        if key not in self.answered:
            self._noted[key] = method

    def outgoing(self, text: str) -> list[str]:
        """The lines to write instead of ``text`` (usually ``[text]``)."""
        if not (self._noted or self.answered):
            return [text]
        m = _HEAD_ID.match(text)
        if m is None:
            return [text]
        key = id_token(json.loads(m.group(1)))
        if key in self.answered:
            method, sent = self.answered.pop(key)
            return self._settle(method, sent, text)
        method_noted = self._noted.pop(key, None)
        if method_noted is not None:
            self._capture(method_noted, text)
        return [text]

    def _result(self, text: str) -> dict[str, Any] | None:
        try:
            got = json.loads(text).get("result")
        except ValueError:
            return None
        return got if isinstance(got, dict) else None

    def _capture(self, method: str, text: str) -> None:
        result = self._result(text)
        if result is None:
            return
        if method == "initialize":
            self.version = result.get("protocolVersion") if isinstance(result.get("protocolVersion"), str) else None
        if self.version is not None:
            self.cache.record(method, self.version, result)
            self._save()

    def _settle(self, method: str, sent: dict[str, Any], text: str) -> list[str]:
        real = self._result(text)
        if real == sent:
            return []
        assert self.version is not None
        self.cache.record(method, self.version, real)  # None (an error) forgets the entry
        self._save()
        if method == "tools/list":
            log.info("tooldeck: the cached tool list was stale; sent tools/list_changed")
            return [LIST_CHANGED + "\n"]
        if method != "initialize":
            log.warning("tooldeck: the cached %s answer differed from the server's; cache updated", method)
            return []
        log.warning("tooldeck: the cached initialize result differed from the server's; cache updated")
        return []


def stdin_is_pipe() -> bool:
    """Whether fd 0 is a pipe or socket (what the front reads; a file or a
    terminal is left to the usual reader)."""
    import stat

    try:
        mode = os.fstat(0).st_mode
    except OSError:
        return False
    return stat.S_ISFIFO(mode) or stat.S_ISSOCK(mode)
