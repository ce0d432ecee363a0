"""The pure-Python engine: the same two passes as the ripgrep engine, built
from the workspace walker and :mod:`re`, for machines without ``rg``.

It reproduces ripgrep's observable rules so both engines give the same
results: files come from :func:`tooldeck.workspace.walk` (the same ignore
rules and deny list), symbolic links are not followed, a file with a NUL byte
is binary and skipped (what ``rg --count`` does), lines are split on ``\\n``
only, a trailing newline does not start another line, and whole-word means
no word character on either side of the match. Explicitly named files are
searched whatever the filters say, as ripgrep does.

Dialect: patterns are Python regexes. Ripgrep's Rust syntax agrees on the
common ground (classes, groups, alternation, repetition, ``\\b``, ``\\w``);
Rust-only forms such as ``\\p{Greek}`` fail here and fall back to a literal.

Speed: a whole-file search decides whether a file can match at all before
any line is split. ``^``/``$`` are line anchors there (MULTILINE), so the
pre-check never misses a line match; patterns whose meaning depends on the
text outside the line (``\\A``, ``\\Z``, lookbehind) skip it.
"""

from __future__ import annotations

import os
import re
import warnings
from collections.abc import Callable, Iterator

from tooldeck.core.errors import ToolError
from tooldeck.tools.search.model import ContentQuery, InvalidPattern, Line
from tooldeck.tools.search.rg_engine import LONG_LINE
from tooldeck.tools.search.scope import Target, exclude_spec, extension_ok
from tooldeck.workspace.content import read_bytes
from tooldeck.workspace.ignore import IgnoreRules
from tooldeck.workspace.roots import Root
from tooldeck.workspace.walk import walk

_LEADING_FLAGS = re.compile(r"^\(\?[aiLmsux]+\)")
_NEEDS_LINE_ONLY = re.compile(r"\\[AZz]|\(\?<[=!]")


class Compiled:
    """A query compiled for :mod:`re`: the per-line regex and the file pre-check."""

    def __init__(self, q: ContentQuery) -> None:
        body = re.escape(q.pattern) if q.literal else q.pattern
        flags = ""
        m = _LEADING_FLAGS.match(body)
        if m:  # global flags must stay in front of the whole-word wrapper
            flags, body = m.group(0), body[m.end() :]
        wrapped = rf"{flags}(?<!\w)(?:{body})(?!\w)" if q.whole_word else flags + body
        try:
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                self.line = re.compile(wrapped)
                self.file = None if _NEEDS_LINE_ONLY.search(body) else re.compile(wrapped, re.MULTILINE)
        except (re.error, OverflowError, RecursionError) as exc:
            raise InvalidPattern(str(exc)) from exc


def _read_text(root: str, rel: str) -> str | None:
    """A regular file's text, or None for binary (NUL) or unreadable files.
    Read through the safe path from the root (no link followed, no FIFO waited on)."""
    try:
        data = read_bytes(os.path.join(root, rel), rel, root=root).data
    except (ToolError, OSError):
        return None
    if b"\x00" in data:
        return None
    return data.decode("utf-8", "replace")


def _split(text: str) -> list[str]:
    lines = text.split("\n")
    if lines and lines[-1] == "":
        lines.pop()
    return lines


def matching_lines(text: str, c: Compiled, limit: int | None = None) -> Iterator[tuple[int, str, re.Match[str]]]:
    """(1-based number, line, first match) of each matching line."""
    if c.file is not None and c.file.search(text) is None:
        return
    found = 0
    for number, line in enumerate(_split(text), 1):
        m = c.line.search(line)
        if m is not None:
            yield number, line, m
            found += 1
            if limit is not None and found >= limit:
                return


class PythonEngine:
    name = "python"

    def __init__(self, rules_for: Callable[[Root], IgnoreRules]) -> None:
        self.rules_for = rules_for

    def _files(self, target: Target, q: ContentQuery) -> Iterator[str]:
        rules = self.rules_for(target.root)
        spec = exclude_spec(q.exclude)
        starts = target.dirs if target.dirs else (("",) if target.whole_root else ())
        for start in starts:
            for entry in walk(rules, start, include_dirs=False):
                if entry.is_symlink or not extension_ok(entry.rel.rsplit("/", 1)[-1], q.extensions):
                    continue
                if spec is not None and spec.match_file(entry.rel):
                    continue
                yield entry.rel
        yield from target.files

    def count(self, target: Target, q: ContentQuery) -> tuple[list[tuple[str, int]], list[str]]:
        c = Compiled(q)
        out: list[tuple[str, int]] = []
        for rel in self._files(target, q):
            text = _read_text(target.root.path, rel)
            if text is None:
                continue
            n = sum(1 for _ in matching_lines(text, c))
            if n:
                out.append((rel, n))
        return out, []

    def lines(self, root: Root, q: ContentQuery, rels: list[str], max_count: int) -> dict[str, list[Line]]:
        c = Compiled(q)
        result: dict[str, list[Line]] = {}
        for rel in rels:
            text = _read_text(root.path, rel)
            if text is None:
                continue
            all_lines = _split(text)
            hits = list(matching_lines(text, c, max_count))
            if not hits:
                continue
            wanted: dict[int, Line] = {}
            for number, line, m in hits:
                span = (m.start(), m.end()) if len(line) > LONG_LINE else None
                wanted[number] = Line(number, line, True, span)
            if q.context:
                for number, _line, _m in hits:
                    lo, hi = max(1, number - q.context), min(len(all_lines), number + q.context)
                    for k in range(lo, hi + 1):
                        if k not in wanted:
                            wanted[k] = Line(k, all_lines[k - 1], False)
            result[rel] = [wanted[k] for k in sorted(wanted)]
        return result
