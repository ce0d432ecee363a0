"""workspace_context and prompt (get/set/append/clear/export)."""

from __future__ import annotations

import json
import re

from tooldeck.selection.service import selection_service
from tooldeck.tokens import count_with


def test_workspace_context_sections_and_token_breakdown(call, project, runtime, box):
    call.ok("prompt", {"op": "set", "text": "Add an admin flag to the report."})
    call.ok("manage_selection", {"op": "add", "paths": ["app/main.py"]})
    call.ok(
        "manage_selection",
        {"op": "add", "slices": [{"path": "app/util.py", "ranges": [{"start_line": 4, "end_line": 5}]}]},
    )
    res = box.call_sync("workspace_context", json.dumps({}))
    assert not res.is_error, res.text
    text = res.text
    assert "## Prompt\nAdd an admin flag to the report." in text
    assert "## Selection" in text and "app/main.py  full" in text and "app/util.py  slices lines 4-5" in text
    assert "## File tree" in text and "main.py  [full]" in text and "models.py  [codemap, auto]" in text
    assert "## Codemaps" in text and "class User" in text
    assert "## Files" not in text  # not in the default include
    assert "## Tokens" in text
    tokens = res.output.structured["tokens"]
    assert tokens["total"] == sum(tokens[k] for k in ("prompt", "tree", "files", "code", "framing"))
    assert tokens["files"] == tokens["full"] + tokens["slices"]
    assert tokens["prompt"] == count_with("o200k_base", "Add an admin flag to the report.")
    assert tokens["full"] > 0 and tokens["slices"] > 0 and tokens["code"] > 0
    assert f"total {tokens['total']:,} (o200k_base)" in text


def test_workspace_context_include_selects_sections(call, project):
    call.ok("manage_selection", {"op": "add", "paths": ["app/util.py"]})
    text = call.ok("workspace_context", {"include": ["files"]})
    assert "## Files" in text and "def slugify(text: str) -> str:" in text
    assert "## Prompt" not in text and "## Tokens" not in text and "## Selection" not in text
    call.err("workspace_context", {"include": ["everything"]}, code="invalid_arguments")


def test_repeated_workspace_context_only_tokenizes_what_changed(call, project, runtime):
    call.ok("manage_selection", {"op": "add", "paths": ["app"]})
    call.ok("workspace_context", {})
    counter = selection_service(runtime).counter
    before = counter.computed
    call.ok("workspace_context", {})
    assert counter.computed == before  # everything came from the cache
    (project / "app/util.py").write_text("def slugify(text: str) -> str:\n    return text\n")
    call.ok("workspace_context", {})
    assert 1 <= counter.computed - before <= 3  # the changed file (and the tree/package bits that embed it)


def test_cl100k_encoding_setting_changes_counts(call, project, runtime):
    call.ok("manage_selection", {"op": "add", "paths": ["app/models.py"]})
    o200k = selection_service(runtime).breakdown().total
    call.ok("app_settings", {"op": "set", "key": "tokens.encoding", "value": "cl100k_base"})
    bd = selection_service(runtime).breakdown()
    pkg, _ = selection_service(runtime).package()
    assert abs(bd.total - count_with("cl100k_base", pkg.text())) <= 5
    assert bd.total != o200k


def test_prompt_get_set_append_clear(call, runtime, root):
    assert "empty" in call.ok("prompt", {"op": "get"})
    call.ok("prompt", {"op": "set", "text": "line one"})
    call.ok("prompt", {"op": "append", "text": "line two"})
    assert call.ok("prompt", {}) == "line one\nline two"
    call.ok("prompt", {"op": "append", "text": "\nline three"})
    assert call.ok("prompt", {"op": "get"}) == "line one\nline two\n\nline three"
    call.ok("prompt", {"op": "clear"})
    assert "empty" in call.ok("prompt", {"op": "get"})
    call.err("prompt", {"op": "set"}, code="invalid_arguments")
    call.err("prompt", {"op": "get", "text": "x"}, code="invalid_arguments")
    call.err("prompt", {"op": "set", "text": "x", "path": "a.md"}, code="invalid_arguments")


def test_export_writes_the_markdown_package_inside_a_root(call, project, runtime):
    call.ok("prompt", {"op": "set", "text": "Review the registry."})
    call.ok("manage_selection", {"op": "add", "paths": ["app/registry.py"]})
    call.ok(
        "manage_selection",
        {
            "op": "add",
            "slices": [{"path": "app/main.py", "ranges": [{"start_line": 5, "end_line": 6, "description": "entry"}]}],
        },
    )
    call.ok("manage_selection", {"op": "add", "paths": ["app/models.py"], "mode": "codemap_only"})
    out = call.ok("prompt", {"op": "export", "path": "out/context.md"})
    assert "out/context.md" in out
    doc = (project / "out/context.md").read_text()
    assert doc.startswith("# Context\n\n## Prompt\n\nReview the registry.")
    assert "## File tree" in doc and "registry.py  [full]" in doc and "main.py  [slices 5-6]" in doc
    assert "### app/registry.py\n```python\nclass Registry:" in doc
    assert "Lines 5-6: entry\n```python\n5 | def run(" in doc
    assert "## Codemaps\n\n### app/models.py\n```text\n" in doc and "class User" in doc
    order = [doc.index(h) for h in ("## Prompt", "## File tree", "## Files", "## Codemaps")]
    assert order == sorted(order)
    tokens = int(re.search(r"([\d,]+) tokens", out).group(1).replace(",", ""))
    assert abs(tokens - count_with("o200k_base", doc)) <= max(5, tokens // 50)
    call.err("prompt", {"op": "export", "path": "out/context.md"}, code="already_exists")
    call.ok("prompt", {"op": "export", "path": "out/context.md", "if_exists": "overwrite"})
    call.err("prompt", {"op": "export", "path": "/etc/context.md"}, code="outside_roots")
    call.err("prompt", {"op": "export", "path": "app"}, code="not_a_file")


def test_export_without_path_goes_under_the_state_dir(call, project, state_dir):
    call.ok("manage_selection", {"op": "add", "paths": ["app/util.py"]})
    out = call.ok("prompt", {"op": "export"})
    written = list((state_dir / "exports").glob("context-Tab-1-*.md"))
    assert len(written) == 1 and str(written[0]) in out
    assert "def slugify" in written[0].read_text()
    assert not list(project.glob("**/context-*.md"))
