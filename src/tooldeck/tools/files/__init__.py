"""Files: read_file, read_directory, get_file_tree, file_actions,
append_to_file, find_and_replace."""

from __future__ import annotations

from tooldeck.core.tool import Tool
from tooldeck.runtime import Runtime
from tooldeck.tools.files import actions, listing, read, tree


def tools(rt: Runtime) -> list[Tool]:
    return [read.build(rt), listing.build(rt), tree.build(rt), *actions.build(rt)]
