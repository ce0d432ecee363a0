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
