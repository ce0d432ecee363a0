"""The index data model: chunks, hits and build reports (plain dataclasses)."""

from __future__ import annotations

import hashlib
from dataclasses import dataclass, field
from typing import Any

KINDS = ("markdown", "code", "pydoc")


@dataclass(slots=True)
class Chunk:
    """One retrievable piece of a file.

    ``title`` is what the chunk is about in a few words (a Markdown heading
    path, ``Class.method`` and its signature); ``symbol`` is the enclosing
    definition for code (None for module-level lines and for prose)."""

    path: str
    start_line: int
    end_line: int
    title: str
    text: str
    symbol: str | None = None
    kind: str = ""  # markdown: "section"; code: the symbol kind or "module"

    @property
    def text_hash(self) -> str:
        """Identity of what gets embedded: an unchanged chunk keeps its vector."""
        return hashlib.sha256(f"{self.title}\x00{self.text}".encode()).hexdigest()[:20]

    def to_row(self) -> list[Any]:
        return [self.path, self.start_line, self.end_line, self.title, self.text, self.symbol, self.kind]

    @classmethod
    def from_row(cls, row: list[Any]) -> Chunk:
        return cls(row[0], row[1], row[2], row[3], row[4], row[5], row[6])


@dataclass(frozen=True, slots=True)
class Hit:
    chunk: Chunk
    score: float
    lexical_rank: int | None = None  # 1-based rank in each list (None: not in that list)
    dense_rank: int | None = None


@dataclass(slots=True)
class BuildReport:
    name: str
    kind: str
    files: int = 0
    files_changed: int = 0  # new or modified files, re-chunked
    files_removed: int = 0
    chunks: int = 0
    chunks_embedded: int = 0  # chunks whose vectors were computed this build
    seconds: float = 0.0
    model: str = ""
    generation: str = ""
    skipped: list[str] = field(default_factory=list)

    def summary(self) -> str:
        unchanged = self.files - self.files_changed
        return (
            f"index {self.name!r} ({self.kind}): {self.files} files ({self.files_changed} new or changed, "
            f"{unchanged} unchanged, {self.files_removed} removed), {self.chunks} chunks, "
            f"{self.chunks_embedded} embedded with {self.model} in {self.seconds:.2f} s"
        )
