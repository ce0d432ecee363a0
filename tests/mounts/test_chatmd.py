"""`<tool mcp_server=...>` through the real ChatMD loader: the declared remote
tools land in the document's Toolbox (imports' namespaces included) and run.
An imported file mounts a server only when the person approved it
(tests/chatmd/test_authority.py covers the refusals)."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

from tooldeck.chatmd.declarations import LoadContext, build_toolbox
from tooldeck.chatmd.document import load
from tooldeck.markup.element import ChatmdError
from tooldeck.mounts.declaration import registry_for
from tooldeck.runtime import Runtime
from tooldeck.state.approvals import Approvals

pytestmark = pytest.mark.timeout(120)

CHANGING = Path(__file__).parents[1] / "mcp" / "servers" / "changing_server.py"


def test_chatmd_document_mounts_remote_tools(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    rt = Runtime.for_dirs([tmp_path], state_dir=tmp_path / "state")
    monkeypatch.setenv("TOOLDECK_STATE_DIR", str(tmp_path / "state"))
    server = f"stdio:{sys.executable} {CHANGING}"
    (tmp_path / "remote.chatmd").write_text(f'<tool mcp_server="{server}" name="pid"/>\n')
    Approvals(tmp_path / "state").allow([tmp_path / "remote.chatmd"])  # an import has no authority of its own
    main = tmp_path / "main.chatmd"
    main.write_text(
        f'<tool mcp_server="{server}" includes="echo, fail" strict/>\n'
        '<import src="remote.chatmd" namespace="far"/>\n'
        "<user>hi</user>\n"
    )
    try:
        doc = load(main)
        box = build_toolbox(doc, LoadContext.for_document(doc, rt))
        assert box.names == ["echo", "fail", "far_pid"]
        assert box.call_sync("echo", {"text": "from chatmd"}).text == "from chatmd"
        assert box.call_sync("far_pid", {}).text.isdigit()
        assert box.get("echo").strict is True  # type: ignore[union-attr]
        failed = box.call_sync("fail", {})
        assert failed.error is not None and failed.error.code == "remote_error"

        main.write_text(f'<user>x</user>\n<tool mcp_server="{server}" name="missing_tool"/>\n')
        doc = load(main)
        with pytest.raises(ChatmdError, match=r"main.chatmd:2:1: .*no tool named 'missing_tool'"):
            build_toolbox(doc, LoadContext.for_document(doc, rt))
    finally:
        registry_for(rt).close()
