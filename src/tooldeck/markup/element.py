"""The parsed form of a ChatMD document: elements with their source position.

Why a module of its own: the parser produces these, and the declaration
loaders of other domains (shell runtimes, MCP mounts, agent tools) consume
them without importing the parser. Positions are 1-based so an error can say
``prompt.chatmd:12:5: ...`` exactly as an editor shows it.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path


@dataclass(frozen=True, slots=True)
class Position:
    file: Path | None
    line: int  # 1-based
    col: int  # 1-based

    def __str__(self) -> str:
        name = str(self.file) if self.file is not None else "<string>"
        return f"{name}:{self.line}:{self.col}"


@dataclass(slots=True)
class Element:
    """One ChatMD tag. ``attrs`` maps a name to its (entity-decoded) value; a flag
    attribute written without a value (``local``, ``strict``) maps to None.
    ``children`` holds nested elements and literal text in document order."""

    tag: str
    attrs: dict[str, str | None] = field(default_factory=dict)
    children: list[Element | str] = field(default_factory=list)
    pos: Position = field(default_factory=lambda: Position(None, 1, 1))

    def has(self, name: str) -> bool:
        return name in self.attrs

    def get(self, name: str, default: str | None = None) -> str | None:
        value = self.attrs.get(name, default)
        return default if value is None else value

    def elements(self, tag: str | None = None) -> list[Element]:
        """Child elements, optionally only those with ``tag``."""
        return [c for c in self.children if isinstance(c, Element) and (tag is None or c.tag == tag)]

    def text(self) -> str:
        """The literal text directly inside this element (children's text included)."""
        return "".join(c if isinstance(c, str) else c.text() for c in self.children)


class ChatmdError(ValueError):
    """A ChatMD document or declaration that cannot be loaded; names file, line and column."""

    def __init__(self, pos: Position | None, message: str) -> None:
        self.pos = pos
        self.message = message
        super().__init__(f"{pos}: {message}" if pos is not None else message)
