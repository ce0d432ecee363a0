"""import_image: a PNG, JPEG, GIF or WebP file from the roots as an image part.

The file is resolved with the workspace path rules and read with
``read_bytes`` (``O_NOFOLLOW`` below the root, regular files only); the
image logic (sniffing, the size cap, downscaling) is in
:mod:`tooldeck.imaging`. MCP hosts send the part as an ``image`` content
item; ChatMD as a vision input (a data URI).

``Runtime.settings["images"]`` may set ``max_bytes``, ``max_side`` and
``pillow`` (false: never re-encode, even when Pillow is installed).
"""

from __future__ import annotations

import os

from pydantic import Field

from tooldeck.core import ToolInput, tool
from tooldeck.core.errors import ErrorCode, ToolError
from tooldeck.core.output import ImagePart, Output, TextPart
from tooldeck.core.tool import Tool
from tooldeck.imaging import MAX_SEND_BYTES, MAX_SIDE, prepare_image
from tooldeck.runtime import Runtime
from tooldeck.tools.common import set_root_enum
from tooldeck.workspace.content import read_bytes

MAX_FILE_BYTES = 32 * 1024 * 1024  # bigger files are refused without being read


class ImportImageInput(ToolInput):
    path: str = Field(description="Image file, relative to a root or absolute (PNG, JPEG, GIF or WebP).")
    root: str | None = Field(None, description="Root id; `path` must then be relative to that root.")


def build(rt: Runtime) -> Tool:
    def import_image(args: ImportImageInput) -> Output:
        ws = rt.workspace
        rp = ws.resolve(args.path, root=args.root)
        shown = ws.display(rp.abs)
        opts = rt.settings.get("images") if isinstance(rt.settings.get("images"), dict) else {}
        try:
            on_disk = os.stat(rp.abs).st_size
        except OSError:
            on_disk = 0  # read_bytes reports the error
        if on_disk > MAX_FILE_BYTES:
            raise _too_big(shown, on_disk)
        fb = read_bytes(rp.abs, shown, limit=MAX_FILE_BYTES, root=rp.root.path)
        if fb.truncated:
            raise _too_big(shown, fb.size)
        img = prepare_image(
            fb.data,
            shown,
            max_bytes=int(opts.get("max_bytes", MAX_SEND_BYTES)),
            max_side=int(opts.get("max_side", MAX_SIDE)),
            use_pillow=bool(opts.get("pillow", True)),
        )
        kind = img.mime.removeprefix("image/").upper()
        dims = f" {img.size[0]}x{img.size[1]}" if img.size else ""
        note = f"{shown}: {kind}{dims}, {len(img.data)} bytes"
        if img.scaled and img.original_size:
            ow, oh = img.original_size
            note += f" (scaled down from {ow}x{oh}, {img.original_bytes} bytes)"
        return Output.of_parts([TextPart(note), ImagePart(img.data_uri)])

    built: Tool = tool(
        import_image,
        description=(
            "Load an image file from the workspace roots as an image the model can see (screenshots, "
            "diagrams). PNG, JPEG, GIF and WebP, recognised by content; large images are scaled down "
            f"(longer side ≤ {MAX_SIDE} px, ≤ {MAX_SEND_BYTES // (1024 * 1024)} MiB).\nRoots:\n"
            + rt.workspace.describe_roots()
        ),
        read_only=True,
        idempotent=True,
    )
    set_root_enum(built.parameters, rt.workspace)
    return built


def _too_big(shown: str, size: int) -> ToolError:
    return ToolError(
        ErrorCode.TOO_LARGE,
        f"{shown} is {size} bytes, over the {MAX_FILE_BYTES}-byte limit for images; it was not read",
        {"limit": MAX_FILE_BYTES, "size": size},
    )
