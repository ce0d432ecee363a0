"""read_directory (ChatMD alias ``read_dir``): one directory's entries."""

from __future__ import annotations

import os

from pydantic import Field

from tooldeck.core import ToolError, ToolInput, tool
from tooldeck.core.errors import ErrorCode
from tooldeck.core.tool import Tool
from tooldeck.runtime import Runtime
from tooldeck.tools.common import set_root_enum
from tooldeck.workspace.content import open_nofollow
from tooldeck.workspace.hidden import hidden_names_in
from tooldeck.workspace.tempnames import is_temp_name


class ReadDirectoryInput(ToolInput):
    path: str = Field(".", description="Directory, relative to a root or absolute. Default: the first root.")
    root: str | None = Field(None, description="Root id; `path` must then be relative to it.")


def build(rt: Runtime) -> Tool:
    ws = rt.workspace  # for the schema only: calls read rt.workspace (it can be switched)

    def read_directory(args: ReadDirectoryInput) -> str:
        ws = rt.workspace
        rp = ws.resolve(args.path, root=args.root)
        if not os.path.isdir(rp.abs):
            raise ToolError(ErrorCode.NOT_A_DIRECTORY, f"{args.path!r} is a file; read it with read_file")
        names: list[str] = []
        hidden = hidden_names_in(rp.abs)  # the state directory, outside every root
        # list through a descriptor opened without following any link below
        # the root: a folder swapped for a symlink after the check is refused
        fd = open_nofollow(rp.abs, ws.display(rp.abs), rp.root.path, directory=True)
        try:
            with os.scandir(fd) as it:
                for e in it:
                    if is_temp_name(e.name) or e.name in hidden:  # a write in progress: never listed
                        continue
                    try:
                        is_dir = e.is_dir(follow_symlinks=False)
                    except OSError:
                        is_dir = False
                    names.append(e.name + "/" if is_dir else e.name)
        finally:
            os.close(fd)
        names.sort()
        return "\n".join(names) if names else "(empty directory)"

    built: Tool = tool(
        read_directory,
        description="List one directory's entries (ochat read_dir; not recursive), sorted, directories ending in '/'.\n"
        "Roots:\n" + ws.describe_roots(),
        read_only=True,
        idempotent=True,
    )
    set_root_enum(built.parameters, ws)
    return built
