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
asks for them inline; they are written before the element that names them,
through the same write with ``expect_absent``: two runners that pick the same
free name at once do not overwrite each other's payload (the loser takes the
next name).
"""

from __future__ import annotations

import base64
import os
import re
from collections.abc import Callable, Sequence
from pathlib import Path

from tooldeck.chatmd.document import MAX_CHATMD_BYTES
from tooldeck.chatmd.writer import element_text, escape_text
from tooldeck.core.output import valid_text
from tooldeck.llm.types import FunctionCall, FunctionResult, ImageInput, Item, Message, Reasoning
from tooldeck.workspace.atomic import StaleWrite, retrying, write_file
from tooldeck.workspace.person_files import read_named

PAYLOAD_DIR = ".chatmd"
_SAFE_RE = re.compile(r"[^A-Za-z0-9_-]+")
_IMAGE_SUFFIX = {"image/png": "png", "image/jpeg": "jpg", "image/gif": "gif", "image/webp": "webp"}


class Transcript:
    def __init__(
        self,
        path: Path,
        *,
        show_tool_call: bool = False,
        state_dir: str | os.PathLike[str] | None = None,
        on_payload: Callable[[Path], None] | None = None,
    ) -> None:
        self.path = path
        self.show_tool_call = show_tool_call
        self.state_dir = state_dir
        self.payload_dir = path.parent / PAYLOAD_DIR / _SAFE_RE.sub("_", path.stem)
        self.on_payload = on_payload  # told of each payload file written (the runner records it)

    def append_text(self, text: str) -> None:
        # model text may carry a lone surrogate (a JSON escape): written as a visible escape
        data = valid_text(text).encode("utf-8")
        target = self.path.resolve()  # a linked .chatmd is appended where it lives

        def attempt(_: int) -> None:
            current = read_named(target, MAX_CHATMD_BYTES)
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
            images = [self._image(img, item.call_id) for img in item.images]
            return self._payload("tool_response", attrs, item.output, item.call_id, "result.txt", images)
        raise TypeError(f"cannot write {type(item).__name__}")

    def _payload(
        self, tag: str, attrs: dict[str, str | None], text: str, call_id: str, suffix: str, extra: Sequence[str] = ()
    ) -> str:
        """The element, its text inline (``show_tool_call``) or in a payload
        file named by a ``<doc>``; ``extra`` (``<img>`` elements) follows it."""
        if self.show_tool_call and not extra:
            return element_text(tag, attrs, text)
        if self.show_tool_call:
            inner = escape_text(text)
        else:
            self.payload_dir.mkdir(parents=True, exist_ok=True)
            stem = _SAFE_RE.sub("_", call_id)[:60] or "call"
            target = self._claim(stem, suffix, valid_text(text).encode("utf-8"))
            if self.on_payload is not None:
                self.on_payload(target)
            src = target.relative_to(self.path.parent).as_posix()
            inner = element_text("doc", {"src": src, "local": None}).rstrip("\n")
        return element_text(tag, attrs, "\n".join([inner, *extra]), raw_body=True)

    def _image(self, img: ImageInput, call_id: str) -> str:
        """An image result saved beside the payloads, as the ``<img>`` that
        brings it back when the file is run again."""
        head, _, b64 = img.data_uri.partition(",")
        mime = head.removeprefix("data:").split(";", 1)[0]
        self.payload_dir.mkdir(parents=True, exist_ok=True)
        stem = _SAFE_RE.sub("_", call_id)[:60] or "call"
        target = self._claim(stem, _IMAGE_SUFFIX.get(mime, "png"), base64.b64decode(b64))
        if self.on_payload is not None:
            self.on_payload(target)
        src = target.relative_to(self.path.parent).as_posix()
        attrs: dict[str, str | None] = {"src": src, "local": None}
        if img.detail != "auto":
            attrs["detail"] = img.detail
        return element_text("img", attrs).rstrip("\n")

    def _claim(self, stem: str, suffix: str, data: bytes) -> Path:
        """Write ``data`` under the first free ``stem[-n].suffix``; a name taken
        meanwhile by another writer (the write refuses: ``expect_absent``) moves
        on to the next one, so no payload is ever overwritten."""
        n = 1
        while True:
            name = f"{stem}.{suffix}" if n == 1 else f"{stem}-{n}.{suffix}"
            n += 1
            if (self.payload_dir / name).exists():
                continue
            try:
                write_file(
                    str(self.payload_dir), name, data,
                    create_parents=False, state_dir=self.state_dir, expect_absent=True,
                )
            except StaleWrite:
                continue
            return self.payload_dir / name
