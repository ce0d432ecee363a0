"""A scripted OpenAI-compatible HTTP server on 127.0.0.1 for model-backed tests.

Why a real server and not a patched client: the code under test uses the
``openai`` package end to end (HTTP, SSE parsing, error mapping, retries), in
the test process or in a ``python -m tooldeck run`` subprocess. The server
replays replies pushed by the test, rendering each for whichever API the
request used (``/v1/chat/completions`` or ``/v1/responses``) and streamed
(SSE) or not, and records every request body for assertions.

    with ScriptedOpenAI() as server:
        server.push(Reply.call(("read_file", {"file": "a.txt"})), Reply.answer("done"))
        env = {"OPENAI_BASE_URL": server.url, "OPENAI_API_KEY": "test"}

A reply may carry ``when=`` (a predicate on the request body): the server
serves the first queued reply whose predicate accepts the request, so
parallel sub-conversations (agent tools, fork) can be scripted by content.
"""

from __future__ import annotations

import itertools
import json
import threading
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

Predicate = Callable[[dict[str, Any]], bool]
_ids = itertools.count(1)


def send_json(
    handler: BaseHTTPRequestHandler, payload: dict[str, Any], status: int = 200, headers: dict[str, str] | None = None
) -> None:
    """Answer ``handler``'s request with ``payload`` as JSON (the scripted servers share it)."""
    data = json.dumps(payload).encode()
    handler.send_response(status)
    handler.send_header("content-type", "application/json")
    handler.send_header("content-length", str(len(data)))
    for k, v in (headers or {}).items():
        handler.send_header(k, v)
    handler.end_headers()
    handler.wfile.write(data)


def send_sse(handler: BaseHTTPRequestHandler, frames: Iterator[str], delay: float = 0.0) -> None:
    """Stream ``frames`` as server-sent events, then close; a client that hung up ends it quietly."""
    handler.send_response(200)
    handler.send_header("content-type", "text/event-stream")
    handler.send_header("cache-control", "no-cache")
    handler.send_header("connection", "close")
    handler.end_headers()
    try:
        for frame in frames:
            handler.wfile.write(frame.encode())
            handler.wfile.flush()
            if delay:
                time.sleep(delay)
    except (BrokenPipeError, ConnectionResetError):  # the client cancelled (a timed-out run)
        pass
    handler.close_connection = True


@dataclass
class Reply:
    text: str = ""
    reasoning: str | None = None
    calls: list[tuple[str, str, str]] = field(default_factory=list)  # (call_id, name, arguments)
    status: int = 200
    headers: dict[str, str] = field(default_factory=dict)
    error_message: str = ""
    delay: float = 0.0
    gate: threading.Event | None = None  # the reply waits for it (see ScriptedOpenAI.gate)
    when: Predicate | None = None
    usage: tuple[int, int] | None = (11, 7)  # None: the reply carries no usage (as many local servers)
    chunk_delay: float = 0.0  # seconds between streamed chunks (a slow model, to watch it stream)
    # streamed text stops before each character offset until its event is set (``ScriptedOpenAI.gate``):
    # a test sees the reply mid-stream for as long as it needs, whatever the machine's load
    holds: tuple[tuple[int, threading.Event], ...] = ()

    @classmethod
    def answer(cls, text: str, *, reasoning: str | None = None, when: Predicate | None = None) -> Reply:
        return cls(text=text, reasoning=reasoning, when=when)

    @classmethod
    def call(cls, *calls: tuple[str, Any], text: str = "", when: Predicate | None = None) -> Reply:
        """Tool calls ``(name, arguments)``; a dict is JSON-encoded, a str sent as is."""
        out = []
        for name, args in calls:
            raw = args if isinstance(args, str) else json.dumps(args)
            out.append((f"call_{next(_ids)}", name, raw))
        return cls(text=text, calls=out, when=when)

    @classmethod
    def error(cls, status: int, message: str = "", *, headers: dict[str, str] | None = None) -> Reply:
        return cls(status=status, error_message=message or f"scripted {status}", headers=headers or {})


def last_user_text(body: dict[str, Any]) -> str:
    """The text of the last user message of a request (either API)."""
    msgs = body.get("messages") or body.get("input") or []
    for m in reversed(msgs):
        if isinstance(m, dict) and m.get("role") == "user":
            c = m.get("content")
            if isinstance(c, str):
                return c
            return "".join(p.get("text", "") for p in c if isinstance(p, dict))
    return ""


