"""Workspace services: roots and path rules, ignore rules, walking, safe reads,
atomic writes and token counting. Knows nothing of tools or hosts.

The public names are loaded on first use (module ``__getattr__``, as
:mod:`tooldeck.core` does): importing one module of the package, say
``tooldeck.workspace.roots`` for a server's roots, does not load the write
path (atomic writes, the journal, locks), which a start of ``tooldeck serve``
does not need before its first write.
"""

from __future__ import annotations

import importlib
import sys
import types
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from tooldeck.workspace.atomic import AtomicBatch, remove_file, write_file
    from tooldeck.workspace.content import content_hash, decode_text, hash_matches, read_bytes, read_text
    from tooldeck.workspace.ignore import IgnoreRules
    from tooldeck.workspace.roots import ResolvedPath, Root, Workspace, make_root
    from tooldeck.workspace.walk import Entry, walk, walk_files

_HOMES: dict[str, str] = {  # public name -> the module of tooldeck.workspace that defines it
    "AtomicBatch": "atomic",
    "remove_file": "atomic",
    "write_file": "atomic",
    "content_hash": "content",
    "decode_text": "content",
    "hash_matches": "content",
    "read_bytes": "content",
    "read_text": "content",
    "IgnoreRules": "ignore",
    "ResolvedPath": "roots",
    "Root": "roots",
    "Workspace": "roots",
    "make_root": "roots",
    "Entry": "walk",
    "walk": "walk",
    "walk_files": "walk",
}

__all__ = [
    "AtomicBatch",
    "Entry",
    "IgnoreRules",
    "ResolvedPath",
    "Root",
    "Workspace",
    "content_hash",
    "decode_text",
    "hash_matches",
    "make_root",
    "read_bytes",
    "read_text",
    "remove_file",
    "walk",
    "walk_files",
    "write_file",
]


def __getattr__(name: str) -> Any:
    home = _HOMES.get(name)
    if home is None:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    value = getattr(importlib.import_module(f"{__name__}.{home}"), name)
    globals()[name] = value  # the next lookup is a plain global
    return value


def __dir__() -> list[str]:
    return sorted(set(globals()) | set(__all__))


class _Package(types.ModuleType):
    """Importing the submodule ``tooldeck.workspace.walk`` sets the package's
    attribute ``walk`` to it; the public name ``walk`` is the function."""

    def __setattr__(self, name: str, value: Any) -> None:
        if name in _HOMES and isinstance(value, types.ModuleType):
            return
        super().__setattr__(name, value)


sys.modules[__name__].__class__ = _Package
