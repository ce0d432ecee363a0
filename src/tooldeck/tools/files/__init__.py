"""Files: read_file, read_directory, get_file_tree, file_actions,
append_to_file, find_and_replace."""

from __future__ import annotations

from tooldeck.core.tool import Tool
from tooldeck.runtime import Runtime


def tools(rt: Runtime) -> list[Tool]:
    # lazy: the package stays light so that build_alone loads one tool's module for a first call
    from tooldeck.tools.files import actions, listing, read, tree

    return [read.build(rt), listing.build(rt), tree.build(rt), *actions.build(rt)]


def build_alone(rt: Runtime, name: str) -> Tool | None:
    """The tool ``name`` built alone, as :func:`tools` builds it, when it is one
    of the read-only tools a client calls first (the stdio server answers such
    a call before the rest of the catalog is built, importing only its
    module); None for the others (build the domain)."""
    if name == "read_file":
        from tooldeck.tools.files import read  # lazy: a first call loads its own tool's module only

        return read.build(rt)
    if name == "read_directory":
        from tooldeck.tools.files import listing  # lazy: a first call loads its own tool's module only

        return listing.build(rt)
    if name == "get_file_tree":
        from tooldeck.tools.files import tree  # lazy: a first call loads its own tool's module only

        return tree.build(rt)
    return None
