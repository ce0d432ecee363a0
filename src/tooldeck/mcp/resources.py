"""Files of the roots as MCP resources.

* URIs are ``file://`` URIs of absolute paths (percent-encoded), what MCP
  clients already use for roots and files; ``resources/list`` walks every
  root with the same ignore rules as the file tree, paged (``cursor``);
* one resource template per root, ``file:///abs/root/{+path}`` (``path`` is
  relative to that root; ``{+path}`` keeps its slashes, RFC 6570);
* ``resources/read`` resolves the URI's path through the workspace rules (the
  ones ``read_file`` uses: inside a root, symlinks followed and checked, no
  component followed below the root while opening) and reads a regular
  file; UTF-8 text comes back as ``text``, anything else as a base64 ``blob``.

Errors are :class:`ToolError` values; the server turns them into JSON-RPC
errors (``not_found`` → -32002, the MCP code for an unknown resource).
"""

from __future__ import annotations

import base64
import itertools
import mimetypes
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any
from urllib.parse import quote, unquote, urlsplit

from tooldeck.core.errors import ErrorCode, ToolError, invalid_arguments

if TYPE_CHECKING:
    from tooldeck.workspace.roots import Workspace

PAGE_SIZE = 200
MAX_RESOURCE_BYTES = 16 * 1024 * 1024


def file_uri(abs_path: str) -> str:
    return "file://" + quote(abs_path, safe="/")


def path_of(uri: str) -> str:
    """The absolute path a ``file://`` URI names (local host only)."""
    parts = urlsplit(uri)
    if parts.scheme != "file" or parts.netloc not in ("", "localhost"):
        raise invalid_arguments(f"resource URIs are file:///absolute/path URIs (got {uri!r})", field="uri")
    path = unquote(parts.path)
    if not path.startswith("/"):
        raise invalid_arguments(f"resource URI {uri!r} does not name an absolute path", field="uri")
    return path


def _mime(path: str) -> str | None:
    return mimetypes.guess_type(path, strict=False)[0]


@dataclass
class ResourceProvider:
    """Resources over the workspace returned by ``workspace()`` (read per
    request: the roots can be switched while serving)."""

    workspace: Callable[[], Workspace]
    page_size: int = PAGE_SIZE

    def _files(self) -> Iterator[tuple[str, str]]:
        # lazy: the early front imports this module before its first answer; the walker loads after it
        from tooldeck.workspace.walk import walk_files

        ws = self.workspace()
        for root in ws.roots:
            for rel in walk_files(ws.rules(root)):
                yield root.path, rel

    def list(self, cursor: str | None) -> dict[str, Any]:
        """A page of ``resources/list`` in wire form (the early front sends it
        as it is; the SDK's handler validates it into its model)."""
        start = 0
        if cursor:
            if not cursor.isdigit():
                raise invalid_arguments(f"unknown resources cursor {cursor!r}; list again without one", field="cursor")
            start = int(cursor)
        ws = self.workspace()
        page = list(itertools.islice(self._files(), start, start + self.page_size + 1))
        more = len(page) > self.page_size
        resources = []
        for root_path, rel in page[: self.page_size]:
            abs_path = f"{root_path.rstrip('/')}/{rel}"
            entry = {"name": ws.display(abs_path), "uri": file_uri(abs_path)}
            mime = _mime(rel)
            resources.append(entry if mime is None else {**entry, "mimeType": mime})
        out: dict[str, Any] = {"resources": resources}
        if more:
            out["nextCursor"] = str(start + self.page_size)
        return out

    def templates(self) -> dict[str, Any]:
        """``resources/templates/list`` in wire form (one template per root)."""
        ws = self.workspace()
        return {
            "resourceTemplates": [
                {
                    "name": root.id,
                    "uriTemplate": file_uri(root.path.rstrip("/")) + "/{+path}",
                    "description": f"A file of root {root.id!r}: path relative to {root.path}"
                    + (f" ({root.description})" if root.description else ""),
                }
                for root in ws.roots
            ]
        }

    def read(self, uri: str) -> Any:
        """A ``types.ReadResourceResult`` (the SDK's model: served by the SDK only)."""
        import mcp_types as types

        # lazy: the early front imports this before its first answer; file reads come after
        from tooldeck.workspace.content import read_bytes

        ws = self.workspace()
        rp = ws.resolve(path_of(uri), must_exist=True, field_name="uri")
        fb = read_bytes(rp.abs, rp.requested, MAX_RESOURCE_BYTES + 1, root=rp.root.path)
        if fb.size > MAX_RESOURCE_BYTES:
            raise ToolError(
                ErrorCode.TOO_LARGE,
                f"{ws.display(rp.abs)} is {fb.size} bytes, over the {MAX_RESOURCE_BYTES}-byte resource limit; "
                "read a slice with the read_file tool",
            )
        canonical = file_uri(rp.abs)
        mime = _mime(rp.abs)
        text = _text_or_none(fb.data)
        contents: Any
        if text is not None:
            contents = types.TextResourceContents(uri=canonical, mime_type=mime or "text/plain", text=text)
        else:
            blob = base64.b64encode(fb.data).decode("ascii")
            contents = types.BlobResourceContents(
                uri=canonical, mime_type=mime or "application/octet-stream", blob=blob
            )
        return types.ReadResourceResult(contents=[contents])


def _text_or_none(data: bytes) -> str | None:
    # lazy: the early front imports this before its first answer; file reads come after
    from tooldeck.workspace.content import looks_binary

    if looks_binary(data):
        return None
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError:
        return None
