"""read_file: one tool, both dialects.

* ochat (seed 000): ``{file | path, root?, offset? (0-based), line_count?}``
* RepoPrompt (seed 004): ``{path, start_line? (1-based; negative = tail), limit?}``

The header is ``path:start-end [total_lines=N] [hash=H]``; ``hash`` is the
staleness hash edit tools accept. Text stops at 380,928 bytes with ``---`` and
``[File truncated: N more lines not shown]``. Binary-like files are refused.
The description lists every root and the ``root`` enum holds exactly their ids.
"""

from __future__ import annotations

import os

from pydantic import Field, model_validator

from tooldeck.core import ToolError, ToolInput, invalid_arguments, tool
from tooldeck.core.errors import ErrorCode
from tooldeck.core.tool import Tool, run_blocking
from tooldeck.runtime import Runtime
from tooldeck.tools.common import set_root_enum
from tooldeck.workspace.content import OpenFile, content_hash, decode_text
from tooldeck.workspace.roots import ResolvedPath, Workspace

MAX_BYTES = 380_928
MAX_FILE_BYTES = 256 * 1024 * 1024
INLINE_BYTES = 64 * 1024  # files up to this size are read without a worker thread


class ReadFileInput(ToolInput):
    file: str | None = Field(None, description="File path, relative to a root or absolute. `path` is an alias.")
    path: str | None = Field(None, description="Alias of `file`.")
    root: str | None = Field(None, description="Root id; `file` must then be relative to that root.")
    offset: int | None = Field(None, ge=0, description="0-based first line to read.")
    line_count: int | None = Field(None, ge=0, description="Maximum number of lines to read.")
    start_line: int | None = Field(
        None, description="1-based first line; a negative value -N reads the last N lines (like tail -n)."
    )
    limit: int | None = Field(None, ge=0, description="Maximum number of lines (same as line_count).")

    @model_validator(mode="after")
    def _one_dialect(self) -> ReadFileInput:
        if (self.file is None) == (self.path is None):
            if self.file is None:
                raise ValueError("field `file` (or `path`) is required")
            if self.file != self.path:
                raise ValueError("give the file once: `file` or `path`, not both")
        if self.offset is not None and self.start_line is not None:
            raise ValueError("use either `offset` (0-based) or `start_line` (1-based), not both")
        if self.start_line == 0:
            raise ValueError("field `start_line` is 1-based: use 1 for the first line or -N for the last N")
        if self.line_count is not None and self.limit is not None and self.line_count != self.limit:
            raise ValueError("use either `line_count` or `limit`, not both")
        return self

    @property
    def target(self) -> str:
        return self.file if self.file is not None else self.path  # type: ignore[return-value]


def split_lines(text: str) -> list[str]:
    """Lines without their ``\\n`` (only ``\\n`` separates lines; a trailing
    newline does not make an extra empty line)."""
    if not text:
        return []
    lines = text.split("\n")
    if text.endswith("\n"):
        lines.pop()
    return lines


def window(shown: str, total: int, args: ReadFileInput) -> tuple[int, int]:
    """The 0-based line range ``[start, end)`` the arguments ask for."""
    count = args.line_count if args.line_count is not None else args.limit
    if args.start_line is not None and args.start_line < 0:
        start = max(0, total + args.start_line)
    elif args.start_line is not None:
        start = args.start_line - 1
    else:
        start = args.offset or 0
    if start >= total and total > 0:
        field = "offset" if args.offset is not None else "start_line"
        raise invalid_arguments(
            f"field `{field}`: line {start + 1} is past the end of {shown} (total_lines={total}); "
            f"start at a line ≤ {total}",
            field=field,
        )
    return start, total if count is None else min(total, start + count)


def render(shown: str, text: str, digest: str, args: ReadFileInput) -> str:
    lines = split_lines(text)
    total = len(lines)
    start, end = window(shown, total, args)
    return render_window(shown, lines[start:end], start, end, total, digest)


