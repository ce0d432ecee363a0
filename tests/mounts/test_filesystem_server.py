"""Mounting the reference MCP filesystem server (Node), installed by
scripts/setup.sh into .cache/node from the npm registry."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from tests.support.require import require
from tooldeck.core import Toolbox
from tooldeck.core.output import ImagePart
from tooldeck.mounts.client import mount

pytestmark = pytest.mark.timeout(120)

REPO = Path(__file__).resolve().parents[2]
SERVER = REPO / ".cache/node/node_modules/@modelcontextprotocol/server-filesystem/dist/index.js"
PNG = bytes.fromhex("89504e470d0a1a0a0000000d4948445200000001000000010806000000")


@pytest.fixture
def fs_spec(tmp_path: Path) -> str:
    require("node-fs-server")
    node = shutil.which("node")
    assert node is not None and SERVER.is_file()
    return f"stdio:{node} {SERVER} {tmp_path}"


def test_reference_filesystem_server_mounted(fs_spec: str, tmp_path: Path) -> None:
    (tmp_path / "notes.txt").write_text("alpha\nbeta\n")
    (tmp_path / "dot.png").write_bytes(PNG)
    m = mount(fs_spec, include="read_text_file,write_file,list_directory,read_media_file")
    try:
        tools = {t.name: t for t in m}
        assert set(tools) == {"read_text_file", "write_file", "list_directory", "read_media_file"}
        rt = tools["read_text_file"]
        assert rt.annotations.read_only and not rt.annotations.destructive and rt.annotations.title == "Read Text File"
        assert {"path", "head", "tail"} <= set(rt.parameters["properties"])
        assert tools["write_file"].annotations.destructive
        box = Toolbox(m.tools)
        head = box.call_sync("read_text_file", {"path": str(tmp_path / "notes.txt"), "head": 1})
        assert head.error is None and head.text.strip() == "alpha"
        wrote = box.call_sync("write_file", {"path": str(tmp_path / "new.txt"), "content": "written remotely"})
        assert wrote.error is None and (tmp_path / "new.txt").read_text() == "written remotely"
        listing = box.call_sync("list_directory", {"path": str(tmp_path)})
        assert "[FILE] new.txt" in listing.text and "[FILE] notes.txt" in listing.text
        image = box.call_sync("read_media_file", {"path": str(tmp_path / "dot.png")})
        assert image.output is not None and isinstance(image.output.parts[0], ImagePart)
        assert image.output.parts[0].mime_type == "image/png"
        denied = box.call_sync("read_text_file", {"path": "/etc/hostname"})
        assert denied.error is not None and denied.error.code == "remote_error"
        assert "outside allowed directories" in denied.error.message
    finally:
        m.close()
