"""Rendering a codemap as the text shown to models.

::

    src/app.py  (python)
    imports: os, typing, .models.{User, Group}
    private: _registry, _load
    12 class Server(Base)
    13   prop timeout: float = 3.0
    15   def __init__(self, host: str, port: int = 80)
      dunder: __repr__, __eq__
    40 def main(argv: list[str]) -> int

One line per definition: the line of its name, then its signature, members
indented under their parent. Bodies never appear (extraction never keeps
them). What is folded or summarised, and why: docs/codemaps.md.
"""

from __future__ import annotations

from tooldeck.codemap.model import Codemap, Symbol

MAX_IMPORTS = 16  # the first imports say what a file depends on; the rest is a count
# kinds folded with the dunders when their name is a dunder at module level (`__all__`, `__version__`)
_VALUE_KINDS = frozenset({"constant", "variable", "export", "property"})


# Dunder methods whose signature says something a reader needs (construction, calling).
_KEPT_DUNDERS = frozenset({"__init__", "__new__", "__call__", "__post_init__"})


def _fold_label(sym: Symbol) -> str | None:
    """``private`` for definitions private by convention (``_x``, ``#x``) at
    any depth, ``dunder`` for dunder attributes and protocol methods
    (``__repr__``, ``__slots__``), None for definitions shown in full."""
    if sym.name[:1] not in "_#":
        return None
    if sym.name.startswith("__") and sym.name.endswith("__") and len(sym.name) > 4:
        if sym.name in _KEPT_DUNDERS or (sym.depth == 0 and sym.kind not in _VALUE_KINDS):
            return None  # how an object is built/called; a module's __getattr__
        return "dunder"
    return "private"


def render(cm: Codemap, *, shown_path: str | None = None) -> str:
    """The codemap as text. Private definitions (``_name``) and dunders other
    than ``__init__``/``__new__``/``__call__`` are folded into one
    ``private:`` / ``dunder:`` line per scope (names only): their signatures
    rarely matter to a reader of the API, and find_symbol gives them in full
    with their lines."""
    lines = [f"{shown_path or cm.path}  ({cm.language})"]
    if cm.imports:
        modules = summarise_imports(cm.imports, cm.language)
        shown = modules[:MAX_IMPORTS]
        more = len(modules) - len(shown)
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
            folded[slot][1].append(sym.name)
            continue
        lines.append(f"{sym.line} {'  ' * sym.depth}{sym.signature}")
    for (label, _parent, depth), (index, names) in folded.items():
        lines[index] = f"{'  ' * depth}{label}: {', '.join(names)}"
    if len(lines) == 1 or (len(lines) == 2 and cm.imports):
        lines.append("(no definitions)")
    return "\n".join(lines)


# languages whose absolute imports are summarised to their top-level package (a distribution, a crate)
_BY_PACKAGE = {"python": ".", "rust": "::"}
_RELATIVE = (".", "crate::", "self::", "super::")


def summarise_imports(imports: list[str], language: str = "") -> list[str]:
    """What a file depends on, one entry per module, in order of first
    appearance: the names a file takes from a module say little about its API.

    * Python and Rust: an absolute import is shown as its top-level package
      (``typing.{Any, cast}``, ``collections.abc.Callable`` → ``typing``,
      ``collections``; ``std::collections::HashMap`` → ``std``): which
      libraries a file uses. Relative imports stay whole (``.models.{User,
      Group}``, ``crate::config::Config`` point into this package), less a
      last name that is capitalised (a class).
    * Others: ``a.b.Class`` → ``a.b``, ``a::{x, y}`` → ``a``; module paths
      (``./util``, ``net/http``) as they are.
    """
    top = _BY_PACKAGE.get(language)
    seen: dict[str, None] = {}
    for imp in imports:
        by_package = top is not None and not imp.startswith(_RELATIVE)
        seen.setdefault((imp.split(top, 1)[0] or imp) if by_package else _drop_class(imp), None)
    return list(seen)


def _drop_class(imp: str) -> str:
    for sep in (".", "::"):
        if sep + "{" in imp:
            head, _, names = imp.partition(sep + "{")
            if all(n.strip()[:1].isupper() for n in names.rstrip("}").split(",")):
                return head
            return imp
        head, found, last = imp.rpartition(sep)
        if found and head.strip("."):
            return head if last[:1].isupper() else imp
    return imp
