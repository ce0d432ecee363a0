"""The shipped tool declarations (tooldeck.mcp.declared) against the live catalog.

A cold ``tools/list`` is answered from ``tools_manifest.json`` instead of
building every tool domain. It must say exactly what the catalog says: the
shipped file is regenerated here and must be the same (else it is stale), and
rendered over several workspaces, profiles, switches and config files it must
equal the wire form of the catalog ``serve`` would build. The light path must
not load what it exists to avoid (pydantic, the tool domains)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from tests.support.trust import write_approved
from tooldeck import tool_manifest
from tooldeck.catalog import build_toolbox, build_tools, config_switches
from tooldeck.config import load_config
from tooldeck.mcp import declared
from tooldeck.mcp.wire import tool_wire
from tooldeck.profiles import ToolSwitches
from tooldeck.runtime import Runtime
from tooldeck.workspace.roots import Workspace, make_root

pytestmark = [pytest.mark.timeout(300)]


def _live(rt: Runtime, profile: str | None, cli: ToolSwitches) -> list[dict[str, Any]]:
    """What `serve` lists: the catalog with the command line's switches over the config's."""
    box = build_toolbox(rt, profile, cli.over(config_switches(rt)))
    return [tool_wire(t) for t in box]


def _declared(rt: Runtime, profile: str | None, cli: ToolSwitches, built: list[str] | None = None) -> Any:
    def live(domain: str) -> list[dict[str, Any]]:
        if built is not None:
            built.append(domain)
        return [tool_wire(t) for t in build_tools(rt, (domain,))]

    config = load_config(rt.workspace.primary.path, state_dir=rt.state_dir)
    got = declared.declared_tools(rt.workspace, config.data, profile, cli, live)
    return None if got is None else [d.wire for d in got]


def test_the_shipped_manifest_is_the_live_catalogs() -> None:
    """Stale declarations fail here: after changing a tool's name, description,
    schema or annotations, run `python -m tooldeck.mcp.declared --write`."""
    assert declared.MANIFEST.read_text(encoding="utf-8") == declared.dump(declared.generate()), (
        "tools_manifest.json is stale: run python -m tooldeck.mcp.declared --write"
    )
    assert declared.MANIFEST.parent == Path(tool_manifest.__file__).parent  # package data, never a root's file


def _workspace(tmp_path: Path, kind: str) -> Workspace:
    if kind == "one":
        (tmp_path / "proj").mkdir()
        return Workspace([make_root(tmp_path / "proj")])
    for name in ("a b", "ünï", "docs"):
        (tmp_path / name).mkdir()
    return Workspace([
        make_root(tmp_path / "a b"),
        make_root(tmp_path / "ünï", id="second"),
        make_root(tmp_path / "docs", description="the manual", read_only=True),
    ])  # fmt: skip


@pytest.mark.parametrize("kind", ["one", "three"])
@pytest.mark.parametrize(
    ("profile", "cli"),
    [
        (None, ToolSwitches()),
        ("core", ToolSwitches()),
        ("read-only", ToolSwitches()),
        ("full", ToolSwitches(None, ("shell", "git"))),
        (None, ToolSwitches(("read_file", "get_contents", "git"))),
        ("core", ToolSwitches(("git",), ("apply_edits",))),
    ],
)
def test_rendered_declarations_are_what_the_catalog_serves(
    tmp_path: Path, state_dir: Path, kind: str, profile: str | None, cli: ToolSwitches
) -> None:
    rt = Runtime(_workspace(tmp_path, kind), state_dir=state_dir).start()
    built: list[str] = []
    assert _declared(rt, profile, cli, built) == _live(rt, profile, cli)
    assert built == []  # no [shell] in the config: no tool domain was built


def test_stored_folders_restored_at_start_are_described(tmp_path: Path, state_dir: Path) -> None:
    """The roots come from the started runtime: a folder stored in the launch
    workspace (inside the allowed parents) is a root of the answer too."""
    (tmp_path / "proj").mkdir()
    (tmp_path / "extra").mkdir()
    first = Runtime.for_dirs([tmp_path / "proj"], state_dir=state_dir, allow_roots=[tmp_path]).start()
    from tooldeck.state.workspaces import workspace_service

    workspace_service(first).add_folder(str(tmp_path / "extra"), None)
    rt = Runtime.for_dirs([tmp_path / "proj"], state_dir=state_dir, allow_roots=[tmp_path]).start()
    assert [r.path for r in rt.workspace.roots] == [str(tmp_path / "proj"), str(tmp_path / "extra")]
    assert _declared(rt, None, ToolSwitches()) == _live(rt, None, ToolSwitches())


CONFIGS = {
    "user disables": ("user", '[tools]\ndisabled = ["git", "read_dir"]\n'),
    "user enables": ("user", '[tools]\nenabled = ["read_file", "file_search"]\n'),
    "shell tools": ("user", '[shell.tools.lint]\ncommand = ["ruff", "check"]\ndescription = "Lint the code."\n'),
    "no shell": ("user", "[shell]\ndefault_tool = false\n"),
    "broken shell": ("user", "[shell]\nbogus = 1\n"),
    "project disables": ("project", '[tools]\ndisabled = ["apply_patch"]\nenabled = ["read_file"]\n'),
    "project shell (unapproved)": ("project", "[shell]\ndefault_tool = false\n"),
    "project shell (approved)": ("approved", '[shell.tools.lint]\ncommand = ["ruff", "check"]\n'),
}


@pytest.mark.parametrize("case", list(CONFIGS))
def test_config_files_count_as_they_do_for_the_catalog(
    tmp_path: Path, state_dir: Path, monkeypatch: pytest.MonkeyPatch, case: str
) -> None:
    """The person's file and a project's `.tooldeck.toml` (which the model can
    write: it may only disable tools, and declares shell tools only once
    approved) change the declared list exactly as they change the catalog."""
    where, body = CONFIGS[case]
    root = tmp_path / "proj"
    root.mkdir()
    if where == "user":
        user = tmp_path / "config.toml"
        user.write_text(body)
        monkeypatch.setenv("TOOLDECK_CONFIG", str(user))
    elif where == "project":
        (root / ".tooldeck.toml").write_text(body)
    else:
        write_approved(root, state_dir, body)
    rt = Runtime.for_dirs([root], state_dir=state_dir).start()
    built: list[str] = []
    got = _declared(rt, None, ToolSwitches(), built)
    assert got == _live(rt, None, ToolSwitches())
    # a [shell] table of any file that applies: that domain is built live, as the catalog would
    assert built == (["tooldeck.tools.shell"] if "[shell" in body else [])


def test_what_the_catalog_refuses_is_left_to_it(tmp_path: Path, state_dir: Path) -> None:
    """An unknown profile or tool name is the catalog's usage error: no declared answer."""
    rt = Runtime(_workspace(tmp_path, "one"), state_dir=state_dir).start()
    assert _declared(rt, "nope", ToolSwitches()) is None
    assert _declared(rt, None, ToolSwitches(("read_fiel",))) is None
    assert _declared(rt, None, ToolSwitches(None, ("no_such_tool",))) is None
    config = {"tools": {"enabled": 3}}  # malformed: the catalog's path says so
    assert declared.declared_tools(rt.workspace, config, None, ToolSwitches(), lambda d: []) is None


