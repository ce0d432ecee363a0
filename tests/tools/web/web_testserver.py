"""A local web server for the web tests (127.0.0.1 only) and the settings that let a Runtime reach it.

The server counts the requests per path and the body bytes it managed to
write, so tests can prove a cache hit never reached it and an oversized body
was not downloaded whole."""

from __future__ import annotations

import gzip
import time
from collections import Counter
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from urllib.parse import unquote

PAGE = """<!doctype html>
<html><head><meta charset="utf-8"><title>Widget manual</title>
<style>body { color: red; }</style><script>var tracking = "SCRIPT-TEXT";</script></head>
<body>
<header class="site-header"><a href="/">HEADER-HOME</a> <a href="/login">Log in</a></header>
<nav><ul><li><a href="/docs">NAV-DOCS</a></li><li><a href="/blog">NAV-BLOG</a></li></ul></nav>
<div id="cookie-banner" class="cookie-consent">COOKIE-TEXT we use cookies <button>Accept</button></div>
<div class="layout">
<aside class="sidebar">SIDEBAR-TEXT</aside>
<main>
<h1>Widget manual</h1>
<p>Read the <a href="https://example.org/spec">widget spec</a> first.</p>
<h2>Sizes</h2>
<table>
<thead><tr><th>Size</th><th>Width</th></tr></thead>
<tbody><tr><td>small</td><td>10</td></tr><tr><td>large</td><td>20</td></tr></tbody>
</table>
<h2>Code</h2>
<pre><code class="language-python">def widget(size):
    return size * 2
</code></pre>
<div class="highlight highlight-source-rust"><pre>fn main() { println!("hi"); }</pre></div>
<pre lang="go"><code>package main</code></pre>
</main>
<div class="related">OUTSIDE-MAIN-TEXT</div>
</div>
<footer>FOOTER-TEXT copyright</footer>
</body></html>
"""

RAW_FILE = "".join(f"line_{n} = {n}\n" for n in range(1, 31))


class _Handler(BaseHTTPRequestHandler):
    server: Server  # type: ignore[assignment]

    def log_message(self, *args: object) -> None:  # quiet
        pass

    def _send(self, status: int, body: bytes, ctype: str | None, extra: dict[str, str] | None = None) -> None:
        self.send_response(status)
        if ctype:
            self.send_header("Content-Type", ctype)
        self.send_header("Content-Length", str(len(body)))
        for k, v in (extra or {}).items():
            self.send_header(k, v)
        self.end_headers()
        self.wfile.write(body)

    def _redirect(self, location: str) -> None:
        self._send(302, b"", "text/plain", {"Location": location})

    def do_GET(self) -> None:
        path = self.path.split("?", 1)[0]
        self.server.hits[path] += 1
        self.server.host_headers.append(self.headers.get("Host", ""))
        if path == "/page":
            self._send(200, PAGE.encode(), "text/html; charset=utf-8")
        elif path == "/plain":
            self._send(200, b"just plain text\nsecond line\n", "text/plain; charset=utf-8")
        elif path == "/md":
            self._send(200, b"# Heading\n\n- item\n", "text/markdown")
        elif path == "/json":
            self._send(200, b'{"b": [1, 2], "a": "x"}', "application/problem+json")
        elif path == "/latin1":
            self._send(
                200, "<html><body><p>caf\xe9</p></body></html>".encode("latin-1"), "text/html; charset=iso-8859-1"
            )
        elif path == "/binary":
            self._send(200, b"\x89PNG\r\n\x1a\n" + b"\x00" * 100_000, "image/png")
        elif path == "/octet":
            self._send(200, b"\x00\x01\x02" * 10, "application/octet-stream")
        elif path == "/declared-big":
            self._send(200, b"<html>" + b"x" * 300_000 + b"</html>", "text/html")
        elif path == "/gzip":
            self._send(200, gzip.compress(PAGE.encode()), "text/html", {"Content-Encoding": "gzip"})
        elif path == "/gzip-bomb":  # 20 MB of spaces in a few KB, twice compressed
            self._send(200, self.server.bomb, "text/html", {"Content-Encoding": "gzip, gzip"})
        elif path == "/gzip-big":
            self._send(
                200, gzip.compress(b"<p>" + b"z" * 5_000_000 + b"</p>"), "text/html", {"Content-Encoding": "gzip"}
            )
        elif path == "/endless":
            self._endless()
        elif path == "/loop":
            self._redirect("/loop")
        elif path.startswith("/chain/"):
            n = int(path.rsplit("/", 1)[1])
            self._redirect(f"/chain/{n + 1}")
        elif path == "/to-page":
            self._redirect("/page")
        elif path == "/to-metadata":
            self._redirect("http://169.254.169.254/latest/meta-data/")
        elif path == "/to":  # /to?u=URL: a redirect to any URL a test names
            self._redirect(unquote(self.path.split("?u=", 1)[1]))
        elif path == "/to-loopback":
            self._redirect(f"http://127.0.0.2:{self.server.server_port}/page")
        elif path == "/slow":
            time.sleep(2.5)
            self._send(200, b"late", "text/plain")
        elif path == "/missing":
            self._send(404, b"not here", "text/plain")
        elif path == "/long":
            body = "".join(f"<h2>Section {i}</h2><p>{'word ' * 60}{i}</p>" for i in range(1500))
            self._send(200, f"<html><body><main>{body}</main></body></html>".encode(), "text/html")
        elif path.startswith("/raw/"):
            self._send(200, RAW_FILE.encode(), "text/plain; charset=utf-8")
        else:
            self._send(404, b"no route", "text/plain")

    def _endless(self) -> None:
        # no Content-Length: the client can only stop it by closing
        self.send_response(200)
        self.send_header("Content-Type", "text/html")
        self.end_headers()
        chunk = b"<p>" + b"y" * 65_536 + b"</p>\n"
        try:
            for _ in range(800):  # ~50 MB if nobody stops it
                self.wfile.write(chunk)
                self.server.written["/endless"] += len(chunk)
        except OSError:
            pass
        self.close_connection = True


class Server(ThreadingHTTPServer):
    daemon_threads = True

    def __init__(self) -> None:
        super().__init__(("127.0.0.1", 0), _Handler)
        self.hits: Counter[str] = Counter()
        self.written: Counter[str] = Counter()
        self.host_headers: list[str] = []
        # built once, not per request: compressing takes a while on a loaded machine
        self.gzip_big = gzip.compress(b"<p>" + b"z" * 5_000_000 + b"</p>")
        self.bomb = gzip.compress(gzip.compress(b" " * 20_000_000))

    def handle_error(self, request: object, client_address: object) -> None:
        pass  # a client hanging up mid-body is what several tests do on purpose

    def url(self, path: str) -> str:
        return f"http://127.0.0.1:{self.server_port}{path}"


def web_settings(server: Server, **over: object) -> dict[str, object]:
    base: dict[str, object] = {
        "allow_private_hosts": ["127.0.0.1"],
        "github_raw_base": server.url("/raw"),
        "read_timeout": 5.0,
        "total_timeout": 15.0,
        "max_bytes": 200_000,
        "max_redirects": 4,
    }
    base.update(over)
    return base