# rendering -------------------------------------------------------------------------
def _chat_body(r: Reply, model: str) -> dict[str, Any]:
    msg: dict[str, Any] = {"role": "assistant", "content": r.text or None}
    if r.reasoning:
        msg["reasoning_content"] = r.reasoning
    if r.calls:
        msg["tool_calls"] = [
            {"id": cid, "type": "function", "function": {"name": n, "arguments": a}} for cid, n, a in r.calls
        ]
    return {
        "id": f"chatcmpl-{next(_ids)}",
        "object": "chat.completion",
        "created": int(time.time()),
        "model": model,
        "choices": [{"index": 0, "message": msg, "finish_reason": "tool_calls" if r.calls else "stop"}],
        **({"usage": _chat_usage(r.usage)} if r.usage else {}),
    }


def _chat_usage(u: tuple[int, int]) -> dict[str, int]:
    return {"prompt_tokens": u[0], "completion_tokens": u[1], "total_tokens": sum(u)}


def _chunks(text: str, n: int = 3) -> list[str]:
    return [text[i : i + n] for i in range(0, len(text), n)] or []


def _text_pieces(r: Reply) -> Iterator[str]:
    """``r.text`` in streamed chunks, waiting at each of ``r.holds`` for its event."""
    holds = sorted(r.holds, key=lambda h: h[0])
    done = 0
    for piece in _chunks(r.text):
        while holds and holds[0][0] <= done:
            holds.pop(0)[1].wait()
        yield piece
        done += len(piece)


def _chat_stream(r: Reply, model: str) -> Iterator[str]:
    base = {"id": f"chatcmpl-{next(_ids)}", "object": "chat.completion.chunk", "created": 0, "model": model}

    def chunk(delta: dict[str, Any], finish: str | None = None) -> str:
        return json.dumps({**base, "choices": [{"index": 0, "delta": delta, "finish_reason": finish}]})

    yield chunk({"role": "assistant"})
    for piece in _chunks(r.reasoning or ""):
        yield chunk({"reasoning_content": piece})
    for piece in _text_pieces(r):
        yield chunk({"content": piece})
    for i, (cid, name, args) in enumerate(r.calls):
        yield chunk({"tool_calls": [{"index": i, "id": cid, "type": "function", "function": {"name": name}}]})
        for piece in _chunks(args, 7):
            yield chunk({"tool_calls": [{"index": i, "function": {"arguments": piece}}]})
    yield chunk({}, "tool_calls" if r.calls else "stop")
    if r.usage:
        yield json.dumps({**base, "choices": [], "usage": _chat_usage(r.usage)})
    yield "[DONE]"


def _responses_body(r: Reply, model: str) -> dict[str, Any]:
    output: list[dict[str, Any]] = []
    if r.reasoning:
        output.append(
            {"type": "reasoning", "id": f"rs_{next(_ids)}", "summary": [{"type": "summary_text", "text": r.reasoning}]}
        )
    if r.text:
        output.append(
            {
                "type": "message",
                "id": f"msg_{next(_ids)}",
                "role": "assistant",
                "status": "completed",
                "content": [{"type": "output_text", "text": r.text, "annotations": []}],
            }
        )
    for cid, name, args in r.calls:
        output.append(
            {"type": "function_call", "id": f"fc_{next(_ids)}", "call_id": cid, "name": name, "arguments": args,
             "status": "completed"}
        )  # fmt: skip
    return {
        "id": f"resp_{next(_ids)}",
        "object": "response",
        "created_at": int(time.time()),
        "model": model,
        "status": "completed",
        "output": output,
        "parallel_tool_calls": True,
        "tool_choice": "auto",
        "tools": [],
        **({"usage": {
            "input_tokens": r.usage[0],
            "output_tokens": r.usage[1],
            "total_tokens": sum(r.usage),
            "input_tokens_details": {"cached_tokens": 0},
            "output_tokens_details": {"reasoning_tokens": 0},
        }} if r.usage else {}),
    }  # fmt: skip


def _responses_stream(r: Reply, model: str) -> Iterator[tuple[str, str]]:
    full = _responses_body(r, model)
    seq = itertools.count()
    created = {**full, "status": "in_progress", "output": []}
    yield (
        "response.created",
        json.dumps({"type": "response.created", "sequence_number": next(seq), "response": created}),
    )
    for idx, item in enumerate(full["output"]):
        yield (
            "response.output_item.added",
            json.dumps(
                {"type": "response.output_item.added", "sequence_number": next(seq), "output_index": idx, "item": item}
            ),
        )
        if item["type"] == "reasoning":
            for piece in _chunks(r.reasoning or ""):
                ev = {"type": "response.reasoning_summary_text.delta", "sequence_number": next(seq),
                      "item_id": item["id"], "output_index": idx, "summary_index": 0, "delta": piece}  # fmt: skip
                yield ev["type"], json.dumps(ev)
        if item["type"] == "message":
            for piece in _text_pieces(r):
                ev = {"type": "response.output_text.delta", "sequence_number": next(seq), "item_id": item["id"],
                      "output_index": idx, "content_index": 0, "delta": piece, "logprobs": []}  # fmt: skip
                yield ev["type"], json.dumps(ev)
        yield (
            "response.output_item.done",
            json.dumps(
                {"type": "response.output_item.done", "sequence_number": next(seq), "output_index": idx, "item": item}
            ),
        )
    yield (
        "response.completed",
        json.dumps({"type": "response.completed", "sequence_number": next(seq), "response": full}),
    )


