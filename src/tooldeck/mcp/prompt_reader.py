"""A ``*.chatmd`` file as an MCP prompt: its messages, placeholders, description.

Placeholders are written ``{{name}}`` (required) or ``{{name|default text}}``
(optional, the default used when the argument is not given); a name is
``[A-Za-z_][A-Za-z0-9_]*``; whitespace around the name and the default is
ignored. They
stay literal in the file, so the same file still runs as a ChatMD prompt.

Messages come from the top-level ``<system>``, ``<developer>``, ``<user>`` and
``<assistant>`` blocks (``<msg role=...>`` too). :func:`read_messages` is the
one place that reads them, through the ChatMD parser
(:mod:`tooldeck.markup.parser`: comments dropped, ``RAW| ... |RAW`` kept
literal, entities decoded). Declarations (``<tool>``, ``<config>``...) are
not messages and are skipped.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path

from tooldeck.markup.parser import parse

ROLES = ("system", "developer", "user", "assistant")
PLACEHOLDER = re.compile(r"\{\{\s*(?P<name>[A-Za-z_][A-Za-z0-9_]*)\s*(?:\|(?P<default>[^}]*))?\}\}")
_LEADING_COMMENT = re.compile(r"\A\s*<!--(?P<text>.*?)-->", re.DOTALL)


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
    """The messages of a ChatMD document (see the module docstring); a
    document the parser refuses raises its ChatmdError (file, line, column)."""
    out: list[Message] = []
    for node in parse(text, path):
        tag = getattr(node, "tag", None)
        if tag == "msg":
            tag = node.get("role")
        if tag in ROLES:
            out.append(Message(tag, node.text().strip("\n")))
    return out


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
