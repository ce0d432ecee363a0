"""``tooldeck connect CLIENT``: the printed entry and what ``--write`` does to
each client's config file (the real clients read these files in
tests/clients/test_agent_clients.py)."""

from __future__ import annotations

import json
import subprocess
import sys
import tomllib
from pathlib import Path

import pytest


def connect(*args: str, home: Path, cwd: Path) -> subprocess.CompletedProcess[str]:
    env = {"HOME": str(home), "PATH": "/usr/bin:/bin", "PYTHONPATH": ":".join(sys.path)}
    return subprocess.run([sys.executable, "-m", "tooldeck", "connect", *args], cwd=cwd, env=env,
                          capture_output=True, text=True, timeout=60)  # fmt: skip


@pytest.fixture
def home(tmp_path: Path) -> Path:
    (tmp_path / "home").mkdir()
    return tmp_path / "home"


def test_codex_write_keeps_the_file_and_replaces_the_entry(home: Path, root: Path) -> None:
    config = home / ".codex" / "config.toml"
    config.parent.mkdir()
    config.write_text('# mine\nmodel = "o3"\n\n[mcp_servers.other]\ncommand = "x"\n\n[mcp_servers.tooldeck]\nold = 1\n')
    done = connect("codex", str(root), "--write", "--env", "A=b", home=home, cwd=root)
    assert done.returncode == 0, done.stderr
    text = config.read_text()
    assert text.startswith("# mine\n")
    data = tomllib.loads(text)
    assert data["model"] == "o3" and data["mcp_servers"]["other"] == {"command": "x"}
    entry = data["mcp_servers"]["tooldeck"]
    assert "old" not in entry and entry["required"] is True and entry["default_tools_approval_mode"] == "approve"
    assert entry["args"][-2:] == ["serve", str(root)] and entry["env"] == {"A": "b"}
    assert entry["startup_timeout_sec"] >= 10
    asked = connect("codex", "--write", "--ask", home=home, cwd=root)
    assert asked.returncode == 0
    assert "default_tools_approval_mode" not in tomllib.loads(config.read_text())["mcp_servers"]["tooldeck"]


def test_claude_write_loads_at_start_and_allows_the_server(home: Path, root: Path) -> None:
    (home / ".claude.json").write_text(json.dumps({"numStartups": 3, "mcpServers": {"x": {"command": "y"}}}))
    done = connect("claude", str(root), "--write", home=home, cwd=root)
    assert done.returncode == 0, done.stderr
    data = json.loads((home / ".claude.json").read_text())
    assert data["numStartups"] == 3 and data["mcpServers"]["x"] == {"command": "y"}
    entry = data["mcpServers"]["tooldeck"]
    assert entry["type"] == "stdio" and entry["alwaysLoad"] is True and entry["args"][-1] == str(root)
    settings = json.loads((home / ".claude" / "settings.json").read_text())
    assert settings["permissions"]["allow"] == ["mcp__tooldeck"]
    connect("claude", str(root), "--write", home=home, cwd=root)  # again: no duplicate rule
    assert json.loads((home / ".claude" / "settings.json").read_text())["permissions"]["allow"] == ["mcp__tooldeck"]


@pytest.mark.parametrize(
    ("client", "where", "key"),
    [("gemini", ".gemini/settings.json", "mcpServers"), ("cursor", ".cursor/mcp.json", "mcpServers"),
     ("vscode", ".vscode/mcp.json", "servers")],
)  # fmt: skip
def test_json_clients_project_scope(client: str, where: str, key: str, home: Path, root: Path) -> None:
    done = connect(client, "--write", "--scope", "project", "--profile", "core", home=home, cwd=root)
    assert done.returncode == 0, done.stderr
    entry = json.loads((root / where).read_text())[key]["tooldeck"]
    assert entry["args"][-3:] == ["serve", "--profile", "core"]
    if client == "gemini":
        assert entry["trust"] is True and entry["timeout"] >= 60_000


