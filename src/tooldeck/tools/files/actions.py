"""Small file edits: file_actions (create / delete / move), append_to_file,
find_and_replace. Every write goes through the atomic writer; every tool takes
an optional ``expected_hash`` and refuses with ``conflict`` on a stale file.
"""

from __future__ import annotations

import os
from typing import Literal

from pydantic import Field, model_validator

from tooldeck.core import ToolError, ToolInput, invalid_arguments, tool
from tooldeck.core.errors import ErrorCode
from tooldeck.core.tool import Tool
from tooldeck.runtime import Runtime
from tooldeck.tools.common import (
    check_expected_hash,
    join_spelling,
    line_of_offset,
    resolve_new_file,
    split_spelling,
    write_text,
)
from tooldeck.workspace.atomic import AtomicBatch, retrying
from tooldeck.workspace.content import content_hash, decode_text, read_bytes
from tooldeck.workspace.roots import ResolvedPath

HASH_DOC = "Hash from read_file; the call is refused with `conflict` if the file changed since."


class FileActionsInput(ToolInput):
    action: Literal["create", "delete", "move"] = Field(description="create, delete or move a file.")
    path: str = Field(description="The file (source for move).")
    content: str | None = Field(None, description="Content for create (default empty).")
    new_path: str | None = Field(None, description="Destination for move.")
    if_exists: Literal["error", "overwrite"] = Field(
        "error", description="When the target exists: error (default) or overwrite."
    )
    expected_hash: str | None = Field(None, description=HASH_DOC)

    @model_validator(mode="after")
    def _fields_for_action(self) -> FileActionsInput:
        if self.action == "move" and not self.new_path:
            raise ValueError("field `new_path` is required for action=move")
        if self.action != "move" and self.new_path is not None:
            raise ValueError("field `new_path` is only used by action=move")
        if self.action != "create" and self.content is not None:
            raise ValueError("field `content` is only used by action=create")
        return self


class AppendInput(ToolInput):
    path: str = Field(description="File to append to (created if missing).")
    content: str = Field(description="Text appended after a newline.")
    expected_hash: str | None = Field(None, description=HASH_DOC)


class FindReplaceInput(ToolInput):
    path: str = Field(description="File to edit.")
    find: str = Field(min_length=1, description="Exact text to find (not a regex).")
    replace: str = Field(description="Replacement text.")
    all: bool = Field(False, description="Replace every occurrence; otherwise exactly one must exist.")
    expected_hash: str | None = Field(None, description=HASH_DOC)


def build(rt: Runtime) -> list[Tool]:
    # Every write below is a compare-and-swap against what the call read (see
    # workspace/atomic.py); ``retrying`` recomputes the change on the new
    # content when another writer got there first.
    return [build_file_actions(rt), build_append_to_file(rt), build_find_and_replace(rt)]


def read_for_edit(rt: Runtime, path: str, expected: str | None) -> tuple[ResolvedPath, str, bytes, int]:
    ws = rt.workspace  # read per call: manage_workspaces can switch it
    rp = ws.resolve(path, write=True)
    shown = ws.display(rp.abs)
    fb = read_bytes(rp.abs, shown, root=rp.root.path)
    text = decode_text(fb.data, shown)
    check_expected_hash(expected, fb.data, shown)
    return rp, text, fb.data, fb.mode


def _current(rp: ResolvedPath, shown: str, expected: str | None) -> bytes | None:
    """The bytes an ``expected_hash`` was checked against (None without one)."""
    if not expected:
        return None
    data = read_bytes(rp.abs, shown, root=rp.root.path).data
    check_expected_hash(expected, data, shown)
    return data


