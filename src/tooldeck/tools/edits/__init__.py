"""Edits: apply_patch (V4A, atomic across files) and apply_edits (search/replace
with a matching ladder, or a full rewrite).

The patch pipeline reads in its file names: ``v4a_parser`` (text → typed
operations) → ``locate`` (the fuzz ladder) → ``plan`` (new contents of every
file, no I/O) → ``engine`` (resolve, read, check hashes, one AtomicBatch
write) → ``render`` (A/M/D lines and short diffs). apply_edits has its own
stages: ``recover`` (argument repair), ``match`` (the ladder), ``reindent``.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:  # the apply_patch console script imports this package: keep it light
    from tooldeck.core.tool import Tool
    from tooldeck.runtime import Runtime


def tools(rt: Runtime) -> list[Tool]:
    # lazy: the apply_patch script imports this package: it needs the engine, not pydantic and the tools (~180 ms)
    from tooldeck.tools.edits import edits_tool, patch_tool

    return [patch_tool.build(rt), edits_tool.build(rt)]