def test_a_manifest_of_another_format_is_not_served(tmp_path: Path, state_dir: Path) -> None:
    bad = tmp_path / "m.json"
    bad.write_text(json.dumps({"format": declared.FORMAT + 1, "tools": []}))
    assert declared.load(bad) is None
    bad.write_text("{not json")
    assert declared.load(bad) is None
    assert declared.load(tmp_path / "missing.json") is None


def test_the_light_path_loads_no_tool_model(tmp_path: Path, state_dir: Path) -> None:
    """What it is for: the declared list is made with the runtime and the
    config loader only; pydantic and the tool domains stay unloaded."""
    (tmp_path / "proj").mkdir()
    code = f"""
import sys
from tooldeck.config import load_config
from tooldeck.mcp.declared import declared_tools
from tooldeck.profiles import ToolSwitches
from tooldeck.runtime import Runtime
rt = Runtime.for_dirs([{str(tmp_path / "proj")!r}], state_dir={str(state_dir)!r}).start()
got = declared_tools(rt.workspace, load_config(rt.workspace.primary.path, state_dir=rt.state_dir).data,
                     None, ToolSwitches(), lambda d: 1 / 0)
heavy = sorted(m for m in sys.modules if m.split(".")[0] == "pydantic" or m.startswith("tooldeck.tools"))
print(len(got), heavy)
"""
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60, env=os.environ)
    assert out.returncode == 0, out.stderr
    count, heavy = out.stdout.split(" ", 1)
    assert int(count) == len(json.loads(declared.MANIFEST.read_text())["tools"]) and heavy.strip() == "[]"
