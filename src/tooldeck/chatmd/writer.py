"""Elements -> ChatMD text that parses back to the same content.

Why it matters: the runner appends the transcript to the person's file, and
the next run parses it again. Any text (markdown with ``<`` or ``&``, JSON,
a ``|RAW`` inside a tool output) must come back byte for byte, so the writer
picks a ``RAW| ... |RAW`` block when it can and entity-escapes otherwise.
"""

from __future__ import annotations

from collections.abc import Mapping

from tooldeck.markup.parser import RAW_CLOSE, RAW_OPEN


def escape_attr(value: str) -> str:
    return value.replace("&", "&amp;").replace('"', "&quot;").replace("<", "&lt;").replace(">", "&gt;")


def escape_text(text: str) -> str:
    """Body text that parses back to ``text`` exactly."""
    if "<" not in text and "&" not in text and RAW_OPEN not in text:
        return text
    if RAW_CLOSE not in text and not text.endswith("|"):
        return f"{RAW_OPEN}{text}{RAW_CLOSE}"
    out = text.replace("&", "&amp;").replace("<", "&lt;")
    return out.replace(RAW_OPEN, "RAW&#124;")


def attrs_text(attrs: Mapping[str, str | None]) -> str:
    parts = []
    for key, value in attrs.items():
        parts.append(key if value is None else f'{key}="{escape_attr(value)}"')
    return (" " + " ".join(parts)) if parts else ""


def element_text(tag: str, attrs: Mapping[str, str | None], body: str | None = None, *, raw_body: bool = False) -> str:
    """One element. ``body`` is escaped unless ``raw_body`` (already ChatMD)."""
    if body is None:
        return f"<{tag}{attrs_text(attrs)}/>\n"
    inner = body if raw_body else escape_text(body)
    return f"<{tag}{attrs_text(attrs)}>\n{inner}\n</{tag}>\n"
