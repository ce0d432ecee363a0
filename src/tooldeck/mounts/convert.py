"""Translating between a remote MCP catalog and tooldeck's tool model.

Remote tool → :class:`~tooldeck.core.tool.Tool` metadata (same name where
tooldeck allows it, same description, same JSON Schema, same annotations with
the MCP defaults for absent hints); a ``tools/call`` result → an
:class:`~tooldeck.core.output.Output` or a :class:`ToolError`; a remote
progress notification → an Invocation progress update. No I/O here.
"""

from __future__ import annotations

import re
from typing import Any

import mcp_types as types

from tooldeck.core.errors import ErrorCode, ToolError
from tooldeck.core.invocation import Channel, Invocation
from tooldeck.core.output import ImagePart, Output, Part, TextPart
from tooldeck.core.tool import NAME_RE, ToolAnnotations

# what tooldeck's own server writes for an error; a remote tooldeck keeps its code
_ERROR_LINE = re.compile(r"^error \[(?P<code>[a-z_]{1,40})\]: (?P<message>.*)\Z", re.DOTALL)
_CHANNEL_LINE = re.compile(
    r"^(?P<channel>assistant|reasoning|stdout|stderr|activity): (?P<replace>\u21bb )?(?P<text>.*)\Z", re.DOTALL
)


def local_name(remote: str, prefix: str = "") -> str:
    """The remote name as a tooldeck tool name: characters outside
    ``[A-Za-z0-9_-]`` become ``_``, cut to 64 characters."""
    name = re.sub(r"[^A-Za-z0-9_-]", "_", prefix + remote)[:64] or "tool"
    assert NAME_RE.match(name)
    return name


def annotations_of(t: types.Tool) -> ToolAnnotations:
    """The remote hints; an absent hint takes the MCP default (destructive and
    open-world unless told otherwise), so nothing is promised that the remote
    did not promise. As the spec says, ``destructiveHint`` only counts when
    the tool is not read-only."""
    ann = t.annotations
    title = t.title or (ann.title if ann else None)
    if ann is None:
        return ToolAnnotations(title=title, read_only=False, destructive=True, idempotent=False, open_world=True)
    read_only = bool(ann.read_only_hint)
    destructive = ann.destructive_hint
    if destructive is None or read_only:  # the hint only means something for a tool that writes
        destructive = not read_only
    return ToolAnnotations(
        title=title,
        read_only=read_only,
        destructive=destructive,
        idempotent=bool(ann.idempotent_hint),
        open_world=True if ann.open_world_hint is None else ann.open_world_hint,
    )


def schema_of(t: types.Tool) -> dict[str, Any]:
    schema = dict(t.input_schema or {})
    schema.setdefault("type", "object")
    return schema


def _part(item: Any) -> Part | None:
    if isinstance(item, types.TextContent):
        return TextPart(item.text)
    if isinstance(item, types.ImageContent):
        return ImagePart(f"data:{item.mime_type};base64,{item.data}")
    if isinstance(item, types.AudioContent):
        return TextPart(f"[audio {item.mime_type}, {len(item.data) * 3 // 4} bytes]")
    if isinstance(item, types.ResourceLink):
        label = f" ({item.name})" if item.name else ""
        return TextPart(f"[resource {item.uri}{label}]")
    if isinstance(item, types.EmbeddedResource):
        res = item.resource
        if isinstance(res, types.TextResourceContents):
            return TextPart(res.text)
        return TextPart(f"[resource {res.uri}: {res.mime_type or 'binary'}, {len(res.blob) * 3 // 4} bytes]")
    return None


def to_output(result: types.CallToolResult, server: str, remote_name: str) -> Output:
    """The remote result as an Output, or raise its error as a ToolError."""
    parts = [p for p in (_part(c) for c in result.content) if p is not None]
    if result.is_error:
        text = "\n".join(p.text for p in parts if isinstance(p, TextPart)).strip()
        m = _ERROR_LINE.match(text)
        if m:
            raise ToolError(m.group("code"), m.group("message"))
        raise ToolError(
            ErrorCode.REMOTE_ERROR,
            f"{remote_name} on {server} failed: {text or '(no message)'}",
        )
    structured = result.structured_content
    if not parts and structured is not None:
        import json

        parts = [TextPart(json.dumps(structured, ensure_ascii=False, indent=2))]
    return Output(tuple(parts) or (TextPart(""),), dict(structured) if structured is not None else None)


def progress_forwarder(inv: Invocation) -> Any:
    """A ``progress_callback`` for ``ClientSession.call_tool`` that hands remote
    progress to ``inv``. A tooldeck server's ``channel: text`` messages keep
    their channel; anything else is ``activity`` (with ``progress/total``
    when the remote sent no message)."""
    if not inv.is_observed:
        return None

    async def forward(progress: float, total: float | None, message: str | None) -> None:
        if message:
            m = _CHANNEL_LINE.match(message)
            if m:
                inv.emit_text(Channel(m.group("channel")), m.group("text"), replace=bool(m.group("replace")))
                return
            inv.emit_text(Channel.ACTIVITY, message)
            return
        shown = f"{progress:g}/{total:g}" if total else f"{progress:g}"
        inv.emit_text(Channel.ACTIVITY, shown, replace=True)

    return forward
