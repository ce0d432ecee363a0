"""Tool outputs: text, or ordered text/image parts, plus optional structured data.

This mirrors ochat's ``Tool_output.Output`` (``Text`` or content ``parts``) and
adds ``structured`` for MCP ``structuredContent``. Progress is never part of an
output; see :mod:`tooldeck.core.invocation`.
"""

from __future__ import annotations

import json
import re
import sys
from dataclasses import dataclass, field
from typing import Any, Literal


@dataclass(frozen=True, slots=True)
class TextPart:
    text: str


@dataclass(frozen=True, slots=True)
class ImagePart:
    """An image as a ``data:`` URI (what vision APIs and MCP both accept)."""

    data_uri: str
    detail: Literal["auto", "low", "high"] = "auto"

    @property
    def mime_type(self) -> str:
        head = self.data_uri.split(",", 1)[0]
        return head.removeprefix("data:").split(";", 1)[0] or "application/octet-stream"

    @property
    def base64_data(self) -> str:
        return self.data_uri.split(",", 1)[1] if "," in self.data_uri else ""


Part = TextPart | ImagePart


@dataclass(frozen=True, slots=True)
class Output:
    """The one final result of a tool call.

    Build it with :meth:`text` or :meth:`of_parts`. ``structured`` is optional
    machine-readable content that hosts may forward (MCP ``structuredContent``).
    """

    parts: tuple[Part, ...]
    structured: dict[str, Any] | None = field(default=None)

    @classmethod
    def text(cls, text: str, structured: dict[str, Any] | None = None) -> Output:
        return cls((TextPart(text),), structured)

    @classmethod
    def of_parts(cls, parts: list[Part] | tuple[Part, ...], structured: dict[str, Any] | None = None) -> Output:
        return cls(tuple(parts), structured)

    def as_text(self) -> str:
        """All text parts joined; images are shown as a placeholder line."""
        chunks: list[str] = []
        for part in self.parts:
            if isinstance(part, TextPart):
                chunks.append(part.text)
            else:
                chunks.append(f"[image {part.mime_type}]")
        return "\n".join(chunks)


_SURROGATE = re.compile("[\ud800-\udfff]")


def _escape_surrogate(m: re.Match[str]) -> str:
    code = ord(m.group())
    # U+DC80..U+DCFF is how Python decodes an undecodable byte of a file name
    # (surrogateescape): show that byte; any other lone surrogate as \uXXXX.
    return f"\\x{code - 0xDC00:02x}" if 0xDC80 <= code <= 0xDCFF else f"\\u{code:04x}"


def valid_text(text: str) -> str:
    """``text`` as valid UTF-8: lone surrogates (an invalid UTF-8 file name
    listed by a tool, say) become visible escapes. Transports cannot encode a
    lone surrogate; one reaching the wire would fail the whole response."""
    if text.isascii():
        return text
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        return _SURROGATE.sub(_escape_surrogate, text)
    return text


def _valid_data(value: Any) -> Any:
    if isinstance(value, str):
        return valid_text(value)
    if isinstance(value, dict):
        return {valid_text(str(k)): _valid_data(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [_valid_data(v) for v in value]
    return value


def valid_output(output: Output) -> Output:
    """``output`` with every text (and structured string) valid UTF-8."""
    parts = output.parts
    fixed = tuple(TextPart(valid_text(p.text)) if isinstance(p, TextPart) else p for p in parts)
    structured = output.structured
    clean_structured = _valid_data(structured) if structured is not None else None
    if all(a is b or a == b for a, b in zip(fixed, parts, strict=True)) and clean_structured == structured:
        return output
    return Output(fixed, clean_structured)


def _is_model(value: Any) -> bool:
    """Whether ``value`` is a pydantic model, without importing pydantic: where
    it is not loaded, nothing is one (a tool that decodes without it, as
    ``read_file`` does, must not load it for its answer)."""
    main = sys.modules.get("pydantic.main")
    base = getattr(main, "BaseModel", None)
    return base is not None and isinstance(value, base)


def coerce_output(value: Any) -> Output:
    """Turn what a typed tool function returned into an :class:`Output`.

    ``str`` → text; ``Output`` → itself; a pydantic model or ``dict`` → its
    JSON as text plus the same data as structured content; list of parts → parts.
    """
    if isinstance(value, Output):
        return value
    if isinstance(value, str):
        return Output.text(value)
    if _is_model(value):
        data = value.model_dump(mode="json")
        return Output.text(json.dumps(data, ensure_ascii=False, indent=2), data)
    if isinstance(value, dict):
        return Output.text(json.dumps(value, ensure_ascii=False, indent=2, default=str), value)
    if isinstance(value, (TextPart, ImagePart)):
        return Output.of_parts([value])
    if isinstance(value, (list, tuple)) and all(isinstance(p, (TextPart, ImagePart)) for p in value):
        return Output.of_parts(list(value))
    if value is None:
        return Output.text("")
    return Output.text(str(value))
