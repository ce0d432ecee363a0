"""How the edit tools are exposed: catalog, custom-tool grammar, MCP."""

from __future__ import annotations

import asyncio
from pathlib import Path

import pytest

from tests.support.require import require
from tooldeck.catalog import build_toolbox
from tooldeck.core.toolbox import Toolbox
from tooldeck.runtime import Runtime
from tooldeck.tools.edits.patch_tool import grammar

SAMPLES = [
    "*** Begin Patch\n*** Add File: a.txt\n+hello\n+\n*** End Patch\n",
    "*** Begin Patch\n*** Delete File: gone.txt\n*** End Patch",
    (
        "*** Begin Patch\n*** Update File: b.py\n*** Move to: c.py\n@@ class A\n@@     def f(self):\n"
        " ctx\n-old\n+new\n*** End of File\n*** End Patch\n"
    ),
    "*** Begin Patch\n*** Update File: d.py\n import os\n+import sys\n@@\n-x\n+y\n*** End Patch\n",
]


def test_catalog_has_both_tools(runtime: Runtime) -> None:
    box = build_toolbox(runtime)
    patch, edits = box.get("apply_patch"), box.get("apply_edits")
    assert patch is not None and patch.kind == "custom"
    assert patch.parameters["type"] == "grammar" and patch.parameters["syntax"] == "lark"
    assert "*** Begin Patch" in patch.parameters["definition"]
    assert edits is not None and edits.kind == "function"
    props = edits.parameters["properties"]
    assert {"path", "search", "replace", "all", "edits", "rewrite", "on_missing", "verbose", "expected_hash"} <= set(
        props
    )
    assert patch.annotations.destructive and edits.annotations.destructive


def test_lark_grammar_accepts_valid_patches_and_rejects_junk() -> None:
    require("lark")
    import lark

    from tooldeck.tools.edits.v4a_parser import parse_patch

    parser = lark.Lark(grammar()["definition"], parser="lalr")
    for sample in SAMPLES:
        parser.parse(sample)
        parse_patch(sample)  # what the grammar allows, the parser applies
    for junk in ("*** Begin Patch\n*** Frob File: x\n*** End Patch\n", "*** Add File: x\n+a\n"):
        with pytest.raises(lark.exceptions.LarkError):
            parser.parse(junk)


def test_apply_patch_over_mcp_takes_an_input_string(root: Path, box: Toolbox) -> None:
    from mcp import Client

    from tooldeck.mcp.server import create_server

    async def scenario() -> tuple[dict, object, object]:
        async with Client(create_server(box), mode="legacy") as client:
            listed = {t.name: t for t in (await client.list_tools()).tools}
            ok = await client.call_tool(
                "apply_patch", {"input": "*** Begin Patch\n*** Add File: via_mcp.txt\n+hi\n*** End Patch\n"}
            )
            bad = await client.call_tool("apply_patch", {"input": "*** Begin Patch\n*** End Patch\n"})
            return listed["apply_patch"].input_schema, ok, bad

    schema, ok, bad = asyncio.run(scenario())
    assert schema["required"] == ["input"] and schema["properties"]["input"]["type"] == "string"
    assert not ok.is_error and "A via_mcp.txt" in ok.content[0].text
    assert ok.structured_content["added"] == ["via_mcp.txt"]
    assert (root / "via_mcp.txt").read_text() == "hi\n"
    assert bad.is_error and "patch_syntax" in bad.content[0].text
