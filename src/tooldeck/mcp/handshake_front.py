"""The handshake cache's bookkeeping between the early front and the SDK.

The early front (:mod:`tooldeck.mcp.early`) answers ``initialize`` and the
lists a client sends right after it before the SDK is imported, from the
:mod:`handshake cache <tooldeck.mcp.handshake_cache>` or built by
:mod:`tooldeck.mcp.wire`. When the SDK takes the stream over it is replayed
``initialize`` and those list requests, so its session state is exactly
that of a normal start; :class:`Tap` swallows its answers to requests the
front already answered (same id), compares them with what the front sent
(a stale ``tools/list`` is corrected with ``notifications/tools/list_changed``)
and records them in the cache, which is thereby only ever written from the
SDK's own answers.

Only a first line that is a well-formed ``initialize`` of the shape the
SDK accepts (:func:`plain_initialize`) is answered early; anything else
goes to the SDK, whose answer is right by definition.
"""

from __future__ import annotations

import json
import logging
import os
import re
from collections.abc import Callable
from typing import Any

from tooldeck.mcp.handshake_cache import HandshakeCache

log = logging.getLogger("tooldeck.mcp")

_CAPABILITIES = {"experimental", "sampling", "elicitation", "roots", "extensions", "tasks"}
_CLIENT_INFO = {"name", "version", "title", "description", "websiteUrl"}
LIST_CHANGED = json.dumps({"jsonrpc": "2.0", "method": "notifications/tools/list_changed"})
# the lists a client asks for right after initialize, answered from the cache when
# their answer is a function of the cache key (resources/list walks the files of
# the roots: it is the SDK's to answer)
LISTS = ("tools/list", "resources/templates/list", "prompts/list")
_LIST_BYTES = tuple(f'"{m}"'.encode() for m in LISTS)


def plain_id(value: object) -> bool:
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
    if message["jsonrpc"] != "2.0" or message["method"] != "initialize" or not plain_id(message["id"]):
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


def plain_list(message: object, methods: tuple[str, ...] = LISTS) -> bool:
    """A request of one of ``methods`` (:data:`LISTS`: for the first page, no
    cursor) whose params hold at most ``_meta``."""
    if not isinstance(message, dict) or message.get("method") not in methods or not plain_id(message.get("id")):
        return False
    if set(message) - {"jsonrpc", "id", "method", "params"} or message.get("jsonrpc") != "2.0":
        return False
    params = message.get("params")
    return params is None or (isinstance(params, dict) and set(params) <= {"_meta"})


def reply(ident: object, result: dict[str, Any]) -> bytes:
    return (json.dumps({"jsonrpc": "2.0", "id": ident, "result": result}, ensure_ascii=False) + "\n").encode()


_HEAD_ID = re.compile(r'\{"jsonrpc":"2\.0","id":(-?\d+|"(?:[^"\\]|\\.)*"),"(result|error)":')
# mcp_types.CONNECTION_CLOSED (not imported: this module loads before the SDK; a test checks
# it): the SDK's answer to each request still running when its input ends (it cancels them)
CONNECTION_CLOSED = -32000


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

    def __init__(self, cache: HandshakeCache, front: Any, save: Callable[[], None]) -> None:
        self.cache = cache
        self.answered = dict(front.answered) if front is not None else {}
        self.version = front.version if front is not None else None
        self._save = save
        self.writes: list[Any] = []  # the saves in flight (the host awaits them before exiting)
        self._noted: dict[str, str] = {}
        self._wanted = {"initialize", *LISTS}  # not yet seen incoming

    def save_now(self) -> None:
        self._save()

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
        if not isinstance(message, dict) or not plain_id(message.get("id")):
            return
        method = message.get("method")
        if method == "initialize" and method in self._wanted:
            self._wanted.discard(method)
            if plain_initialize(message) is not None:
                self._note(message["id"], method)
        elif method in self._wanted and plain_list(message):
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
        if _cut_short(text):  # no answer of the server's: the cache keeps the entry the front sent
            return []
        real = self._result(text)
        if real == sent:
            if self.version is not None and self.cache.result(method, self.version) != real:
                self.cache.record(method, self.version, real)  # the front built it: the SDK agrees
                self._save()
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


def _cut_short(text: str) -> bool:
    """Whether ``text`` is the SDK's error for a request it cancelled because
    its input ended (``Connection closed``): a shutdown, not its answer."""
    head = _HEAD_ID.match(text)
    if head is None or head.group(2) != "error":
        return False
    try:
        error = json.loads(text).get("error")
    except ValueError:
        return False
    return isinstance(error, dict) and error.get("code") == CONNECTION_CLOSED


def stdin_is_pipe() -> bool:
    """Whether fd 0 is a pipe or socket (what the front reads; a file or a
    terminal is left to the usual reader)."""
    import stat

    try:
        mode = os.fstat(0).st_mode
    except OSError:
        return False
    return stat.S_ISFIFO(mode) or stat.S_ISSOCK(mode)


def plain_call(message: dict[str, Any]) -> bool:
    """A ``tools/call`` of the plain shape, without a progress token."""
    if set(message) - {"jsonrpc", "id", "method", "params"} or message.get("jsonrpc") != "2.0":
        return False
    params = message.get("params")
    if not isinstance(params, dict) or set(params) - {"name", "arguments", "_meta"}:
        return False
    meta = params.get("_meta", {})
    if not isinstance(meta, dict) or "progressToken" in meta:
        return False
    args = params.get("arguments")
    return isinstance(params.get("name"), str) and (args is None or isinstance(args, dict))


# Domains whose tools may ask the person (the shell's `ask`, through the SDK
# session's elicitation) or run agents: their calls wait for the SDK.
_SDK_DOMAINS = ("tooldeck.tools.shell", "tooldeck.tools.agents")


def early_domain(domain: object) -> bool:
    return isinstance(domain, str) and domain not in _SDK_DOMAINS


def early_tool(tool: Any, domain: object) -> bool:
    """A tool the front may run: it changes nothing (read-only), reaches
    nothing outside the machine (not open-world) and cannot ask the person."""
    if tool is None or not early_domain(domain):
        return False
    return bool(tool.annotations.read_only and not tool.annotations.open_world)