def build_file_actions(rt: Runtime) -> Tool:
    def file_actions(args: FileActionsInput) -> str:
        for field, value in (("path", args.path), ("new_path", args.new_path)):
            if value and value.endswith(("/", os.sep)) and (field == "new_path" or args.action == "create"):
                raise invalid_arguments(
                    f"field `{field}` ends with '/': file_actions works on files; give the file's name "
                    "(missing parent folders are created)",
                    field=field,
                )
        if args.action == "create":
            return retrying(lambda _a: create(args))
        if args.action == "delete":
            return retrying(lambda _a: delete(args))
        return retrying(lambda _a: move(args))

    def create(args: FileActionsInput) -> str:
        ws = rt.workspace
        rp = resolve_new_file(ws, args.path, args.if_exists)
        shown = ws.display(rp.abs)
        expect = _current(rp, shown, args.expected_hash) if rp.exists else None
        data = write_text(rp, args.content or "", state_dir=rt.state_dir, expect=expect, expect_absent=not rp.exists)
        verb = "Overwrote" if rp.exists else "Created"
        return f"{verb} {shown} ({len(data)} bytes) [hash={content_hash(data)}]"

    def delete(args: FileActionsInput) -> str:
        ws = rt.workspace
        rp = ws.resolve(args.path, write=True)
        shown = ws.display(rp.abs)
        if os.path.isdir(rp.abs):
            raise ToolError(ErrorCode.NOT_A_FILE, f"{shown} is a directory; file_actions deletes files only")
        batch = AtomicBatch(rt.state_dir)
        batch.delete(rp.root.path, rp.rel, expect=_current(rp, shown, args.expected_hash))
        batch.commit()
        return f"Deleted {shown}"

    def move(args: FileActionsInput) -> str:
        ws = rt.workspace
        src = ws.resolve(args.path, write=True)
        dst = ws.resolve(args.new_path or "", must_exist=False, write=True, field_name="new_path")
        s_shown, d_shown = ws.display(src.abs), ws.display(dst.abs)
        if os.path.isdir(src.abs):
            raise ToolError(ErrorCode.NOT_A_FILE, f"{s_shown} is a directory; file_actions moves files only")
        if src.abs == dst.abs:
            raise invalid_arguments("`path` and `new_path` are the same file", field="new_path")
        if dst.exists:
            if os.path.isdir(dst.abs):
                raise ToolError(ErrorCode.NOT_A_FILE, f"{d_shown} is a directory; give the full new file path")
            if args.if_exists != "overwrite":
                raise ToolError(
                    ErrorCode.ALREADY_EXISTS, f'{d_shown} already exists; pass if_exists="overwrite" to replace it'
                )
        fb = read_bytes(src.abs, s_shown, root=src.root.path)
        check_expected_hash(args.expected_hash, fb.data, s_shown)
        batch = AtomicBatch(rt.state_dir)
        batch.write(dst.root.path, dst.rel, fb.data, mode=fb.mode, expect_absent=not dst.exists)
        batch.delete(src.root.path, src.rel, expect=fb.data)
        batch.commit()
        return f"Moved {s_shown} -> {d_shown}"

    return tool(
        file_actions,
        description="Create, delete or move a file. create refuses an existing file unless "
        "if_exists=overwrite and creates parent folders; delete removes one file (never a folder); move "
        "renames a file, refusing an existing destination unless if_exists=overwrite.",
        destructive=True,
    )


def build_append_to_file(rt: Runtime) -> Tool:
    def append_once(args: AppendInput) -> str:
        ws = rt.workspace
        rp = ws.resolve(args.path, must_exist=False, write=True)
        shown = ws.display(rp.abs)
        if rp.exists:
            fb = read_bytes(rp.abs, shown, root=rp.root.path)
            old = decode_text(fb.data, shown)
            check_expected_hash(args.expected_hash, fb.data, shown)
            bom, eol, body = split_spelling(old)  # the file keeps its line ending and BOM
            new = join_spelling(bom, eol, body + "\n" + args.content.replace("\r\n", "\n"))
            data = write_text(rp, new, state_dir=rt.state_dir, expect=fb.data)
        else:
            if args.expected_hash:
                raise ToolError(ErrorCode.CONFLICT, f"{shown} no longer exists; read the directory again")
            data = write_text(rp, args.content, state_dir=rt.state_dir, expect_absent=True)
        return f"Appended {len(args.content)} characters to {shown} [hash={content_hash(data)}]"

    def append_to_file(args: AppendInput) -> str:
        return retrying(lambda _a: append_once(args))

    return tool(
        append_to_file,
        description="Append text to a file: a newline, then the content (never deduplicated). "
        "Creates the file if missing.",
    )


def build_find_and_replace(rt: Runtime) -> Tool:
    def replace_once(args: FindReplaceInput) -> str:
        ws = rt.workspace
        rp, text, before, mode = read_for_edit(rt, args.path, args.expected_hash)
        shown = ws.display(rp.abs)
        bom, eol, body = split_spelling(text)  # match on \n text; write back the file's own line ending
        find, replace = args.find, args.replace
        if eol != "\n":
            find, replace = find.replace("\r\n", "\n"), replace.replace("\r\n", "\n")
        count = body.count(find)
        if count == 0:
            raise ToolError(
                ErrorCode.NO_MATCH,
                f"the text to find does not occur in {shown}; read the file and copy the exact text "
                "(whitespace included)",
            )
        if count > 1 and not args.all:
            lines, start = [], 0
            for _ in range(min(count, 10)):
                idx = body.index(find, start)
                lines.append(line_of_offset(body, idx))
                start = idx + len(find)
            raise ToolError(
                ErrorCode.AMBIGUOUS,
                f"found {count} matches in {shown} (lines {', '.join(map(str, lines))}); set all=true to replace "
                "every one, or use apply_patch with enough context to pick one",
                {"lines": lines},
            )
        new = join_spelling(bom, eol, body.replace(find, replace))
        data = write_text(rp, new, mode=mode, state_dir=rt.state_dir, expect=before)
        return f"Replaced {count} occurrence(s) in {shown} [hash={content_hash(data)}]"

    def find_and_replace(args: FindReplaceInput) -> str:
        return retrying(lambda _a: replace_once(args))

    return tool(
        find_and_replace,
        description="Replace an exact substring in a file. With all=false the text must occur exactly "
        "once; several matches are an error (use all=true or apply_patch).",
        destructive=True,
    )
