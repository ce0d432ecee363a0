"""The selection model: which files a compose tab hands to a model, and how.

It lives in state/ (not selection/) because it is what the tables store: the
store reads and writes these values, and the selection service above uses
them, so neither package imports the other in a circle.

Pure data and pure operations (no I/O), so the rules can be read and tested
in one place:

* a file is selected in one **mode**: ``full`` (whole content), ``slices``
  (line ranges, each with an optional description) or ``codemap`` (signatures
  only; the tool calls this mode ``codemap_only``);
* a file is **auto** when automatic codemap management added it (a dependency
  of a full/slices file); while the tab's ``auto_codemaps`` flag is on, the
  auto entries are recomputed after every change;
* line ranges are 1-based and inclusive; adding ranges to a slices entry
  merges overlapping or adjacent ones (descriptions are kept, joined by "; ").

Paths are canonical absolute paths: stable across processes, whatever root ids
each process derived.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field, replace
from typing import Literal

Mode = Literal["full", "slices", "codemap"]
MODES: tuple[Mode, ...] = ("full", "slices", "codemap")


@dataclass(frozen=True, slots=True, order=True)
class LineRange:
    start: int
    end: int
    description: str = ""

    def label(self) -> str:
        return f"{self.start}-{self.end}" if self.end != self.start else str(self.start)


@dataclass(frozen=True, slots=True)
class SelectedFile:
    path: str
    mode: Mode
    ranges: tuple[LineRange, ...] = ()
    auto: bool = False

    def ranges_label(self) -> str:
        return ", ".join(r.label() for r in self.ranges)


@dataclass(slots=True)
class Selection:
    """One tab's selection. ``files`` is keyed by canonical absolute path."""

    files: dict[str, SelectedFile] = field(default_factory=dict)
    auto_codemaps: bool = True

    def copy(self) -> Selection:
        return Selection(dict(self.files), self.auto_codemaps)

    def sorted(self) -> list[SelectedFile]:
        return [self.files[p] for p in sorted(self.files)]

    def manual_off(self) -> None:
        """Automatic management off: what it added stays, now as manual entries."""
        self.auto_codemaps = False
        for path, f in list(self.files.items()):
            if f.auto:
                self.files[path] = replace(f, auto=False)


def merge_ranges(ranges: list[LineRange] | tuple[LineRange, ...]) -> tuple[LineRange, ...]:
    """Union of ``ranges``: overlapping or adjacent ranges become one."""
    out: list[LineRange] = []
    for r in sorted(ranges, key=lambda r: (r.start, r.end)):
        if out and r.start <= out[-1].end + 1:
            last = out[-1]
            desc = last.description
            if r.description and r.description not in desc.split("; "):
                desc = f"{desc}; {r.description}" if desc else r.description
            out[-1] = LineRange(last.start, max(last.end, r.end), desc)
        else:
            out.append(r)
    return tuple(out)


def subtract_ranges(ranges: tuple[LineRange, ...], remove: list[LineRange]) -> tuple[LineRange, ...]:
    """``ranges`` minus the lines covered by ``remove``."""
    out = list(ranges)
    for cut in remove:
        nxt: list[LineRange] = []
        for r in out:
            if cut.end < r.start or cut.start > r.end:
                nxt.append(r)
                continue
            if r.start < cut.start:
                nxt.append(LineRange(r.start, cut.start - 1, r.description))
            if cut.end < r.end:
                nxt.append(LineRange(cut.end + 1, r.end, r.description))
        out = nxt
    return tuple(out)


def ranges_to_json(ranges: tuple[LineRange, ...]) -> str | None:
    if not ranges:
        return None
    return json.dumps([[r.start, r.end, r.description] for r in ranges], ensure_ascii=False)


def ranges_from_json(text: str | None) -> tuple[LineRange, ...]:
    if not text:
        return ()
    return tuple(LineRange(int(a), int(b), str(c)) for a, b, c in json.loads(text))
