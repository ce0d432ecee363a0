"""import_image over MCP: the SDK client receives an MCP image content part."""

from __future__ import annotations

import base64
import io
from pathlib import Path

import anyio
import pytest
from PIL import Image

from tests.mcp.mcp_e2e import stdio_session

pytestmark = pytest.mark.timeout(120)


def test_import_image_is_an_mcp_image_content_part(served: tuple[Path, Path]) -> None:
    root, state = served
    buf = io.BytesIO()
    Image.new("RGB", (32, 16), (0, 128, 255)).save(buf, "PNG")
    png = buf.getvalue()
    (root / "shot.dat").write_bytes(png)
    (root / "fake.png").write_text("hello")

    async def scenario() -> None:
        async with stdio_session(root, state) as s:
            listed = {t.name: t for t in (await s.list_tools()).tools}
            assert "import_image" in listed and "webpage_to_markdown" in listed
            assert listed["webpage_to_markdown"].annotations.open_world_hint is True  # type: ignore[union-attr]
            res = await s.call_tool("import_image", {"path": "shot.dat"})
            assert not res.is_error
            kinds = [c.type for c in res.content]
            assert kinds == ["text", "image"]
            image = res.content[1]
            assert image.mime_type == "image/png"  # type: ignore[union-attr]
            assert base64.b64decode(image.data) == png  # type: ignore[union-attr]
            assert "PNG 32x16" in res.content[0].text  # type: ignore[union-attr]
            bad = await s.call_tool("import_image", {"path": "fake.png"})
            assert bad.is_error and bad.content[0].text.startswith("error [unsupported]")  # type: ignore[union-attr]

    anyio.run(scenario)