# the server ------------------------------------------------------------------------
class ScriptedOpenAI:
    """``default``: the reply to any request no queued reply accepts (served at
    once), for tests that only need a model to answer, such as the fuzzer; without
    it such a request waits for a push, then gets a 500."""

    def __init__(self, default: Reply | None = None) -> None:
        self.default = default
        self._gates: list[threading.Event] = []
        self._queue: list[Reply] = []
        self._lock = threading.Condition()
        self.requests: list[dict[str, Any]] = []  # each: {"path", "body", "headers"}
        self._httpd = ThreadingHTTPServer(("127.0.0.1", 0), self._handler())
        self._httpd.daemon_threads = True
        self._thread = threading.Thread(target=self._httpd.serve_forever, daemon=True)

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self._httpd.server_address[1]}/v1"

    def start(self) -> ScriptedOpenAI:
        self._thread.start()
        return self

    def gate(self) -> threading.Event:
        """An event a reply waits for before it is sent (``Reply(..., gate=g)``):
        a test holds a run inside its model call for exactly as long as it
        needs, instead of guessing a delay long enough for a loaded machine.
        Every gate opens when the server stops."""
        g = threading.Event()
        self._gates.append(g)
        return g

    def stop(self) -> None:
        for g in self._gates:
            g.set()
        self._httpd.shutdown()
        self._httpd.server_close()

    def __enter__(self) -> ScriptedOpenAI:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()

    def push(self, *replies: Reply) -> None:
        with self._lock:
            self._queue.extend(replies)
            self._lock.notify_all()

    @property
    def pending(self) -> int:
        with self._lock:
            return len(self._queue)

    def bodies(self) -> list[dict[str, Any]]:
        return [r["body"] for r in self.requests]

    def _take(self, body: dict[str, Any], wait: float = 5.0) -> Reply | None:
        deadline = time.monotonic() + wait
        with self._lock:
            while True:
                for i, r in enumerate(self._queue):
                    if r.when is None or r.when(body):
                        return self._queue.pop(i)
                if self.default is not None:
                    return self.default
                left = deadline - time.monotonic()
                if left <= 0:
                    return None
                self._lock.wait(left)

    def _handler(self) -> type[BaseHTTPRequestHandler]:
        server = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def log_message(self, *args: Any) -> None:
                return None

            def do_POST(self) -> None:
                length = int(self.headers.get("content-length") or 0)
                body = json.loads(self.rfile.read(length) or b"{}")
                with server._lock:
                    server.requests.append({"path": self.path, "body": body, "headers": dict(self.headers)})
                reply = server._take(body)
                if reply is None:
                    return self._json(500, {"error": {"message": "scripted server: no reply queued for this request"}})
                if reply.gate is not None:
                    reply.gate.wait()
                if reply.delay:
                    time.sleep(reply.delay)
                if reply.status != 200:
                    err = {"error": {"message": reply.error_message, "type": "scripted", "code": str(reply.status)}}
                    return self._json(reply.status, err, reply.headers)
                model = str(body.get("model", "scripted"))
                responses = self.path.rstrip("/").endswith("/responses")
                if not body.get("stream"):
                    for _, held in reply.holds:  # the whole text at once: after every hold
                        held.wait()
                    return self._json(200, _responses_body(reply, model) if responses else _chat_body(reply, model))
                if responses:
                    frames = (f"event: {ev}\ndata: {data}\n\n" for ev, data in _responses_stream(reply, model))
                    return self._sse(frames, reply.chunk_delay)
                return self._sse((f"data: {data}\n\n" for data in _chat_stream(reply, model)), reply.chunk_delay)

            def _json(self, status: int, payload: dict[str, Any], headers: dict[str, str] | None = None) -> None:
                send_json(self, payload, status, headers)

            def _sse(self, frames: Iterator[str], delay: float = 0.0) -> None:
                send_sse(self, frames, delay)

        return Handler
