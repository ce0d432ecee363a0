"""The codemap data model: what one file defines, imports and mentions.

Plain dataclasses, no tree-sitter: consumers (selection, context ranking,
rendering) import this without paying for the parsers.
"""

from __future__ import annotations

from dataclasses import dataclass, field

# the kinds and their sets live in kinds.py (workers import them without the dataclasses below)
from tooldeck.codemap.kinds import BODY_KINDS as BODY_KINDS
from tooldeck.codemap.kinds import CLASS_LIKE as CLASS_LIKE
from tooldeck.codemap.kinds import KINDS as KINDS
from tooldeck.codemap.kinds import VALUE_KINDS as VALUE_KINDS


@dataclass(frozen=True, slots=True)
class Symbol:
    """One definition: ``signature`` is its header as written (never its body);
    ``line`` is the 1-based line of its name, ``end_line`` the last line of the
    whole definition (so a line can be attributed to its enclosing definition)."""

    name: str
    kind: str
    signature: str
    line: int
    parent: str | None = None
    end_line: int = 0
    depth: int = 0  # nesting level under other symbols (0 = top level)


@dataclass
class Codemap:
    """The map of one file. ``references`` holds the identifiers the file's
    code uses (comments and strings excluded), for reference graphs."""

    path: str  # root-relative, "/"-separated
    language: str
    imports: list[str]
    symbols: list[Symbol]
    references: set[str]
    content_hash: str
    lines: int = 0
    root: str = ""  # id of the root holding ``path``

    def defines(self, name: str) -> bool:
        return any(s.name == name for s in self.symbols)

    def enclosing(self, line: int) -> Symbol | None:
        """The innermost symbol whose span contains ``line``."""
        return enclosing(self.symbols, line)


def enclosing(symbols: list[Symbol], line: int) -> Symbol | None:
    """The innermost of ``symbols`` whose span (name line to end line) holds ``line``."""
    best: Symbol | None = None
    for s in symbols:
        if s.line <= line <= max(s.end_line, s.line) and (best is None or s.depth >= best.depth):
            best = s
    return best


@dataclass(frozen=True, slots=True)
class Definition:
    path: str
    line: int
    signature: str
    kind: str
    name: str = ""
    parent: str | None = None
    root: str = ""


@dataclass(frozen=True, slots=True)
class Reference:
    path: str
    line: int
    text: str  # the referencing line, stripped
    enclosing: str | None  # "Class.method" of the definition containing the line, if any
    root: str = ""


@dataclass(slots=True)
class Skipped:
    """A file that has no codemap, and why (no grammar, binary, minified...)."""

    path: str
    reason: str
    root: str = ""


@dataclass(slots=True)
class Payload:
    """What extraction produces from one file's bytes: everything of a
    Codemap that depends only on the content (so it is cached by hash)."""

    imports: list[str] = field(default_factory=list)
    symbols: list[Symbol] = field(default_factory=list)
    refs: str = ""  # the references, sorted, space-separated (how they are stored)
    lines: int = 0

    @property
    def references(self) -> set[str]:
        return set(self.refs.split()) if self.refs else set()
