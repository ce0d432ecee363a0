"""The Markdown context package: prompt, file tree, files, slices and codemaps
in one document (what ``prompt op=export`` writes and ``workspace_context``
shows).

A package is a list of chunks joined by blank lines. Each chunk belongs to one
component (prompt, tree, files, slices, codemaps, headings) and, for files, to
one path, so the token breakdown is the sum of the chunks' counts and matches
the exported document to within a few tokens (BPE merges little across a
blank line). Rendering is pure: callers hand in texts already read.

Layout::

    # Context
    ## Prompt          <prompt text>
    ## File tree       fenced tree of the selected files, each marked with its mode
    ## Files           ### path + fenced content (slices: numbered lines per range,
                       each range introduced by its description)
    ## Codemaps        ### path + fenced codemap

Fences are longer than any run of backticks in the content, so a file that
contains a Markdown fence cannot break the document.
"""

from __future__ import annotations

import os
import re
from dataclasses import dataclass, field
from typing import Literal

from tooldeck.codemap.languages import language_for
from tooldeck.state.selections import LineRange

Component = Literal["prompt", "tree", "files", "slices", "codemaps", "headings"]

_FENCE_LANG = {"csharp": "csharp", "ocaml_interface": "ocaml", "tsx": "tsx"}
_EXT_LANG = {
    ".md": "markdown",
    ".json": "json",
    ".toml": "toml",
    ".yaml": "yaml",
    ".yml": "yaml",
    ".html": "html",
    ".css": "css",
    ".sql": "sql",
    ".xml": "xml",
    ".txt": "text",
    ".rst": "rst",
}
_TICKS = re.compile(r"`{3,}")


@dataclass(frozen=True, slots=True)
class Chunk:
    component: Component
    text: str
    path: str | None = None  # canonical absolute path, for file chunks


@dataclass(slots=True)
class Package:
    chunks: list[Chunk] = field(default_factory=list)

    def add(self, component: Component, text: str, path: str | None = None) -> None:
        self.chunks.append(Chunk(component, text, path))

    def text(self) -> str:
        return "\n\n".join(c.text for c in self.chunks) + "\n"

    def of(self, *components: Component) -> str:
        return "\n\n".join(c.text for c in self.chunks if c.component in components)


def fence_lang(path: str) -> str:
    lang = language_for(path)
    if lang:
        return _FENCE_LANG.get(lang, lang)
    return _EXT_LANG.get(os.path.splitext(path)[1].lower(), "")


def fenced(body: str, lang: str = "") -> str:
    longest = max((len(m.group(0)) for m in _TICKS.finditer(body)), default=0) if "```" in body else 0
    fence = "`" * max(3, longest + 1)
    if body and not body.endswith("\n"):
        body += "\n"
    return f"{fence}{lang}\n{body}{fence}"


def split_lines(text: str) -> list[str]:
    lines = text.split("\n")
    if text.endswith("\n"):
        lines.pop()
    return lines


def numbered(lines: list[str], first: int, width: int) -> str:
    return "\n".join(f"{n:>{width}} | {line}" for n, line in enumerate(lines, start=first))


def full_chunk(shown: str, text: str, *, line_numbers: bool = False) -> str:
    body = text
    if line_numbers:
        lines = split_lines(text)
        body = numbered(lines, 1, len(str(max(1, len(lines)))))
    return f"### {shown}\n" + fenced(body, fence_lang(shown))


def slices_chunk(shown: str, text: str, ranges: tuple[LineRange, ...]) -> str:
    """Each range as numbered lines, introduced by its description; ranges past
    the end of the file (it shrank since selection) are cut to it."""
    lines = split_lines(text)
    total = len(lines)
    width = len(str(max(1, min(total, max((r.end for r in ranges), default=1)))))
    parts = [f"### {shown} (lines {', '.join(r.label() for r in ranges)} of {total})"]
    lang = fence_lang(shown)
    for r in ranges:
        start, end = r.start, min(r.end, total)
        head = f"Lines {r.label()}" + (f": {r.description}" if r.description else "")
        if start > total:
            parts.append(f"{head}\n(past the end of the file: it has {total} lines)")
            continue
        parts.append(head + "\n" + fenced(numbered(lines[start - 1 : end], start, width), lang))
    return "\n".join(parts)


def codemap_chunk(shown: str, rendered: str) -> str:
    return f"### {shown}\n" + fenced(rendered.rstrip("\n"), "text")


def unavailable_chunk(shown: str, reason: str) -> str:
    return f"### {shown}\n({reason})"


def tree_text(groups: list[tuple[str, list[tuple[str, str]]]]) -> str:
    """An ASCII tree per root: ``groups`` = [(root title, [(rel path, label)])]."""
    blocks: list[str] = []
    for title, items in groups:
        nested: dict = {}
        for rel, label in items:
            node = nested
            parts = rel.split("/")
            for part in parts[:-1]:
                node = node.setdefault(part + "/", {})
            node[parts[-1]] = label
        lines = [title]

        def visit(node: dict, indent: str, lines: list[str] = lines) -> None:
            keys = sorted(node, key=lambda k: (not k.endswith("/"), k.lower(), k))
            for i, key in enumerate(keys):
                last = i == len(keys) - 1
                value = node[key]
                branch = "└── " if last else "├── "
                if isinstance(value, dict):
                    lines.append(f"{indent}{branch}{key}")
                    visit(value, indent + ("    " if last else "│   "))
                else:
                    lines.append(f"{indent}{branch}{key}{'  ' + value if value else ''}")

        visit(nested, "")
        blocks.append("\n".join(lines))
    return "\n".join(blocks)
