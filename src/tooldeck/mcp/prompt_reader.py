"""A ``*.chatmd`` file as an MCP prompt: its messages, placeholders, description.

Placeholders are written ``{{name}}`` (required) or ``{{name|default text}}``
(optional, the default used when the argument is not given); a name is
``[A-Za-z_][A-Za-z0-9_]*``; whitespace around the name and the default is
ignored. They
stay literal in the file, so the same file still runs as a ChatMD prompt.

Messages come from the top-level ``<system>``, ``<developer>``, ``<user>`` and
``<assistant>`` blocks (``<msg role=...>`` too). :func:`read_messages` is the
one place that reads them: through ``tooldeck.chatmd.parser`` when that
module is present, else through the small reader below (comments dropped,
``RAW| ... |RAW`` kept literal). Declarations (``<tool>``, ``<config>``...)
are not messages and are skipped.
"""

from __future__ import annotations

import logging
import re
from dataclasses import dataclass
from pathlib import Path

log = logging.getLogger("tooldeck.mcp.prompts")

ROLES = ("system", "developer", "user", "assistant")
PLACEHOLDER = re.compile(r"\{\{\s*(?P<name>[A-Za-z_][A-Za-z0-9_]*)\s*(?:\|(?P<default>[^}]*))?\}\}")
_BLOCK = re.compile(
    r"<(?P<tag>system|developer|user|assistant|msg)\b(?P<attrs>[^>]*?)(?:/>|>(?P<body>.*?)</(?P=tag)\s*>)",
    re.DOTALL,
)
_RAW = re.compile(r"RAW\|(.*?)\|RAW", re.DOTALL)
_COMMENT = re.compile(r"<!--.*?-->", re.DOTALL)
_LEADING_COMMENT = re.compile(r"\A\s*<!--(?P<text>.*?)-->", re.DOTALL)
_ROLE_ATTR = re.compile(r"""\brole\s*=\s*(?:"([^"]*)"|'([^']*)'|([^\s/>]+))""")


@dataclass(frozen=True, slots=True)
class Argument:
    name: str
    required: bool
    default: str | None = None


@dataclass(frozen=True, slots=True)
class Message:
    role: str  # system | developer | user | assistant
    text: str


def read_messages(text: str, path: Path | None = None) -> list[Message]:
    """The messages of a ChatMD document (see the module docstring)."""
    via_parser = _parser_messages(text, path)
    return via_parser if via_parser is not None else _fallback_messages(text)


def _parser_messages(text: str, path: Path | None) -> list[Message] | None:
    """Through the ChatMD parser, or None when it is not installed."""
    try:
        from tooldeck.chatmd.parser import parse  # type: ignore[import-not-found]
    except ImportError as exc:
        if getattr(exc, "name", None) not in ("tooldeck.chatmd.parser", "tooldeck.chatmd"):
            log.error("tooldeck.chatmd.parser cannot be imported (%s); using the built-in reader", exc)
        return None
    out: list[Message] = []
    for node in parse(text, path):
        tag = getattr(node, "tag", None)
        if tag == "msg":
            tag = node.get("role")
        if tag in ROLES:
            out.append(Message(tag, node.text().strip("\n")))
    return out


def _fallback_messages(text: str) -> list[Message]:
    raws: list[str] = []

    def stash(m: re.Match[str]) -> str:
        raws.append(m.group(1))
        return f"\x00{len(raws) - 1}\x00"

    body = _COMMENT.sub("", _RAW.sub(stash, text))
    out: list[Message] = []
    for m in _BLOCK.finditer(body):
        role = m.group("tag")
        if role == "msg":
            rm = _ROLE_ATTR.search(m.group("attrs") or "")
            role = next((g for g in rm.groups() if g), "") if rm else ""
        if role not in ROLES:
            continue
        content = re.sub(r"\x00(\d+)\x00", lambda r: raws[int(r.group(1))], m.group("body") or "")
        out.append(Message(role, _unescape(content).strip("\n")))
    return out


def _unescape(text: str) -> str:
    for entity, char in (("&lt;", "<"), ("&gt;", ">"), ("&quot;", '"'), ("&apos;", "'"), ("&amp;", "&")):
        text = text.replace(entity, char)
    return text


def description_of(text: str, stem: str) -> str:
    """A leading ``<!-- comment -->`` is the prompt's description."""
    m = _LEADING_COMMENT.match(text)
    if m and m.group("text").strip():
        return " ".join(m.group("text").split())
    return f"ChatMD prompt {stem}"


def arguments_of(messages: list[Message]) -> list[Argument]:
    """Placeholders in order of first appearance; optional when any use of
    the name has a default."""
    order: list[str] = []
    defaults: dict[str, str | None] = {}
    for msg in messages:
        for m in PLACEHOLDER.finditer(msg.text):
            name = m.group("name")
            if name not in defaults:
                order.append(name)
                defaults[name] = None
            if m.group("default") is not None and defaults[name] is None:
                defaults[name] = m.group("default").strip()
    return [Argument(n, defaults[n] is None, defaults[n]) for n in order]


def fill(text: str, values: dict[str, str], arguments: list[Argument]) -> str:
    """``text`` with every placeholder replaced (given value, else default)."""
    fallback = {a.name: a.default for a in arguments}

    def one(m: re.Match[str]) -> str:
        name = m.group("name")
        if name in values:
            return values[name]
        default = m.group("default")
        return default.strip() if default is not None else (fallback.get(name) or "")

    return PLACEHOLDER.sub(one, text)
