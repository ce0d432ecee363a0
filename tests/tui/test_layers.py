"""SPEC §1: the TUI is a host; hosts never import each other. Today the
ChatMD engine lives in the ``chatmd`` host package, so exactly one bridge
module (``tui/engine.py``) may import it; nothing in ``tui/`` imports the MCP
server package, the dashboard or the CLI."""

from __future__ import annotations

import ast
from pathlib import Path

import tooldeck.tui

TUI = Path(tooldeck.tui.__file__).parent
OTHER_HOSTS = ("tooldeck.mcp", "tooldeck.dashboard", "tooldeck.cli", "tooldeck.launch")


def imports_of(path: Path) -> set[str]:
    out: set[str] = set()
    for node in ast.walk(ast.parse(path.read_text())):
        if isinstance(node, ast.Import):
            out.update(a.name for a in node.names)
        elif isinstance(node, ast.ImportFrom) and node.module:
            out.add(node.module)
            out.update(f"{node.module}.{a.name}" for a in node.names)
    return out


def test_only_the_bridge_imports_the_chatmd_engine() -> None:
    users = sorted(p.name for p in TUI.glob("*.py") if any(m.startswith("tooldeck.chatmd") for m in imports_of(p)))
    assert users == ["engine.py"]


def test_the_tui_imports_no_other_host() -> None:
    for p in TUI.glob("*.py"):
        bad = [m for m in imports_of(p) if m.startswith(OTHER_HOSTS)]
        assert not bad, f"{p.name} imports {bad}"


def test_no_other_package_imports_the_tui() -> None:
    src = TUI.parent
    for p in src.rglob("*.py"):
        if TUI in p.parents or p in (src / "cli_chat.py", src / "launch.py"):  # the entry points start it
            continue
        assert not [m for m in imports_of(p) if m.startswith("tooldeck.tui")], p