def test_a_config_written_inside_a_served_root_is_said(home: Path, root: Path) -> None:
    """Project scope with no root named serves the project itself: the person is told
    the file lies where a model works (and what guards it), once per file written."""
    done = connect("claude", "--write", "--scope", "project", home=home, cwd=root)
    assert done.returncode == 0, done.stderr
    for name in (".mcp.json", ".claude/settings.local.json"):
        assert f"note: {root / name} is inside {root}, a folder this entry serves" in done.stderr, done.stderr
    assert "agent-client configuration is protected" in done.stderr
    user = connect("claude", str(home.parent / "elsewhere"), "--write", home=home, cwd=root)
    assert user.returncode == 2  # not a folder
    (home.parent / "elsewhere").mkdir()
    user = connect("claude", str(home.parent / "elsewhere"), "--write", home=home, cwd=root)
    assert user.returncode == 0 and "note:" not in user.stderr, user.stderr  # ~/.claude.json: outside the root
    inside = connect("gemini", str(home), "--write", home=home, cwd=root)  # a root holding the user's own config
    assert f"note: {home / '.gemini' / 'settings.json'} is inside {home}" in inside.stderr, inside.stderr


def test_print_writes_nothing_and_bad_input_is_refused(home: Path, root: Path) -> None:
    shown = connect("claude", str(root), home=home, cwd=root)
    assert shown.returncode == 0 and '"alwaysLoad": true' in shown.stdout and "claude mcp add" in shown.stdout
    assert not (home / ".claude.json").exists()
    assert connect("zed", home=home, cwd=root).returncode == 2
    (home / ".cursor").mkdir()
    (home / ".cursor" / "mcp.json").write_text("{broken")
    broken = connect("cursor", "--write", home=home, cwd=root)
    assert broken.returncode == 1 and "not valid JSON" in broken.stderr
    assert (home / ".cursor" / "mcp.json").read_text() == "{broken"


def test_write_follows_no_planted_link_and_keeps_a_linked_config(home: Path, root: Path, tmp_path: Path) -> None:
    """A link planted at the old fixed temp name is never written through; a
    config that is a link (a dotfiles folder) is written at its target and stays a link."""
    victim = tmp_path / "victim.txt"
    victim.write_text("keep me\n")
    (root / ".mcp.json.tooldeck-tmp").symlink_to(victim)
    done = connect("claude", "--write", "--scope", "project", "--ask", home=home, cwd=root)
    assert done.returncode == 0, done.stderr
    assert victim.read_text() == "keep me\n" and not (root / ".mcp.json").is_symlink()
    assert "tooldeck" in json.loads((root / ".mcp.json").read_text())["mcpServers"]
    dotfiles = tmp_path / "dotfiles" / "claude.json"
    dotfiles.parent.mkdir()
    dotfiles.write_text(json.dumps({"numStartups": 1}))
    (home / ".claude.json").symlink_to(dotfiles)
    assert connect("claude", str(root), "--write", home=home, cwd=root).returncode == 0
    assert (home / ".claude.json").is_symlink()
    assert json.loads(dotfiles.read_text())["mcpServers"]["tooldeck"]["args"][-1] == str(root)


def test_config_names_the_one_file_written(home: Path, root: Path) -> None:
    """``--config`` writes that file only: the person's Claude settings (which
    would allow the server in every project) are not touched; the rule is printed instead."""
    done = connect("claude", str(root), "--write", "--config", str(root / "x.json"), home=home, cwd=root)
    assert done.returncode == 0, done.stderr
    assert "tooldeck" in json.loads((root / "x.json").read_text())["mcpServers"]
    assert not (home / ".claude" / "settings.json").exists() and "mcp__tooldeck" in done.stderr


def test_a_settings_file_of_another_shape_writes_nothing(home: Path, root: Path) -> None:
    (home / ".claude").mkdir()
    (home / ".claude" / "settings.json").write_text(json.dumps({"permissions": {"allow": "all"}}))
    done = connect("claude", str(root), "--write", home=home, cwd=root)
    assert done.returncode == 1 and "permissions.allow is not a list" in done.stderr
    assert not (home / ".claude.json").exists()  # checked before the entry was written
    printed = connect("claude", "--scope", "project", home=home, cwd=root).stdout
    assert printed.count("claude mcp add --scope project") == 1


@pytest.mark.parametrize("client", ["cursor", "vscode"])
def test_ask_is_refused_where_it_could_not_act(client: str, home: Path, root: Path) -> None:
    done = connect(client, "--ask", "--write", home=home, cwd=root)
    assert done.returncode == 2 and "--ask applies to" in done.stderr
    assert not (home / f".{client}").exists() and not (root / f".{client}").exists()
