"""The shipped tool declarations (``tools_manifest.json``), read as data.

Every built-in tool's wire form (name, description, input schema,
annotations) and the domain module that builds it, in the catalog's order,
generated from the live catalog by ``python -m tooldeck.mcp.declared
--write``. Below the hosts so that each may ask which domain a tool needs
before importing any (``tooldeck call`` and ChatMD's built-ins build that
domain alone; the stdio server serves a cold ``tools/list`` from it).

Authority: the file is the installed package's data, read by path next to
this module; nothing under a root or in the state directory changes it.
Standard library only: this runs on start-up paths before pydantic.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

MANIFEST = Path(__file__).with_name("tools_manifest.json")
FORMAT = 1


def load(path: Path = MANIFEST) -> list[dict[str, Any]] | None:
    """The manifest's entries (``{"domain", "tool"}``), None when it is
    missing, unreadable or of another format (the catalog answers then)."""
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None
    if not isinstance(data, dict) or data.get("format") != FORMAT or not isinstance(data.get("tools"), list):
        return None
    return data["tools"]  # type: ignore[no-any-return]


def domain_of(name: str, entries: list[dict[str, Any]] | None = None) -> str | None:
    """The domain module that builds the built-in tool ``name``, or None for a
    name the manifest does not hold (a ``[shell]`` table's tool, a typo: the
    whole catalog must say)."""
    found = load() if entries is None else entries
    return next((e["domain"] for e in found or () if e["tool"]["name"] == name), None)
