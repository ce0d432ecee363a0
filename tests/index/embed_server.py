"""A scripted OpenAI-compatible embeddings server on 127.0.0.1 for the tests.

``POST /v1/embeddings`` answers with deterministic vectors: a hashed bag of
the words of each input (so similar texts get near vectors). It records what
it was sent; ``fail`` makes it answer 500."""

from __future__ import annotations

import hashlib
import json
import re
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

DIM = 48


def vector(text: str) -> list[float]:
    v = [0.0] * DIM
    for w in re.findall(r"[a-z0-9]+", text.lower()):
        h = int.from_bytes(hashlib.sha256(w.encode()).digest()[:4], "big")
        v[h % DIM] += 1.0 if h & 1 else -1.0
    return v


class EmbedServer:
    def __init__(self) -> None:
        self.requests: list[dict[str, Any]] = []
        self.fail = False
        server = self

        class Handler(BaseHTTPRequestHandler):
            def do_POST(self) -> None:
                body = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
                server.requests.append({"path": self.path, "auth": self.headers.get("Authorization"), **body})
                if server.fail or self.path != "/v1/embeddings":
                    self.send_response(500 if server.fail else 404)
                    self.end_headers()
                    self.wfile.write(b'{"error": "scripted failure"}')
                    return
                data = [{"index": i, "embedding": vector(t)} for i, t in enumerate(body["input"])]
                out = json.dumps({"object": "list", "data": data[::-1], "model": body["model"]}).encode()
                self.send_response(200)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(out)))
                self.end_headers()
                self.wfile.write(out)

            def log_message(self, *args: Any) -> None:
                return None

        self.httpd = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.url = f"http://127.0.0.1:{self.httpd.server_address[1]}/v1"
        self.thread = threading.Thread(target=self.httpd.serve_forever, daemon=True)

    def __enter__(self) -> EmbedServer:
        self.thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self.httpd.shutdown()
        self.httpd.server_close()

    def texts(self) -> list[str]:
        return [t for r in self.requests for t in r.get("input", [])]
