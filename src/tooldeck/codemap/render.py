"""Rendering a codemap as the text shown to models.

``⇥`` stands for a tab::

    src/app.py  (+2 private)
    dunder: all
    5 DEFAULT_PORT=8080
    12 class Server(Base)
    13⇥timeout:float
    14⇥retries
    15⇥__init__(host:str,port:int=80)
    20⇥@property address()->str
    ⇥dunder: iter len
    40 main(argv:list[str])->int

One line per definition: the line of its name, then its signature, members
under their parent one tab deeper (a tab after the number costs no token of
its own: it joins the name's). Bodies never appear (extraction never keeps
them). What is kept, counted, compacted or dropped, and why:
docs/codemaps.md.
"""

from __future__ import annotations

import re

from tooldeck.codemap import repeats
from tooldeck.codemap.languages import language_for
from tooldeck.codemap.model import Codemap, Symbol

# The text is rendered on every call, never stored: a format change needs no
# cache bump (stored payloads carry cache.extractor_version, which hashes extract.py).
MAX_VALUE = 16  # a module constant's value is shown when this short, else `=…` (its name and type always whole)
# kinds whose text after ` = ` is a value, not a signature (at module level with a dunder
# name, `__all__`, `__version__`, they are folded with the dunders)
_VALUE_KINDS = frozenset({"constant", "variable", "export", "property"})

# Dunder methods whose signature says something a reader needs (construction, calling).
_KEPT_DUNDERS = frozenset({"__init__", "__new__", "__call__", "__post_init__"})
# dunders nearly every class has, or that say nothing about how it is used: not listed
_PLAIN_DUNDERS = frozenset(
    "__repr__ __str__ __eq__ __ne__ __hash__ __del__ __slots__ __module__ __doc__ __dict__ __weakref__ "
    "__init_subclass__ __class_getitem__ __reduce__ __reduce_ex__ __getstate__ __setstate__ __copy__ "
    "__deepcopy__ __sizeof__ __format__ __dir__ __rich_repr__ __annotations__ __match_args__ __qualname__".split()
)


def _fold_label(sym: Symbol) -> str | None:
    """``private`` for definitions private by convention (``_x``, ``#x``) at
    any depth, ``dunder`` for dunder attributes and protocol methods
    (``__iter__``, ``__slots__``), None for definitions shown in full."""
    if sym.name[:1] not in "_#":
        return None
    if sym.name.startswith("__") and sym.name.endswith("__") and len(sym.name) > 4:
        if sym.name in _KEPT_DUNDERS or (sym.depth == 0 and sym.kind not in _VALUE_KINDS):
            return None  # how an object is built/called; a module's __getattr__
        return "dunder"
    return "private"


def render(cm: Codemap, *, shown_path: str | None = None) -> str:
    """The codemap as text: every public definition on its own line. Private
    definitions (``_name``) are counted on the first line; dunders other than
    ``__init__``/``__new__``/``__call__`` are listed by bare name on one
    ``dunder:`` line per scope (the ones every class has, ``__repr__``,
    ``__eq__``..., left out). find_symbol gives any of them in full with its
    line."""
    path = shown_path or cm.path
    lines = [path if language_for(path) == cm.language else f"{path}  ({cm.language})"]
    dunders: dict[tuple[str | None, int], tuple[int, list[str]]] = {}  # (parent, depth) -> (line index, names)
    private: set[str] = set()
    last: tuple[int, str] | None = None
    hidden_below = -1  # depth of a private container: its members are not shown
    shown: list[tuple[int, str]] = []  # (index in lines, line number and indent) of each definition row
    python = cm.language == "python"
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
        if label == "private":
            hidden_below = sym.depth
            private.add(f"{sym.parent}.{sym.name}")
        elif label == "dunder":
            if sym.name not in _PLAIN_DUNDERS:
                slot = dunders.setdefault((sym.parent, sym.depth), (len(lines), []))
                if slot[0] == len(lines):
                    lines.append("")  # filled below
                slot[1].append(sym.name.strip("_"))
        else:
            sep = "\t" * sym.depth if sym.depth else " "
            shown.append((len(lines), f"{sym.line}{sep}"))
            lines.append(signature(sym, python))
    if shown and not any("«" in lines[i] or "»" in lines[i] for i, _ in shown):  # (the marks would be ambiguous)
        for (index, head), sig in zip(shown, repeats.fold([lines[i] for i, _ in shown]), strict=True):
            lines[index] = head + sig
    else:
        for index, head in shown:
            lines[index] = head + lines[index]
    for (_parent, depth), (index, names) in dunders.items():
        lines[index] = f"{chr(9) * depth}dunder: {' '.join(dict.fromkeys(names))}"
    if private:
        lines[0] += f"  (+{len(private)} private)"
    if len(lines) == 1:
        lines.append("(no definitions)")
    return "\n".join(lines)


def signature(sym: Symbol, python: bool = False) -> str:
    """A definition's signature as shown: compacted (:func:`compact`); a
    Python function without its ``def`` keyword (the parentheses say it is
    callable); a module constant's value only when short, a class
    attribute's never (its annotation is its signature)."""
    sig = sym.signature
    if python and sym.kind in ("function", "method"):
        at = sig.find("def " + sym.name)
        if at == 0 or (at > 0 and sig[at - 1] == " "):
            sig = sig[:at] + sig[at + 4 :]
    elif sym.kind in _VALUE_KINDS:
        sig = _cut_value(sig, sym.depth > 0)
    return compact(sig)


# a value that is a function (a class field `onClick = (e) => {…}`, `key = lambda x: …`):
# its parameters are its signature
_FUNCTION_VALUE = re.compile(r"(?:async\s*)?(?:\(.*=>|function\b|lambda\b|[A-Za-z_$][\w$]*\s*=>)")


def _cut_value(sig: str, member: bool) -> str:
    """``X = <value>``: a member's value → nothing, a module value longer than
    :data:`MAX_VALUE` characters → ``…``; a name and its annotation are
    never cut, nor a value that is a function (its parameters)."""
    at = sig.find(" = ")
    if at < 0 or _FUNCTION_VALUE.match(sig, at + 3):
        return sig
    if member:
        return sig[:at]
    return sig if len(sig) - at - 3 <= MAX_VALUE else f"{sig[: at + 3]}…"


# a string literal (kept as written) or a space-padded operator whose spaces carry nothing
_COMPACT = re.compile(r"""("(?:[^"\\]|\\.)*"|'(?:[^'\\]|\\.)*'|`[^`]*`)|\s*(=>|->|==|!=|<=|>=|=|\|)\s*|([:,])\s+""")


def compact(sig: str) -> str:
    """Spaces around ``=``, ``|``, ``->``, ``=>`` and after ``:`` and ``,``
    removed outside string literals: ``f(a: int = 3, b: str | None) -> str``
    → ``f(a:int=3,b:str|None)->str``. Nothing else changes: each of those
    spaces is a token of its own more often than not, and says nothing."""
    if " " not in sig:
        return sig
    return _COMPACT.sub(_compact_one, sig)


def _compact_one(m: re.Match[str]) -> str:
    if m.group(1) is not None:
        return m.group(1)
    return m.group(2) or m.group(3)
