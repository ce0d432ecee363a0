"""Appending the conversation to the ``.chatmd`` file, one element at a time.

Why each append rewrites the file through a temp file and a rename: the file
must stay valid whatever happens (Ctrl-C, a model error, a crash), so that
running it again resumes. A reader or a crash sees the file before or after
an element, never half of one. The rewrite goes through the workspace's
compare-and-swap write (:func:`tooldeck.workspace.atomic.write_file` under
the per-file lock): if another writer changed the file between our read and
our rename (a tool editing it, a second runner), the append is redone on the
new content instead of overwriting that change. Payloads (tool arguments and results) go to
``.chatmd/<stem>/`` next to the file unless ``<config show_tool_call/>``
asks for them inline; they are written before the element that names them.
"""

from __future__ import annotations

import os
import re
import tempfile
from pathlib import Path

from tooldeck.chatmd.writer import element_text
from tooldeck.core.output import valid_text
from tooldeck.llm.types import FunctionCall, FunctionResult, Item, Message, Reasoning
from tooldeck.workspace.atomic import retrying, write_file

PAYLOAD_DIR = ".chatmd"
_SAFE_RE = re.compile(r"[^A-Za-z0-9_-]+")


def atomic_write(path: Path, data: bytes) -> None:
    """Write ``data`` to ``path`` through a temp file + rename, keeping the mode."""
    try:
        mode: int | None = path.stat().st_mode & 0o7777
    except FileNotFoundError:
        mode = None
    fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.", suffix=".tmp", dir=path.parent)
    try:
        with os.fdopen(fd, "wb") as fh:
            fh.write(data)
            fh.flush()
            os.fsync(fh.fileno())
        if mode is not None:
            os.chmod(tmp, mode)
        os.replace(tmp, path)
    except BaseException:
        try:
            os.unlink(tmp)
        except FileNotFoundError:
            pass
        raise


class Transcript:
    def __init__(
        self, path: Path, *, show_tool_call: bool = False, state_dir: str | os.PathLike[str] | None = None
    ) -> None:
        self.path = path
        self.show_tool_call = show_tool_call
        self.state_dir = state_dir
        self.payload_dir = path.parent / PAYLOAD_DIR / _SAFE_RE.sub("_", path.stem)

    def append_text(self, text: str) -> None:
        # model text may carry a lone surrogate (a JSON escape): written as a visible escape
        data = valid_text(text).encode("utf-8")
        target = self.path.resolve()  # a linked .chatmd is appended where it lives

        def attempt(_: int) -> None:
            current = target.read_bytes()
            sep = b"" if not current or current.endswith(b"\n") else b"\n"
            write_file(
                str(target.parent), target.name, current + sep + data,
                create_parents=False, state_dir=self.state_dir, expect=current,
            )

        retrying(attempt)

    def append(self, item: Item) -> None:
        """Persist one finished conversation item as its ChatMD element."""
        self.append_text(self.render(item))

    def render(self, item: Item) -> str:
        if isinstance(item, Message):
            return element_text(item.role, {}, item.text)
        if isinstance(item, Reasoning):
            attrs = {"id": item.id} if item.id else {}
            inner = element_text("summary", {}, item.text).rstrip("\n")
            return element_text("reasoning", attrs, inner, raw_body=True)
        if isinstance(item, FunctionCall):
            attrs: dict[str, str | None] = {"function_name": item.name, "tool_call_id": item.call_id}
            return self._payload("tool_call", attrs, item.arguments, item.call_id, "call.json")
        if isinstance(item, FunctionResult):
            attrs = {"tool_call_id": item.call_id}
            if item.is_error:
                attrs["error"] = None
            return self._payload("tool_response", attrs, item.output, item.call_id, "result.txt")
        raise TypeError(f"cannot write {type(item).__name__}")

    def _payload(self, tag: str, attrs: dict[str, str | None], text: str, call_id: str, suffix: str) -> str:
        if self.show_tool_call:
            return element_text(tag, attrs, text)
        self.payload_dir.mkdir(parents=True, exist_ok=True)
        stem = _SAFE_RE.sub("_", call_id)[:60] or "call"
        target = self.payload_dir / f"{stem}.{suffix}"
        n = 2
        while target.exists():
            target, n = self.payload_dir / f"{stem}-{n}.{suffix}", n + 1
        atomic_write(target, valid_text(text).encode("utf-8"))
        src = target.relative_to(self.path.parent).as_posix()
        return element_text(tag, attrs, element_text("doc", {"src": src, "local": None}).rstrip("\n"), raw_body=True)
