"""Search: file_search (paths and content; ripgrep with a pure-Python fallback)."""

from __future__ import annotations

from tooldeck.core.tool import Tool
from tooldeck.runtime import Runtime
from tooldeck.tools.search import file_search


def tools(rt: Runtime) -> list[Tool]:
    return [file_search.build(rt)]
