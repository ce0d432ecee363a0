"""A program run under a real pseudo-terminal, as a person's terminal runs it.

Why: a full-screen app's real surface is a tty (raw mode, escape sequences,
window size, key bytes); the headless pilot skips all of that. The child gets
a pty of a fixed size as its stdin/stdout/stderr; a reader thread collects
everything it writes; :meth:`screen_text` strips the escape sequences so a
test can look for words. Used by ``tests/tui/test_pty.py`` and
``bench/chat_start.py``.
"""

from __future__ import annotations

import fcntl
import os
import re
import signal
import struct
import subprocess
import termios
import threading
import time
from collections.abc import Sequence

_ANSI = re.compile(rb"\x1b\[[0-9;?<>=]*[ -/]*[@-~]|\x1b\][^\x07\x1b]*(\x07|\x1b\\)|\x1b[()][A-Za-z0-9]|\x1b[=>NOPMc78]")


class PtySession:
    def __init__(self, argv: Sequence[str], *, env: dict[str, str], cwd: str, rows: int = 36, cols: int = 110) -> None:
        master, slave = os.openpty()
        fcntl.ioctl(slave, termios.TIOCSWINSZ, struct.pack("HHHH", rows, cols, 0, 0))
        self.started = time.monotonic()
        self.proc = subprocess.Popen(
            list(argv), stdin=slave, stdout=slave, stderr=slave, cwd=cwd, close_fds=True, start_new_session=True,
            env={**env, "TERM": "xterm-256color", "COLUMNS": str(cols), "LINES": str(rows)},
        )  # fmt: skip
        os.close(slave)
        self.master = master
        self.output = bytearray()
        self.first_output: float | None = None
        self._lock = threading.Lock()
        self._marks: list[tuple[float, int]] = []  # (time, bytes so far) at each read
        self._reader = threading.Thread(target=self._read, daemon=True)
        self._reader.start()

    def _read(self) -> None:
        while True:
            try:
                chunk = os.read(self.master, 65536)
            except OSError:
                return
            if not chunk:
                return
            now = time.monotonic()
            with self._lock:
                if self.first_output is None:
                    self.first_output = now
                self.output += chunk
                self._marks.append((now, len(self.output)))

    def text(self) -> str:
        with self._lock:
            raw = bytes(self.output)
        return _ANSI.sub(b"", raw).decode("utf-8", "replace")

    def when(self, needle: str) -> float | None:
        """Seconds from the start until ``needle`` first appeared in the output, if it did."""
        with self._lock:
            raw, marks = bytes(self.output), list(self._marks)
        for t, size in marks:
            if needle in _ANSI.sub(b"", raw[:size]).decode("utf-8", "replace"):
                return t - self.started
        return None

    def wait_for(self, needle: str, timeout: float = 60.0) -> float:
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            if needle in self.text():
                return time.monotonic() - self.started
            if self.proc.poll() is not None:
                break
            time.sleep(0.02)
        raise AssertionError(f"{needle!r} never appeared; the screen said:\n{self.text()[-3000:]}")

    def type(self, text: str, delay: float = 0.01) -> None:
        for ch in text:
            os.write(self.master, ch.encode())
            time.sleep(delay)

    def wait_exit(self, timeout: float = 30.0) -> int:
        try:
            return self.proc.wait(timeout)
        finally:
            self.close()

    def close(self) -> None:
        if self.proc.poll() is None:
            os.killpg(self.proc.pid, signal.SIGTERM)
            try:
                self.proc.wait(10)
            except subprocess.TimeoutExpired:
                os.killpg(self.proc.pid, signal.SIGKILL)
                self.proc.wait(10)
        try:
            os.close(self.master)
        except OSError:
            pass
        self._reader.join(2)
