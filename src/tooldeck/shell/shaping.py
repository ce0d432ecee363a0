"""Output shaping: bounded capture, UTF-8 repair, terminal escapes, secret redaction.

Why head *and* tail: the start of a build log says what ran, its end says why
it failed; the middle is what a model can most afford to lose. The capture
keeps ``limit/2`` bytes of each in fixed buffers however much arrives (a
100 MB flood costs the same memory as 100 KB) and counts what it dropped.
"""

from __future__ import annotations

import codecs
import re
from collections.abc import Iterable

REDACTED = "[REDACTED]"
# CSI, OSC (terminated by BEL or ST), other two-byte escapes, and C0/C1 controls but \t and \n.
_ESCAPES = re.compile(
    r"\x1b\[[0-?]*[ -/]*[@-~]"
    r"|\x1b\][^\x07\x1b]*(?:\x07|\x1b\\)?"
    r"|\x1b[PX^_][^\x1b]*(?:\x1b\\)?"
    r"|\x1b[ -/]*[0-~]"
    r"|\x1b"
    r"|[\x00-\x08\x0b\x0c\x0e-\x1f\x7f\x80-\x9f]"
)


class Capture:
    """The first and last ``limit/2`` bytes of a stream, and how many were dropped."""

    __slots__ = ("_head", "_head_cap", "_tail", "_tail_cap", "total")

    def __init__(self, limit: int) -> None:
        self._head_cap = limit // 2
        self._tail_cap = limit - self._head_cap
        self._head = bytearray()
        self._tail = bytearray()
        self.total = 0

    def add(self, data: bytes) -> None:
        self.total += len(data)
        room = self._head_cap - len(self._head)
        if room > 0:
            self._head += data[:room]
            data = data[room:]
        if not data:
            return
        if len(data) >= self._tail_cap:
            self._tail[:] = data[-self._tail_cap :]
        else:
            self._tail += data
            excess = len(self._tail) - self._tail_cap
            if excess > 0:
                del self._tail[:excess]

    @property
    def dropped(self) -> int:
        return self.total - len(self._head) - len(self._tail)

    @property
    def truncated(self) -> bool:
        return self.dropped > 0

    def parts(self) -> tuple[bytes, bytes]:
        return bytes(self._head), bytes(self._tail)


def clean_text(text: str) -> str:
    """Terminal escapes and control characters removed; CRLF and lone CR become newlines."""
    text = text.replace("\r\n", "\n").replace("\r", "\n")
    return _ESCAPES.sub("", text)


def decode(data: bytes) -> str:
    """Bytes → text; invalid UTF-8 becomes U+FFFD (never an exception)."""
    return data.decode("utf-8", errors="replace")


class Redactor:
    """Replaces secret values and patterns with ``[REDACTED]``."""

    def __init__(self, values: Iterable[str] = (), patterns: Iterable[str] = ()) -> None:
        alts = [re.escape(v) for v in sorted({v for v in values if len(v) >= 4}, key=len, reverse=True)]
        alts += [f"(?:{p})" for p in patterns]
        self._re = re.compile("|".join(alts)) if alts else None

    def __call__(self, text: str) -> str:
        return self._re.sub(REDACTED, text) if self._re is not None else text


def render_capture(cap: Capture, redact: Redactor) -> str:
    """The captured bytes as clean, redacted text with the elision marked."""
    head, tail = cap.parts()
    if not cap.truncated:
        return redact(clean_text(decode(head + tail)))
    # cut at line boundaries where one is near, so no half line is shown
    cut = head.rfind(b"\n")
    if cut >= len(head) // 2:
        head = head[: cut + 1]
    start = tail.find(b"\n")
    if 0 <= start < len(tail) // 2:
        tail = tail[start + 1 :]
    dropped = cap.total - len(head) - len(tail)
    marker = f"\n[... {dropped} bytes elided ...]\n"
    return redact(clean_text(decode(head))) + marker + redact(clean_text(decode(tail)))


class StreamDecoder:
    """Incremental decode + clean + redact for progress chunks (a multi-byte
    character split across reads is held until complete)."""

    def __init__(self, redact: Redactor) -> None:
        self._dec = codecs.getincrementaldecoder("utf-8")(errors="replace")
        self._redact = redact

    def feed(self, data: bytes) -> str:
        return self._redact(clean_text(self._dec.decode(data)))
