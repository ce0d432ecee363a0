"""read_file: one tool, both dialects.

* ochat (seed 000): ``{file | path, root?, offset? (0-based), line_count?}``
* RepoPrompt (seed 004): ``{path, start_line? (1-based; negative = tail), limit?}``

Its arguments are decoded without pydantic (``read_args.py``: the first call
a client sends comes while the server still starts).

The header is ``path:start-end [total_lines=N] [hash=H]``; ``hash`` is the
staleness hash edit tools accept. Text stops at 380,928 bytes with ``---`` and
``[File truncated: N more lines not shown]``. Binary-like files are refused.
The description lists every root and the ``root`` enum holds exactly their ids.
"""

from __future__ import annotations

import os

from tooldeck.core.errors import ErrorCode, ToolError
from tooldeck.core.tool import Tool, ToolAnnotations, create_function, run_blocking
from tooldeck.runtime import Runtime
from tooldeck.tools.common import set_root_enum
from tooldeck.tools.files import read_args
from tooldeck.tools.files.read_args import ReadArgs
from tooldeck.tools.files.read_large import STREAM_BYTES, read_streamed
from tooldeck.tools.files.read_window import MAX_BYTES, render
from tooldeck.workspace.content import OpenFile, content_hash, decode_text
from tooldeck.workspace.roots import ResolvedPath, Workspace

MAX_FILE_BYTES = 256 * 1024 * 1024
INLINE_BYTES = 64 * 1024  # files up to this size are read without a worker thread


def describe(rt: Runtime) -> str:
    return (
        "read_file (ochat get_contents): read a text file of the workspace or a line range. Two dialects: "
        "`{file, root?, offset (0-based), line_count}` or `{path, start_line (1-based; -N = last N lines), "
        "limit}`. Output starts with `path:start-end [total_lines=N] [hash=H]`; pass `hash` to edit tools "
        f"to refuse stale edits. Text stops at {MAX_BYTES} bytes with `[File truncated: ...]`. "
        "Directories, devices and binary files are refused.\nRoots:\n" + rt.workspace.describe_roots()
    )


def build(rt: Runtime) -> Tool:
    def read_resolved(ws: Workspace, rp: ResolvedPath, args: ReadArgs) -> str:
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

    async def read_file(args: ReadArgs) -> str:
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

    return create_function(  # no pydantic: read_args decodes (a first call is answered sooner)
        name="read_file",
        description=describe(rt),
        parameters=set_root_enum(read_args.parameters(), rt.workspace),
        run=read_file,
        decode=read_args.decoder(),
        annotations=ToolAnnotations(read_only=True, idempotent=True),
    )
