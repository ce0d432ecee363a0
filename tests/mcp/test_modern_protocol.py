"""The newest protocol revision (2026-07-28, spoken by the SDK's high-level
``mcp.Client``) requires ``resultType`` on every result; the legacy handshake
(``ClientSession``) is covered by test_stdio.py. Both must work."""

from __future__ import annotations

import os
from pathlib import Path

import anyio
import pytest
from mcp import Client, StdioServerParameters

from tests.mcp.mcp_e2e import serve_command

pytestmark = pytest.mark.timeout(120)


def test_modern_client_gets_results_and_errors(served: tuple[Path, Path]) -> None:
    root, state = served
    cmd = serve_command(root, state)

    async def scenario() -> None:
        params = StdioServerParameters(command=cmd[0], args=cmd[1:], env={**os.environ})
        async with Client(params) as client:
            names = {t.name for t in (await client.list_tools()).tools}
            assert {"read_file", "apply_patch", "context_builder"} <= names
            ok = await client.call_tool("read_file", {"path": "hello.txt"})
            assert not ok.is_error and ok.result_type == "complete"
            assert ok.content[0].text.startswith("hello.txt:1-2 [total_lines=2]")
            bad = await client.call_tool("read_file", {"path": "missing.txt"})
            assert bad.is_error and bad.content[0].text.startswith("error [not_found]")
            patched = await client.call_tool(
                "apply_patch", {"input": "*** Begin Patch\n*** Add File: new.txt\n+made\n*** End Patch"}
            )
            assert not patched.is_error, patched.content[0].text
        assert (root / "new.txt").read_text() == "made\n"

    anyio.run(scenario)


def test_modern_client_hears_tools_changed_on_its_listen_stream(served: tuple[Path, Path], tmp_path: Path) -> None:
    """2026-07-28 clients get change events only on `subscriptions/listen`:
    a change of roots must reach the stream the client opened."""
    root, state = served
    outside = tmp_path / "outside"
    outside.mkdir()
    cmd = serve_command(root, state, "--allow-root", str(outside))

    async def scenario() -> None:
        env = {**os.environ, "TOOLDECK_STATE_DIR": str(state), "TOOLDECK_CONFIG": str(state / "no-config.toml")}
        params = StdioServerParameters(command=cmd[0], args=cmd[1:], env=env)
        async with Client(params) as client:
            caps = client.session.server_capabilities
            assert caps is not None and caps.tools is not None and caps.tools.list_changed
            async with client.listen(tools_list_changed=True) as sub:
                res = await client.call_tool(
                    "manage_workspaces", {"action": "add_folder", "folder_path": str(outside)}
                )
                assert not res.is_error, res.content[0].text
                with anyio.fail_after(10):
                    event = await sub.__aiter__().__anext__()
                assert type(event).__name__ == "ToolsListChanged"
            tools = {t.name: t for t in (await client.list_tools()).tools}
            assert tools["read_file"].input_schema["properties"]["root"]["enum"] == ["root", "outside"]

    anyio.run(scenario)
