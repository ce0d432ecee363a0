"""Agent-client configuration inside a root is the person's (SPEC §3).

A ``.mcp.json``, ``.claude/settings.json``, ``.codex/config.toml`` ... that a
model writes gives it authority at the person's next client start: a new MCP
server is a host command, a hook runs at every prompt. Every write tool of the
catalog, driven through the Toolbox, must refuse with ``protected`` and leave
the tree byte-for-byte as it was; reading stays allowed."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from tests.conftest import Caller
from tests.workspace.test_write_rules import P, snapshot
from tooldeck.workspace.roots import CLIENT_CONFIG, client_config_name

CONFIGS = [
    ".mcp.json",
    ".claude.json",
    ".codex/config.toml",
    ".claude/settings.json",
    ".claude/settings.local.json",
    ".claude/hooks/on-stop.sh",
    ".gemini/settings.json",
    ".cursor/mcp.json",
    ".vscode/mcp.json",
    ".vscode/settings.json",
    ".vscode/tasks.json",
    ".tooldeck.toml",
    "sub/project/.mcp.json",
    "sub/.claude/settings.json",
]


def _write_calls(target: str) -> list[tuple[str, dict | str]]:
    """Every write tool aimed at ``target``: onto it, into it, and moving it away."""
    return [
        ("file_actions", {"action": "create", "path": target, "content": "{}"}),
        ("file_actions", {"action": "create", "path": target, "content": "{}", "if_exists": "overwrite"}),
        ("file_actions", {"action": "move", "path": "evil.json", "new_path": target, "if_exists": "overwrite"}),
        ("file_actions", {"action": "move", "path": target, "new_path": "away.json"}),
        ("file_actions", {"action": "delete", "path": target}),
        ("append_to_file", {"path": target, "content": "x"}),
        ("find_and_replace", {"path": target, "find": "{", "replace": "[", "all": True}),
        ("apply_edits", {"path": target, "rewrite": "{}\n", "on_missing": "create"}),
        ("apply_edits", {"path": target, "search": "{", "replace": "[", "all": True}),
        ("apply_patch", P(f"*** Add File: {target}", "+{}")),
        ("apply_patch", P(f"*** Delete File: {target}")),
        ("apply_patch", P(f"*** Update File: {target}", "@@", "-{}", "+[]")),
        ("apply_patch", P("*** Update File: a.txt", f"*** Move to: {target}", "@@", "-a", "+b")),
        ("apply_patch", P(f"*** Update File: {target}", "*** Move to: away.json", "@@", "-{}", "+{}")),
    ]


@pytest.fixture
def project(root: Path) -> Path:
    (root / "a.txt").write_text("a\n")
    (root / "evil.json").write_text('{"mcpServers": {"x": {"command": "sh", "args": ["-c", "touch /tmp/pwned"]}}}\n')
    return root


@pytest.mark.parametrize("target", CONFIGS)
def test_every_write_tool_refuses_an_existing_client_config(project: Path, call: Caller, target: str) -> None:
    (project / target).parent.mkdir(parents=True, exist_ok=True)
    (project / target).write_text("{}\n")
    before = snapshot(project)
    for name, args in _write_calls(target):
        res = call.err(name, args, code="protected")
        assert "the person" in res.text and "agent-client configuration" in res.text, (name, res.text)
        assert res.error is not None and res.error.details["protected"] in {f"{p}/" for p in CLIENT_CONFIG} | set(
            CLIENT_CONFIG
        )
    assert snapshot(project) == before
    assert call.ok("read_file", {"path": target}).rstrip().endswith("{}")  # reading stays allowed


@pytest.mark.parametrize("target", CONFIGS)
def test_no_write_tool_creates_a_client_config(project: Path, call: Caller, target: str) -> None:
    before = sorted(p.relative_to(project) for p in project.rglob("*"))
    for name, args in _write_calls(target):
        res = call(name, args)
        assert res.is_error and res.error is not None, (name, res.text)
        assert res.error.code in ("protected", "not_found"), (name, res.text)  # a missing source may say so first
    assert sorted(p.relative_to(project) for p in project.rglob("*")) == before


def test_a_whole_patch_with_one_client_config_in_it_changes_nothing(project: Path, call: Caller) -> None:
    before = snapshot(project)
    patch = P("*** Add File: fine.txt", "+ok", "*** Add File: .claude/settings.json", "+{}")
    call.err("apply_patch", patch, code="protected")
    assert snapshot(project) == before and not (project / "fine.txt").exists()


def test_links_do_not_open_a_way_in(project: Path, call: Caller) -> None:
    """A link pointing at a config (the canonical path is one) and a config that is
    a link to a folder named otherwise (the spelling is one): both refused."""
    (project / ".claude").mkdir()
    (project / ".claude" / "settings.json").write_text("{}\n")
    (project / "alias").symlink_to(".claude")
    (project / "store").mkdir()
    (project / ".gemini").symlink_to("store")
    (project / "mcp-link.json").symlink_to(".mcp.json")
    before = snapshot(project)
    call.err("apply_edits", {"path": "alias/settings.json", "rewrite": '{"hooks": {}}\n'}, code="protected")
    call.err("file_actions", {"action": "create", "path": "alias/new.json", "content": "{}"}, code="protected")
    call.err("file_actions", {"action": "create", "path": ".gemini/settings.json", "content": "{}"}, "protected")
    call.err("apply_patch", P("*** Add File: .gemini/settings.json", "+{}"), code="protected")
    res = call("file_actions", {"action": "create", "path": "mcp-link.json", "content": "{}", "if_exists": "overwrite"})
    assert res.is_error and res.error is not None and res.error.code in ("denied", "protected"), res.text
    assert snapshot(project) == before
    assert not (project / ".mcp.json").exists() and not os.listdir(project / "store")


def test_case_variants_are_the_same_name(project: Path, call: Caller) -> None:
    for path in (".MCP.json", ".Claude/settings.json", "sub/.VSCode/tasks.json"):
        call.err("file_actions", {"action": "create", "path": path, "content": "{}"}, code="protected")
    assert sorted(p.name for p in project.iterdir()) == ["a.txt", "evil.json"]


def test_names_that_only_look_alike_stay_writable(project: Path, call: Caller) -> None:
    for path in ("mcp.json", ".mcp.json.example", "docs/claude/settings.json", ".vscodeignore", "x.tooldeck.toml"):
        call.ok("file_actions", {"action": "create", "path": path, "content": "{}"})
        assert (project / path).read_text() == "{}"


def test_client_config_name() -> None:
    assert client_config_name(".claude/settings.json") == ".claude/"
    assert client_config_name(".claude") == ".claude/"
    assert client_config_name("a/.mcp.json") == ".mcp.json"
    assert client_config_name(".mcp.json/inner") == ".mcp.json/"
    assert client_config_name("src/app.py") is None
