"""Checking what git read from the working tree before it is shown.

git opens working-tree files by name. If a folder of the checkout is swapped
for a symbolic link while ``git diff`` runs, git can read a file outside the
checkout (it checks for leading symlinks, then opens the path later). So the
new side of a working-tree patch (its context and ``+`` lines) is compared
with the file read again through tooldeck's safe path
(:func:`tooldeck.workspace.content.read_lines`: from the checkout's top, no
link followed); a patch that disagrees is replaced by a note, never shown.
"""

from __future__ import annotations

import os
import re

from tooldeck.core.errors import ToolError
from tooldeck.workspace.content import read_lines

_HUNK = re.compile(r"^@@ -\d+(?:,\d+)? \+(\d+)(?:,\d+)? @@")


def new_side_lines(patch: str) -> dict[int, str] | None:
    """New-file line number → text for the context and ``+`` lines of a
    unified patch; None when it has no new side to check (deleted, binary,
    combined)."""
    if patch.startswith("diff --cc ") or "\n+++ /dev/null" in patch:
        return None
    out: dict[int, str] = {}
    number = 0
    in_hunk = False
    for line in patch.split("\n"):
        m = _HUNK.match(line)
        if m:
            number, in_hunk = int(m.group(1)), True
            continue
        if not in_hunk or not line or line.startswith("\\"):
            continue
        if line[0] in " +":
            out[number] = line[1:]
            number += 1
        elif line[0] != "-":
            in_hunk = False  # the next file's header or trailing text
    return out


def patch_matches_worktree(toplevel: str, rel: str, patch: str) -> bool:
    """Whether the patch's new side equals the working-tree file read safely."""
    wanted = new_side_lines(patch)
    if not wanted:
        return True
    try:
        safe = read_lines(os.path.join(toplevel, rel), rel, set(wanted), root=toplevel)
    except (ToolError, OSError):
        return False
    # git prints the line's bytes; a CRLF file keeps its \r in both
    return all(safe.get(n) == text for n, text in wanted.items())


def unverified_note(header: str) -> str:
    return header + "(this file changed while git read it; run the diff again)\n"
