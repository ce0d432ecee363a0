"""A TCP listener on 127.0.0.1 that records every connection and what it was sent.

Why raw sockets and not an HTTP server: the security tests check from the
listener's side that nothing reached it (not from tooldeck's own report), and
a proxy sink must also see a ``CONNECT``. Each connection gets ``reply``
(a whole HTTP response, or nothing) and is closed.
"""

from __future__ import annotations

import socket
import threading


class Listener:
    def __init__(self, reply: bytes = b"") -> None:
        self.reply = reply
        self.received: list[bytes] = []
        self._sock = socket.socket()
        self._sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        self._sock.bind(("127.0.0.1", 0))
        self._sock.listen(16)
        self._sock.settimeout(0.2)
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._serve, daemon=True)

    @property
    def port(self) -> int:
        return int(self._sock.getsockname()[1])

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}/v1"

    def _serve(self) -> None:
        while not self._stop.is_set():
            try:
                conn, _ = self._sock.accept()
            except TimeoutError:
                continue
            except OSError:
                return
            with conn:
                conn.settimeout(2)
                data = b""
                try:
                    while b"\r\n\r\n" not in data and len(data) < 65536:
                        chunk = conn.recv(65536)
                        if not chunk:
                            break
                        data += chunk
                    self.received.append(data)
                    if self.reply:
                        conn.sendall(self.reply)
                except OSError:
                    self.received.append(data)

    def __enter__(self) -> Listener:
        self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._stop.set()
        self._thread.join(5)
        self._sock.close()


def http_reply(status: int, body: bytes, reason: str = "Error", content_type: str = "application/json") -> bytes:
    head = (
        f"HTTP/1.1 {status} {reason}\r\nContent-Type: {content_type}\r\n"
        f"Content-Length: {len(body)}\r\nConnection: close\r\n\r\n"
    )
    return head.encode() + body
