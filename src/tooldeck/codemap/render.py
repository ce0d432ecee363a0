"""Rendering a codemap as the text shown to models.

::

    src/app.py  (python)
    imports: os, typing.Any, .models.User
    class Server(Base)  L12
      def __init__(self, host: str, port: int = 80)  L15
      prop timeout: float = 3.0  L13
    def main(argv: list[str]) -> int  L40

One line per definition: its signature, then ``L<line>``; members indented
under their parent. Bodies never appear (extraction never keeps them).
"""

from __future__ import annotations

from tooldeck.codemap.model import Codemap, Symbol

MAX_IMPORTS = 16  # the first imports say what a file depends on; the rest is a count


# Dunder methods whose signature says something a reader needs (construction, calling).
_KEPT_DUNDERS = frozenset({"__init__", "__new__", "__call__", "__post_init__"})


def _fold_label(sym: Symbol) -> str | None:
    """``private`` for definitions private by convention (``_x``, ``#x``) at
    any depth, ``dunder`` for dunder attributes and protocol methods
    (``__repr__``, ``__slots__``), None for definitions shown in full."""
    if sym.name[:1] not in "_#":
        return None
    if sym.name.startswith("__") and sym.name.endswith("__") and len(sym.name) > 4:
        return None if sym.name in _KEPT_DUNDERS or sym.depth == 0 else "dunder"
    return "private"


def render(cm: Codemap, *, shown_path: str | None = None) -> str:
    """The codemap as text. In a class, private members (``_name``) and
    dunders other than ``__init__``/``__new__``/``__call__`` are folded into
    one ``private:`` / ``dunder:`` line each (name and line): their signatures
    rarely matter to a reader of the API, and find_symbol gives them in full."""
    lines = [f"{shown_path or cm.path}  ({cm.language})"]
    if cm.imports:
        shown = cm.imports[:MAX_IMPORTS]
        more = len(cm.imports) - len(shown)
        lines.append("imports: " + ", ".join(shown) + (f", … {more} more" if more > 0 else ""))
    folded: dict[tuple[str, str | None, int], tuple[int, list[str]]] = {}  # (label, parent, depth) -> (line, names)
    last: tuple[int, str] | None = None
    hidden_below = -1  # depth of a folded private container: its members are not shown
    for sym in cm.symbols:
        if hidden_below >= 0:
            if sym.depth > hidden_below:
                continue
            hidden_below = -1
        key = (sym.line, sym.signature)
        if key == last:  # one statement defining several names (attr_reader :a, :b)
            continue
        last = key
        label = _fold_label(sym)
        if label is not None:
            if label == "private":
                hidden_below = sym.depth
            slot = (label, sym.parent, sym.depth)
            if slot not in folded:
                folded[slot] = (len(lines), [])
                lines.append("")  # filled below
            folded[slot][1].append(f"{sym.name} L{sym.line}")
            continue
        lines.append(f"{'  ' * sym.depth}{sym.signature}  L{sym.line}")
    for (label, _parent, depth), (index, names) in folded.items():
        lines[index] = f"{'  ' * depth}{label}: {', '.join(names)}"
    if len(lines) == 1 or (len(lines) == 2 and cm.imports):
        lines.append("(no definitions)")
    return "\n".join(lines)
