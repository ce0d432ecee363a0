"""Which files get no codemap: binary, not UTF-8, minified.

Decided from the bytes alone, before any parse (a minified bundle would cost
a long parse for a codemap nobody can read).
"""

from __future__ import annotations

from tooldeck.workspace.content import looks_binary

MINIFIED_AVG_LINE = 300  # bytes per line on average above which a file is treated as minified
MINIFIED_MIN_BYTES = 2048


def unfit(rel: str, data: bytes) -> str | None:
    """Why ``data`` gets no codemap (binary, not UTF-8, minified), or None."""
    if looks_binary(data):
        return "binary"
    try:
        data.decode("utf-8")
    except UnicodeDecodeError:
        return "not UTF-8 text"
    name = rel.rsplit("/", 1)[-1]
    if ".min." in name:
        return "minified"
    if len(data) >= MINIFIED_MIN_BYTES:
        lines = data.count(b"\n") + 1
        if len(data) / lines > MINIFIED_AVG_LINE:
            return "minified (very long lines)"
    return None
