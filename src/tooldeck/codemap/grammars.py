"""Loading grammars and compiled queries, once per process.

tree-sitter is imported here, lazily: nothing imports this module until a
file is actually parsed. A ``Parser`` is not thread-safe, so each thread gets
its own; ``Language`` and ``Query`` objects are shared.
"""

from __future__ import annotations

import functools
import importlib
import os
import threading
from typing import Any

from tooldeck.codemap.specs import SPECS, LangSpec

QUERY_DIR = os.path.join(os.path.dirname(__file__), "queries")  # os.path: pathlib costs a worker ~7 ms to import
_local = threading.local()


def spec(language: str) -> LangSpec:
    return SPECS[language]


@functools.cache
def language(name: str) -> Any:
    from tree_sitter import Language

    sp = SPECS[name]
    module = importlib.import_module(sp.module)
    return Language(getattr(module, sp.function)())


def _read_query(file_stem: str) -> str:
    """A query file; a first line ``; inherits: other`` prepends ``other``'s query."""
    with open(os.path.join(QUERY_DIR, f"{file_stem}.scm"), encoding="utf-8") as fh:
        source = fh.read()
    first = source.split("\n", 1)[0]
    if first.startswith("; inherits:"):
        base = first.split(":", 1)[1].strip()
        source = _read_query(base) + "\n" + source
    return source


def query_source(name: str) -> str:
    """The tooldeck definitions query of ``name``."""
    sp = SPECS[name]
    return _read_query(sp.query_name or name)


@functools.cache
def definitions_query(name: str) -> Any:
    from tree_sitter import Query

    return Query(language(name), query_source(name))


@functools.cache
def skip_query(name: str) -> Any:
    """Comments and strings (``@skip``), for languages without a lexer
    (:mod:`tooldeck.codemap.lexer`): this query walks the whole tree."""
    from tree_sitter import Query

    skip = " ".join(f"({t})" for t in SPECS[name].skip_types)
    return Query(language(name), f"[{skip}] @skip")


def skip_captures(name: str, root: Any) -> list[Any]:
    from tree_sitter import QueryCursor

    return QueryCursor(skip_query(name)).captures(root).get("skip", [])


def parser(name: str) -> Any:
    """This thread's parser for ``name``."""
    parsers: dict[str, Any] | None = getattr(_local, "parsers", None)
    if parsers is None:
        parsers = _local.parsers = {}
    p = parsers.get(name)
    if p is None:
        from tree_sitter import Parser

        p = parsers[name] = Parser(language(name))
    return p


def parse(name: str, data: bytes, ranges: list[Any] | None = None) -> Any:
    """``data`` parsed; with ``ranges`` (``tree_sitter.Range``), only those
    parts of it are read, in the document's own coordinates."""
    p = parser(name)
    if not ranges:
        return p.parse(data)
    p.included_ranges = ranges
    try:
        return p.parse(data)
    finally:
        p.included_ranges = []  # the whole document again, for the next file
