"""Files of the roots as MCP resources, through a spawned `tooldeck serve`:
paged listing, templates, text and binary reads, and the path rules."""

from __future__ import annotations

import asyncio
import base64
import os
from pathlib import Path

import mcp_types as types
import pytest
from mcp.shared.exceptions import MCPError

from tests.mcp.mcp_e2e import stdio_session
from tooldeck.mcp.resources import PAGE_SIZE, ResourceProvider, file_uri
from tooldeck.workspace.roots import Workspace

pytestmark = pytest.mark.timeout(120)


def test_resources_list_read_and_refuse(served: tuple[Path, Path], tmp_path: Path) -> None:
    root, state = served
    many = root / "many"
    many.mkdir()
    for i in range(PAGE_SIZE + 30):
        (many / f"f{i:03}.txt").write_text(str(i))
    (root / "pixel.png").write_bytes(b"\x89PNG\r\n\x1a\n\x00\x00binary")
    (root / ".gitignore").write_text("ignored.log\n")
    (root / "ignored.log").write_text("noise")
    outside = tmp_path / "secret.txt"
    outside.write_text("secret")
    os.symlink(outside, root / "link-out.txt")
    real_root = root.resolve()

    async def scenario() -> None:
        async with stdio_session(root, state) as s:
            caps = s.server_capabilities
            assert caps is not None and caps.resources is not None
            first = await s.list_resources()
            assert len(first.resources) == PAGE_SIZE and first.next_cursor
            second = await s.list_resources(params=types.PaginatedRequestParams(cursor=first.next_cursor))
            assert second.next_cursor is None
            uris = [r.uri for r in first.resources + second.resources]
            assert len(uris) == len(set(uris))
            names = {r.name for r in first.resources + second.resources}
            assert {"hello.txt", "src/app.py", "many/f000.txt", "many/f229.txt", "pixel.png"} <= names
            assert "ignored.log" not in names  # the file tree's ignore rules

            templates = (await s.list_resource_templates()).resource_templates
            assert [t.uri_template for t in templates] == [file_uri(str(real_root)) + "/{+path}"]

            hello = await s.read_resource(file_uri(f"{real_root}/hello.txt"))
            content = hello.contents[0]
            assert isinstance(content, types.TextResourceContents) and content.text == "hello\nworld\n"
            png = (await s.read_resource(file_uri(f"{real_root}/pixel.png"))).contents[0]
            assert isinstance(png, types.BlobResourceContents) and png.mime_type == "image/png"
            assert base64.b64decode(png.blob).startswith(b"\x89PNG")

            for uri, pattern in [
                ("file:///etc/passwd", "outside_roots"),
                (file_uri(f"{real_root}/../secret.txt"), "outside_roots"),
                (file_uri(f"{real_root}/link-out.txt"), "outside_roots"),
                (file_uri(f"{real_root}/missing.txt"), "not_found"),
                (file_uri(f"{real_root}/src"), "not_a_file"),
                ("https://example.com/x", "file:///absolute/path"),
            ]:
                with pytest.raises(MCPError, match=pattern):
                    await s.read_resource(uri)
            with pytest.raises(MCPError) as missing:
                await s.read_resource(file_uri(f"{real_root}/missing.txt"))
            assert missing.value.code == -32002
            with pytest.raises(MCPError, match="cursor"):
                await s.list_resources(params=types.PaginatedRequestParams(cursor="bogus"))

    asyncio.run(scenario())


def test_provider_follows_the_current_workspace(tmp_path: Path) -> None:
    a, b = tmp_path / "a", tmp_path / "b"
    a.mkdir()
    b.mkdir()
    (a / "one.txt").write_text("1")
    (b / "two.txt").write_text("2")
    current = {"ws": Workspace.from_dirs([a])}
    provider = ResourceProvider(lambda: current["ws"], page_size=1)
    assert [r["name"] for r in provider.list(None)["resources"]] == ["one.txt"]
    current["ws"] = Workspace.from_dirs([a, b])  # roots switched while serving
    page1 = provider.list(None)
    page2 = provider.list(page1["nextCursor"])
    assert [r["uri"] for r in page1["resources"] + page2["resources"]] == [
        file_uri(str((a / "one.txt").resolve())),
        file_uri(str((b / "two.txt").resolve())),
    ]
    assert "nextCursor" not in page2
    assert provider.read(file_uri(str((b / "two.txt").resolve()))).contents[0].text == "2"  # type: ignore[union-attr]
