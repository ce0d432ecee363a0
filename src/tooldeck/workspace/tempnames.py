"""The one name pattern of tooldeck's own temporary files inside a root.

A write stages its new content in a file named ``.tooldeck-tmp-<batch>-<n>``
next to the target and renames it over the target; a backup that cannot live
in the journal (another filesystem) gets the same prefix. Such a file exists
only while a write runs, or after a crash until the next tooldeck process
cleans up. Every listing (the walker, ``read_directory``, ripgrep) hides names
with this prefix, so a model never sees one, and recovery can recognise them.
"""

from __future__ import annotations

TEMP_PREFIX = ".tooldeck-tmp-"
TEMP_GLOB = TEMP_PREFIX + "*"


def is_temp_name(name: str) -> bool:
    """Whether a directory entry is one of tooldeck's temporary files."""
    return name.startswith(TEMP_PREFIX)


def temp_name(batch_id: str, index: int, suffix: str = "") -> str:
    """The name of the ``index``-th staged file of batch ``batch_id``."""
    return f"{TEMP_PREFIX}{batch_id}-{index}{suffix}"
