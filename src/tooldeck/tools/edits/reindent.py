"""Re-indent a replacement to the block it replaces.

When a search block matched only after ignoring indentation, the model wrote
it at the wrong depth (or with spaces where the file has tabs), and its
replacement has the same fault. Each replacement line keeps its depth
*relative to the search block's first line*, re-based on the matched block's
real first-line indentation, spelt with the file's indent character. Pure.
"""

from __future__ import annotations

import itertools

TAB = 4  # columns per tab when comparing depths


def leading(line: str) -> str:
    return line[: len(line) - len(line.lstrip(" \t"))]


def width(indent: str) -> int:
    col = 0
    for ch in indent:
        col = (col // TAB + 1) * TAB if ch == "\t" else col + 1
    return col


def _first_indent(lines: list[str]) -> str | None:
    for line in lines:
        if line.strip():
            return leading(line)
    return None


def uses_tabs(lines: list[str]) -> bool:
    tabbed = spaced = 0
    for line in lines:
        ind = leading(line)
        if ind.startswith("\t"):
            tabbed += 1
        elif ind.startswith(" "):
            spaced += 1
    return tabbed > spaced


def _spell(columns: int, tabs: bool) -> str:
    if columns <= 0:
        return ""
    if tabs:
        return "\t" * (columns // TAB) + " " * (columns % TAB)
    return " " * columns


def _unit(lines: list[str]) -> int | None:
    """The block's indent step: the smallest depth difference between lines."""
    depths = sorted({width(leading(x)) for x in lines if x.strip()})
    steps = [b - a for a, b in itertools.pairwise(depths) if b > a]
    return min(steps) if steps else None


def reindent(replacement: list[str], search: list[str], matched: list[str]) -> list[str]:
    """``replacement`` moved from ``search``'s indentation to ``matched``'s.

    Depths are kept relative to the first non-blank line; when both blocks
    show an indent step (2 vs 4 columns, say) relative depths are scaled to
    the file's step. Tabs are used when the matched block is tab-indented."""
    s_ind = _first_indent(search)
    m_ind = _first_indent(matched)
    if s_ind is None or m_ind is None:
        return list(replacement)
    tabs = uses_tabs(matched) if any(leading(x) for x in matched) else "\t" in m_ind
    if s_ind == m_ind and tabs == uses_tabs(search) and _unit(search) == _unit(matched):
        return list(replacement)
    base, s_base = width(m_ind), width(s_ind)
    s_unit, m_unit = _unit(search), _unit(matched)
    scale = (m_unit / s_unit) if s_unit and m_unit else 1.0
    out: list[str] = []
    for line in replacement:
        if not line.strip():
            out.append("")
            continue
        rel = round((width(leading(line)) - s_base) * scale)
        out.append(_spell(base + rel, tabs) + line.lstrip(" \t"))
    return out
