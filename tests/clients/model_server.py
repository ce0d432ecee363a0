"""A scripted model server on 127.0.0.1 that speaks each agent client's wire.

It listens on the loopback of the clients' own network namespace when given
one (:class:`tests.clients.netns.LoopbackOnly`).

The server plays one short agent session, whatever the client: the script is
a list of turns (a call of one of tooldeck's tools by its tooldeck name, then
a final answer). Which turn a request gets is read from the request itself
(how many tool results it carries back), so a client's retries and side
requests do not shift the script:

- a *main* request offers tooldeck's tools (the client's name for
  ``get_code_structure`` is among its tools); it gets the next turn, the tool
  name rewritten to the client's name for it (``mcp__tooldeck__read_file``,
  ``mcp_tooldeck_read_file``...);
- a *side* request (a title, a next-speaker check, a quota probe) gets a
  short text, or a JSON value following the schema it asks for.

Every request is recorded (``requests``) for the test's assertions.
"""

from __future__ import annotations

import json
import threading
from collections.abc import Iterator
from dataclasses import dataclass
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

from tests.clients import wire
from tests.clients.netns import LoopbackOnly
from tests.support.openai_server import send_json, send_sse

MARKER = "get_code_structure"  # a tooldeck tool no client has a built-in of the same name


@dataclass
class Seen:
    wire: str
    path: str
    body: dict[str, Any]
    main: bool


class ScriptedModel:
    def __init__(self, script: list[wire.Turn], netns: LoopbackOnly | None = None) -> None:
        """``netns``: listen on that namespace's loopback (where the client runs), not this one's."""
        self.script = script
        self.requests: list[Seen] = []
        self._lock = threading.Lock()
        make = lambda: ThreadingHTTPServer(("127.0.0.1", 0), self._handler())  # noqa: E731
        self._httpd = netns.inside(make) if netns is not None else make()
        self._httpd.daemon_threads = True
        self._thread = threading.Thread(target=self._httpd.serve_forever, daemon=True)

    @property
    def port(self) -> int:
        return int(self._httpd.server_address[1])

    @property
    def origin(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    def __enter__(self) -> ScriptedModel:
        self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._httpd.shutdown()
        self._httpd.server_close()

    # what the client sent ----------------------------------------------------------
    def main_requests(self) -> list[Seen]:
        with self._lock:
            return [r for r in self.requests if r.main]

    def tool_results(self) -> list[str]:
        """The tool results of the longest main request (the whole session's)."""
        mains = self.main_requests()
        if not mains:
            return []
        return max((wire.tool_results(r.wire, r.body) for r in mains), key=len)

    def first_turn_had_tooldeck(self) -> bool:
        """The first request that offered the model any tools offered tooldeck's: the client
        waited for the server (a client that does not sends its first turn without them)."""
        with self._lock:
            turns = [r for r in self.requests if wire.tool_names(r.wire, r.body)]
        return bool(turns) and turns[0].main

    def offered(self) -> list[str]:
        mains = self.main_requests()
        return wire.tool_names(mains[0].wire, mains[0].body) if mains else []

    # what the model answers --------------------------------------------------------
    def client_name(self, names: list[str], tool: str) -> str:
        """The client's name for tooldeck's ``tool``: exact, else prefixed by the server's name."""
        ours = [n for n in names if n == tool or (n.endswith(tool) and "tooldeck" in n)]
        ours.sort(key=lambda n: ("tooldeck" not in n, len(n)))
        return ours[0] if ours else tool

    def turn_for(self, kind: str, body: dict[str, Any]) -> tuple[bool, wire.Turn | dict[str, Any]]:
        names = wire.tool_names(kind, body)
        schema = wire.wants_json(kind, body)
        main = any(n.endswith(MARKER) for n in names) and schema is None
        if not main:
            return False, wire.sample_of(schema) if schema else "ok"
        done = len(wire.tool_results(kind, body))
        turn = self.script[min(done, len(self.script) - 1)]
        if isinstance(turn, str):
            return True, turn
        return True, (self.client_name(names, turn[0]), turn[1])

    def _handler(self) -> type[BaseHTTPRequestHandler]:
        server = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def log_message(self, *args: Any) -> None:
                return None

            def _body(self) -> dict[str, Any]:
                if self.headers.get("transfer-encoding", "").lower() == "chunked":
                    raw = b""
                    while (size := int(self.rfile.readline().strip() or b"0", 16)) > 0:
                        raw += self.rfile.read(size)
                        self.rfile.readline()
                    self.rfile.readline()
                else:
                    raw = self.rfile.read(int(self.headers.get("content-length") or 0))
                return json.loads(raw or b"{}")

            def do_GET(self) -> None:
                self._json({"object": "list", "data": [], "models": []})

            def do_POST(self) -> None:
                body, path = self._body(), self.path
                if path.split("?")[0].endswith("/count_tokens"):
                    return self._json({"input_tokens": 10})
                if ":countTokens" in path:
                    return self._json({"totalTokens": 10})
                kind = "responses" if "/responses" in path else "anthropic" if "/messages" in path else "gemini"
                main, turn = server.turn_for(kind, body)
                with server._lock:
                    server.requests.append(Seen(kind, path, body, main))
                model = str(body.get("model", "scripted"))
                if kind == "responses":
                    return self._sse(wire.render_responses(turn, model))  # type: ignore[arg-type]
                if kind == "anthropic":
                    if body.get("stream"):
                        return self._sse(wire.render_anthropic(turn, model))  # type: ignore[arg-type]
                    return self._json(wire.anthropic_message(turn, model))  # type: ignore[arg-type]
                if ":streamGenerateContent" in path:
                    return self._sse(wire.render_gemini(turn))
                return self._json(wire.gemini_response(turn))

            def _json(self, payload: dict[str, Any]) -> None:
                send_json(self, payload)

            def _sse(self, frames: Iterator[str]) -> None:
                send_sse(self, frames)

        return Handler
