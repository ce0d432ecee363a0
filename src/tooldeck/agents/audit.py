"""The audit of tool calls this process served: who called what, how it ended, how long it took.

Kept in memory (the last :data:`KEEP` calls) rather than the store: a write
per call would cost more than a small ``read_file`` itself, and the dashboard
that shows it runs in the same process. Agent sessions' calls are also in
their transcripts, which persist.
"""

from __future__ import annotations

import json
import threading
import time
from collections import deque
from collections.abc import Callable
from dataclasses import asdict, dataclass
from typing import TYPE_CHECKING, Any

from tooldeck.core.toolbox import Toolbox, ToolResult

if TYPE_CHECKING:
    from tooldeck.runtime import Runtime

KEEP = 2000
ARGS_CHARS = 300


@dataclass(frozen=True, slots=True)
class AuditEntry:
    seq: int
    at: float
    source: str
    tool: str
    arguments: str
    ok: bool
    code: str | None
    ms: float

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)


def _args_text(raw: Any) -> str:
    if raw is None:
        return ""
    if isinstance(raw, bytes):
        raw = raw.decode("utf-8", "replace")
    text = raw if isinstance(raw, str) else json.dumps(raw, ensure_ascii=False, default=str)
    return text if len(text) <= ARGS_CHARS else text[: ARGS_CHARS - 1] + "…"


class Audit:
    def __init__(self, rt: Runtime | None = None) -> None:
        self._entries: deque[AuditEntry] = deque(maxlen=KEEP)
        self._lock = threading.Lock()
        self._seq = 0

    def watch(self, box: Toolbox, source: str | Callable[[], str]) -> None:
        """Record every call of ``box``; ``source`` names the caller (or computes it per call)."""

        def observe(res: ToolResult, raw: Any, seconds: float) -> None:
            who = source() if callable(source) else source
            code = res.error.code if res.error is not None else None
            args, ms = _args_text(raw), round(seconds * 1000, 2)
            with self._lock:
                self._seq += 1
                self._entries.append(AuditEntry(self._seq, time.time(), who, res.name, args, code is None, code, ms))

        box.observers.append(observe)

    def recent(self, limit: int = 200) -> list[AuditEntry]:
        with self._lock:
            items = list(self._entries)
        return items[-limit:][::-1]


def audit_log(rt: Runtime) -> Audit:
    return rt.service("audit", Audit)
