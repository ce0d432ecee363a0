"""The kinds a codemap symbol may have, and the sets extraction sorts them by.

Apart from :mod:`tooldeck.codemap.model` so that a worker process, which only
extracts and encodes, imports them without the model's dataclasses (their
creation was a third of a worker's tooldeck imports).
"""

from __future__ import annotations

# Kinds a Symbol may have. "method" is a function whose parent is class-like;
# "impl" is a Rust impl block (it groups methods under the implemented type).
KINDS: tuple[str, ...] = (
    "class",
    "struct",
    "interface",
    "trait",
    "enum",
    "type",
    "impl",
    "module",
    "function",
    "method",
    "property",
    "constant",
    "variable",
    "export",
    "macro",
)

# Kinds whose members are methods/properties (a function inside one is a method).
CLASS_LIKE: frozenset[str] = frozenset({"class", "struct", "interface", "trait", "enum", "impl"})
# Kinds whose inside is a body: definitions nested there are not part of the map.
BODY_KINDS: frozenset[str] = frozenset({"function", "method"})
# Kinds shown with their value (cut short) rather than cut at a body.
VALUE_KINDS: frozenset[str] = frozenset({"property", "constant", "variable", "type", "export", "macro"})
