"""The values the selection service takes and returns: what to select
(:class:`Item`), what a change did (:class:`Change`), and the token
breakdown of the packed context (:class:`Breakdown`, per file :class:`FileTokens`).

Kept apart from the service so tools and renderers can name them without
pulling in the service's I/O.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from tooldeck.state.selections import LineRange, Mode, SelectedFile


@dataclass(frozen=True, slots=True)
class Item:
    """A path to select (file or folder, as a model would name it) and how."""

    path: str
    mode: Mode = "full"
    ranges: tuple[LineRange, ...] = ()


@dataclass(slots=True)
class Change:
    op: str
    added: list[str] = field(default_factory=list)
    updated: list[str] = field(default_factory=list)
    removed: list[str] = field(default_factory=list)
    unchanged: list[str] = field(default_factory=list)
    auto_added: list[str] = field(default_factory=list)
    auto_removed: list[str] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)
    auto_before: bool = True
    auto_after: bool = True


@dataclass(frozen=True, slots=True)
class FileTokens:
    path: str
    shown: str
    mode: Mode
    tokens: int
    auto: bool = False
    ranges: tuple[LineRange, ...] = ()
    status: str | None = None  # why the content is not there: missing, unreadable, no codemap...


@dataclass(slots=True)
class Breakdown:
    prompt: int = 0
    tree: int = 0
    framing: int = 0  # section headings and the blank lines between chunks
    files: list[FileTokens] = field(default_factory=list)

    def of_mode(self, mode: Mode) -> int:
        return sum(f.tokens for f in self.files if f.mode == mode)

    @property
    def total(self) -> int:
        return self.prompt + self.tree + self.framing + sum(f.tokens for f in self.files)

    def components(self) -> dict[str, int]:
        full, slices, code = self.of_mode("full"), self.of_mode("slices"), self.of_mode("codemap")
        return {
            "prompt": self.prompt,
            "tree": self.tree,
            "files": full + slices,
            "full": full,
            "slices": slices,
            "code": code,
            "framing": self.framing,
            "total": self.total,
        }


def label(f: SelectedFile) -> str:
    if f.mode == "slices":
        return f"[slices {f.ranges_label()}]"
    if f.mode == "codemap":
        return "[codemap, auto]" if f.auto else "[codemap]"
    return "[full]"
