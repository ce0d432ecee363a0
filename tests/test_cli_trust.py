"""The trust boundary through the CLI, as subprocesses: ``--allow-root``,
``allow_roots`` in the user's config (never a project file), and the
person's ``tooldeck workspace add|remove|list`` commands."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

pytestmark = pytest.mark.timeout(120)


@pytest.fixture
def setup(tmp_path: Path) -> tuple[Path, Path, Path, Path]:
    root, outside, state = tmp_path / "proj", tmp_path / "outside", tmp_path / "state"
    for d in (root, outside, state):
        d.mkdir()
    (outside / "secret.txt").write_text("secret\n")
    config = tmp_path / "config.toml"  # the user's config file (absent unless a test writes it)
    return root, outside, state, config


def tooldeck(*args: str, state: Path, config: Path, cwd: Path | None = None) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "TOOLDECK_STATE_DIR": str(state), "TOOLDECK_CONFIG": str(config)}
    return subprocess.run(
        [sys.executable, "-m", "tooldeck", *args],
        input="",
        capture_output=True,
        text=True,
        cwd=cwd,
        env=env,
        timeout=60,
    )


def add_folder(root: Path, folder: Path, state: Path, config: Path, *extra: str) -> subprocess.CompletedProcess[str]:
    args = json.dumps({"action": "add_folder", "folder_path": str(folder)})
    return tooldeck("call", "manage_workspaces", args, "--root", str(root), *extra, state=state, config=config)


def test_add_folder_needs_the_persons_permission(setup: tuple[Path, Path, Path, Path]) -> None:
    root, outside, state, config = setup
    (root / ".tooldeck.toml").write_text(f'allow_roots = ["{outside}"]\n')  # a checkout cannot widen the roots
    res = add_folder(root, outside, state, config)
    assert res.returncode == 1 and "error [denied]" in res.stderr, res.stderr
    read = tooldeck("call", "read_file", json.dumps({"path": str(outside / "secret.txt")}), "--root", str(root),
                    state=state, config=config)  # fmt: skip
    assert read.returncode == 1 and "outside_roots" in read.stderr
    res = add_folder(root, outside, state, config, "--allow-root", str(outside.parent))
    assert res.returncode == 0 and "Added" in res.stdout, res.stderr


def test_allow_roots_in_the_user_config(setup: tuple[Path, Path, Path, Path]) -> None:
    root, outside, state, config = setup
    config.write_text(f'allow_roots = ["{outside}"]\n')
    res = add_folder(root, outside, state, config)
    assert res.returncode == 0, res.stderr


def test_workspace_commands(setup: tuple[Path, Path, Path, Path]) -> None:
    root, outside, state, config = setup
    res = tooldeck("workspace", "add", "Theirs", str(outside), state=state, config=config)
    assert res.returncode == 0 and "created workspace 'Theirs'" in res.stdout, res.stderr
    listed = tooldeck("workspace", "list", state=state, config=config)
    assert f"{os.path.realpath(outside)}  (root id outside; added by you)" in listed.stdout
    switch = json.dumps({"action": "switch", "workspace": "Theirs"})
    res = tooldeck("call", "manage_workspaces", switch, "--root", str(root), state=state, config=config)
    assert res.returncode == 0, res.stderr
    res = tooldeck("workspace", "remove", "Theirs", str(outside), state=state, config=config)
    assert res.returncode == 0 and "removed" in res.stdout
    res = tooldeck("workspace", "remove", "Nope", state=state, config=config)
    assert res.returncode == 1 and "no workspace 'Nope'" in res.stderr
    res = tooldeck("workspace", "remove", "Theirs", state=state, config=config)
    assert res.returncode == 0 and "deleted workspace" in res.stdout
    assert "Theirs" not in tooldeck("workspace", "list", state=state, config=config).stdout


def test_the_fast_serve_parser_takes_allow_root() -> None:
    from tooldeck.launch import parse_serve

    parsed = parse_serve(["/r", "--allow-root", "/a", "--allow-root=/b", "--profile", "read-only"])
    assert parsed is not None
    assert parsed.roots == ["/r"] and parsed.allow_roots == ["/a", "/b"] and parsed.profile == "read-only"
    assert parse_serve(["--allow-root"]) is None  # a missing value: the full CLI says so