def render_window(shown: str, lines: list[str], start: int, end: int, total: int, digest: str) -> str:
    """The output for lines ``start..end`` of a file of ``total`` lines.
    ``lines`` begins at line ``start``; it may stop early (a streamed read
    holds only what can be shown) as long as it reaches past ``MAX_BYTES``."""
    lines = lines[: end - start]
    body: list[str] = []
    used = 0
    shown_end = start
    cut_line = False
    joined = "\n".join(lines)
    # fast path: the whole range fits (one encode instead of one per line)
    if len(lines) == end - start and (len(joined) * 4 < MAX_BYTES or len(joined.encode("utf-8")) + 1 <= MAX_BYTES):
        header = f"{shown}:{start + 1 if end > start else start}-{end} [total_lines={total}] [hash={digest}]"
        return header + "\n" + joined
    for k, line in enumerate(lines):
        i = start + k
        cost = len(line.encode("utf-8")) + 1
        if used + cost > MAX_BYTES:
            if not body:  # one huge line: keep its head, cut at a character boundary
                head = line.encode("utf-8")[:MAX_BYTES].decode("utf-8", "ignore")
                body.append(head)
                shown_end = i + 1
                cut_line = True
            break
        body.append(line)
        used += cost
        shown_end = i + 1
    first = start + 1 if shown_end > start else start
    header = f"{shown}:{first}-{shown_end} [total_lines={total}] [hash={digest}]"
    out = header + "\n" + "\n".join(body)
    more = end - shown_end
    if more > 0 or cut_line:
        note = f"[File truncated: {more} more lines not shown]"
        if cut_line:
            note = f"[File truncated: line {shown_end} cut at {MAX_BYTES} bytes; {more} more lines not shown]"
        out += "\n---\n" + note
    return out


def describe(rt: Runtime) -> str:
    return (
        "read_file (ochat get_contents): read a text file of the workspace or a line range. Two dialects: "
        "`{file, root?, offset (0-based), line_count}` or `{path, start_line (1-based; -N = last N lines), "
        "limit}`. Output starts with `path:start-end [total_lines=N] [hash=H]`; pass `hash` to edit tools "
        f"to refuse stale edits. Text stops at {MAX_BYTES} bytes with `[File truncated: ...]`. "
        "Directories, devices and binary files are refused.\nRoots:\n" + rt.workspace.describe_roots()
    )


def build(rt: Runtime) -> Tool:
    def read_resolved(ws: Workspace, rp: ResolvedPath, args: ReadFileInput) -> str:
        from tooldeck.tools.files.read_large import STREAM_BYTES, read_streamed

        shown = ws.display(rp.abs)
        with OpenFile(rp.abs, shown, root=rp.root.path) as f:
            if f.size > MAX_FILE_BYTES:
                raise ToolError(
                    ErrorCode.TOO_LARGE,
                    f"{shown} is {f.size} bytes, over the {MAX_FILE_BYTES}-byte limit; search it with file_search",
                )
            if f.size > STREAM_BYTES:  # hold only what is shown
                return read_streamed(f, shown, args)
            data = f.read(MAX_FILE_BYTES)
        text = decode_text(data, shown)
        return render(shown, text, content_hash(data), args)

    async def read_file(args: ReadFileInput) -> str:
        # Path checks are a few syscalls: done on the event loop. A small file
        # is read there too (a worker-thread hop costs more than the read, and
        # read_file is the hottest tool); a big one goes to a worker thread.
        ws = rt.workspace  # read per call: manage_workspaces can switch it
        rp = ws.resolve(args.target, root=args.root)
        try:
            small = os.stat(rp.abs).st_size <= INLINE_BYTES
        except OSError:
            small = True  # read_bytes reports the error
        if small:
            return read_resolved(ws, rp, args)
        return await run_blocking(read_resolved, ws, rp, args)

    built: Tool = tool(read_file, description=describe(rt), read_only=True, idempotent=True)
    set_root_enum(built.parameters, rt.workspace)
    return built
