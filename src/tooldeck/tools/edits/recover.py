"""Argument recovery for apply_edits: repair what models commonly send wrong.

Seen in practice: the arguments wrapped in ``{"apply_edits": {...}}`` (or
``arguments`` / ``input``), other tools' names for the fields (``file_path``,
``old_string``/``new_string``, ``replace_all``), ``edits`` sent as a JSON
string or as one object instead of a list, and raw newlines or tabs inside
JSON strings. Each repair only renames or reshapes; two spellings of one
field with different values are an error, never a silent choice.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import Any

from tooldeck.core.errors import invalid_arguments

WRAPPERS = ("apply_edits", "arguments", "args", "input", "params", "parameters")

TOP_ALIASES: dict[str, tuple[str, ...]] = {
    "path": ("file", "file_path", "filepath", "filename", "file_name", "target_file", "target_path"),
    "search": ("old_string", "old_str", "old_text", "find", "search_text", "original"),
    "replace": ("new_string", "new_str", "new_text", "replacement", "replace_with", "replace_text"),
    "all": ("replace_all", "all_occurrences", "global"),
    "rewrite": ("content", "new_content", "file_content", "full_content"),
    "expected_hash": ("hash", "file_hash", "content_hash"),
}
EDIT_ALIASES = {k: TOP_ALIASES[k] for k in ("search", "replace", "all")}


def _json(text: str, what: str) -> Any:
    try:
        return json.loads(text, strict=False)  # strict=False: raw newlines/tabs inside strings
    except json.JSONDecodeError as exc:
        raise invalid_arguments(
            f"{what} is not valid JSON ({exc.msg} at line {exc.lineno} column {exc.colno})", field=what
        ) from exc


def _rename(data: dict[str, Any], aliases: Mapping[str, tuple[str, ...]], where: str) -> dict[str, Any]:
    out = dict(data)
    for canonical, names in aliases.items():
        for alias in names:
            if alias not in out or alias in aliases:
                continue
            value = out.pop(alias)
            if canonical in out and out[canonical] != value:
                raise invalid_arguments(
                    f"{where}`{alias}` and `{canonical}` are the same field with different values; send one",
                    field=canonical,
                )
            out[canonical] = value
    return out


def _edit(item: Any, index: int) -> Any:
    if isinstance(item, str) and item.strip().startswith("{"):
        item = _json(item, f"edits.{index}")
    if isinstance(item, dict):
        return _rename(item, EDIT_ALIASES, f"edits.{index}: ")
    return item


def recover(raw: str | bytes | Mapping[str, Any] | None) -> dict[str, Any]:
    """The arguments as a dict ready for the input model, with repairs applied."""
    if raw is None:
        return {}
    if isinstance(raw, bytes):
        try:
            raw = raw.decode("utf-8")
        except UnicodeDecodeError as exc:
            raise invalid_arguments("arguments are not valid UTF-8") from exc
    data: Any = raw
    if isinstance(data, str):
        if not data.strip():
            return {}
        data = _json(data, "arguments")
    for _ in range(3):
        if isinstance(data, str) and data.strip().startswith("{"):
            data = _json(data, "arguments")
        if isinstance(data, Mapping) and len(data) == 1:
            key, value = next(iter(data.items()))
            if key in WRAPPERS and isinstance(value, Mapping | str):
                data = value
                continue
        break
    if not isinstance(data, Mapping):
        raise invalid_arguments(f"arguments must be a JSON object, got {type(data).__name__}")
    out = _rename(dict(data), TOP_ALIASES, "")
    edits = out.get("edits")
    if isinstance(edits, str):
        edits = _json(edits, "edits")
    if isinstance(edits, dict):
        edits = [edits]
    if isinstance(edits, list):
        out["edits"] = [_edit(e, i) for i, e in enumerate(edits)]
    elif edits is not None:
        out["edits"] = edits
    return out
