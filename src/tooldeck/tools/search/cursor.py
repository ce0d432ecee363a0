"""Stateless cursors: the query, the section being paged and the offset,
packed into one short string the model passes back.

Both engines order results deterministically (roots in workspace order, paths
in walker order) and count exactly, so an offset is all a continuation needs;
nothing is kept in memory, and a cursor works across processes (``tooldeck
call`` runs one process per call). The ``fs:`` prefix keeps it apart from the
Toolbox pager's ``p:`` cursors.
"""

from __future__ import annotations

import base64
import binascii
import json
from typing import Any, Literal

from tooldeck.core import invalid_arguments

PREFIX = "fs:"
Section = Literal["content", "path"]
_SECTIONS = ("content", "path")


def encode(query: dict[str, Any], section: Section, offset: int) -> str:
    payload = json.dumps({"q": query, "s": section, "o": offset}, separators=(",", ":"), ensure_ascii=False)
    return PREFIX + base64.urlsafe_b64encode(payload.encode("utf-8")).decode("ascii").rstrip("=")


def decode(cursor: str) -> tuple[dict[str, Any], Section, int]:
    """(query fields, section, offset), or ``invalid_arguments`` naming ``cursor``."""
    bad = invalid_arguments(
        "field `cursor`: not a file_search cursor; copy it exactly from the last line of a file_search result, "
        "or drop it to start a new search",
        field="cursor",
    )
    if not cursor.startswith(PREFIX):
        raise bad
    body = cursor[len(PREFIX) :]
    try:
        data = json.loads(base64.urlsafe_b64decode(body + "=" * (-len(body) % 4)))
    except (binascii.Error, ValueError, UnicodeDecodeError) as exc:
        raise bad from exc
    if not isinstance(data, dict):
        raise bad
    query, section, offset = data.get("q"), data.get("s"), data.get("o")
    if not isinstance(query, dict) or section not in _SECTIONS or not isinstance(offset, int) or offset < 0:
        raise bad
    return query, section, offset
