"""Structure: get_code_structure (codemaps), find_symbol, find_references.

The tree-sitter work lives in :mod:`tooldeck.codemap`; these modules only turn
arguments into service calls and results into text. Nothing heavy is
imported here: the service (and tree-sitter) load on the first call.
"""

from __future__ import annotations

from tooldeck.core.tool import Tool
from tooldeck.runtime import Runtime
from tooldeck.tools.structure import code_structure, symbols


def tools(rt: Runtime) -> list[Tool]:
    return [code_structure.build(rt), *symbols.build(rt)]
