"""structuredContent carries the text: Codex and Claude Code show the model the
structured part of a result instead of its content when there is one
(tests/clients shows it in the real clients), so a summary line or a note that
lives only in the text would never reach the model."""

from __future__ import annotations

import json
from pathlib import Path

from tooldeck.core.output import Output
from tooldeck.core.toolbox import Toolbox, ToolResult
from tooldeck.mcp.server import to_call_result, with_text


def wire_of(box: Toolbox, name: str, args: object) -> dict:
    res = box.call_sync(name, args)
    assert res.error is None, res.text
    return to_call_result(res)


def test_apply_patch_structured_content_says_what_the_text_says(box: Toolbox, root: Path) -> None:
    (root / "a.txt").write_text("one\n")
    patch = "*** Begin Patch\n*** Update File: a.txt\n@@\n-one\n+two\n*** End Patch\n"
    wire = wire_of(box, "apply_patch", patch)
    text = wire["content"][0]["text"]
    assert text.startswith("Success. Updated the following files:") and "M a.txt" in text
    structured = wire["structuredContent"]
    assert structured["text"] == text and next(iter(structured)) == "text"  # read first
    assert structured["modified"] == ["a.txt"] and "a.txt" in structured["hashes"]


def test_every_structured_result_of_the_catalog_carries_its_text(box: Toolbox, root: Path) -> None:
    (root / "notes.md").write_text("# Title\n\nbody\n")
    calls = [("manage_workspaces", {"op": "list"}), ("workspace_context", {}), ("app_settings", {"op": "list"})]
    seen = 0
    for name, args in calls:
        res: ToolResult = box.call_sync(name, args)
        if res.error is not None or res.output is None or res.output.structured is None:
            continue
        seen += 1
        wire = to_call_result(res)
        text = res.output.as_text()
        if wire["structuredContent"] == res.output.structured:  # left as it was: only when the text is its JSON
            assert json.loads(text) == res.output.structured, name
        else:
            assert text in wire["structuredContent"].values(), name
    assert seen >= 2


def test_a_dict_result_is_not_doubled() -> None:
    data = {"a": 1, "b": [1, 2]}
    out = Output.text('{\n  "a": 1,\n  "b": [1, 2]\n}', data)
    assert with_text(data, out.as_text()) == data  # the text is the JSON of the data itself
    assert with_text({"text": "x"}, "y") == {"output_text": "y", "text": "x"}
    assert with_text({"summary": "same"}, "same") == {"summary": "same"}
