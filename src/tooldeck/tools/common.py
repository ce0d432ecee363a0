"""Helpers every tool domain shares: staleness checks, schema touches,
reading text under the path rules, and writing through the atomic writer
(loaded on the first write: a read-only tool built alone does not load it)."""

from __future__ import annotations

import os
from typing import Any

from tooldeck.core.errors import ErrorCode, ToolError
from tooldeck.workspace.content import content_hash, hash_matches
from tooldeck.workspace.roots import ResolvedPath, Workspace


def check_expected_hash(expected: str | None, data: bytes, shown: str) -> None:
    """Refuse with ``conflict`` when the file changed since the model read it."""
    if expected is None:
        return
    if not hash_matches(expected, data):
        raise ToolError(
            ErrorCode.CONFLICT,
            f"{shown} changed since it was read (expected hash {expected}, now {content_hash(data)}); "
            "read it again and redo the edit",
        )


def set_root_enum(parameters: dict[str, Any], workspace: Workspace, field: str = "root") -> dict[str, Any]:
    """Restrict ``field`` to exactly the configured root ids (seed 000)."""
    props = parameters.get("properties", {})
    if field in props:
        desc = props[field].get("description", "")
        props[field] = {"type": "string", "enum": [r.id for r in workspace.roots]}
        if desc:
            props[field]["description"] = desc
    return parameters


def write_text(
    rp: ResolvedPath,
    text: str,
    *,
    mode: int | None = None,
    state_dir: str | os.PathLike[str] | None = None,
    expect: bytes | None = None,
    expect_absent: bool = False,
) -> bytes:
    """Atomically write ``text`` (UTF-8) to a resolved path; returns the bytes.
    ``expect`` (the bytes the text was computed from) or ``expect_absent``
    make the write a compare-and-swap (:class:`~tooldeck.workspace.atomic.StaleWrite`
    when another writer got there first); ``state_dir`` holds the locks."""
    data = text.encode("utf-8")
    from tooldeck.workspace.atomic import write_file  # lazy: the write path loads on the first write

    write_file(rp.root.path, rp.rel, data, mode=mode, state_dir=state_dir, expect=expect, expect_absent=expect_absent)
    return data


def line_of_offset(text: str, offset: int) -> int:
    """1-based line number of character ``offset`` in ``text``."""
    return text.count("\n", 0, offset) + 1


def resolve_new_file(ws: Workspace, path: str, if_exists: str, *, field_name: str = "path") -> ResolvedPath:
    """Resolve a file about to be created: a directory is refused, and so is an
    existing file unless ``if_exists == "overwrite"``."""
    rp = ws.resolve(path, must_exist=False, write=True, field_name=field_name)
    if rp.exists:
        shown = ws.display(rp.abs)
        if os.path.isdir(rp.abs):
            raise ToolError(ErrorCode.NOT_A_FILE, f"{shown} is a directory; give a file path")
        if if_exists != "overwrite":
            raise ToolError(
                ErrorCode.ALREADY_EXISTS, f'{shown} already exists; pass if_exists="overwrite" to replace it'
            )
    return rp


BOM = "\ufeff"


def split_spelling(text: str) -> tuple[str, str, str]:
    """``(bom, eol, body)``: what :meth:`TextFile.parse` keeps aside and the
    ``\\n`` text it edits (its ``body``), without splitting the text into
    lines — a list of lines costs several times the file in memory."""
    bom = ""
    if text.startswith(BOM):
        bom, text = BOM, text[1:]
    newlines = text.count("\n")
    eol = "\r\n" if newlines and text.count("\r\n") == newlines else "\n"
    if eol == "\r\n":
        text = text.replace("\r\n", "\n")
    return bom, eol, text


def join_spelling(bom: str, eol: str, body: str) -> str:
    """``body`` (``\\n`` line ends) written with line ending ``eol`` and ``bom``."""
    if eol != "\n":
        body = body.replace("\r\n", "\n").replace("\n", eol)
    return bom + body if bom else body
