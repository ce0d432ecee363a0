"""What the stdio front builds of the catalog before the whole of it: a tool
alone, a domain, shared with the catalog's build (tooldeck.catalog)."""

from __future__ import annotations

import asyncio
from pathlib import Path

import pytest

from tooldeck.catalog import build_domain_toolbox, build_toolbox
from tooldeck.core.invocation import Invocation
from tooldeck.mcp.wire import tool_wire
from tooldeck.runtime import Runtime
from tooldeck.tool_manifest import load
from tooldeck.workspace.roots import Workspace, make_root

FILES = "tooldeck.tools.files"


@pytest.fixture
def rt(tmp_path: Path, state_dir: Path) -> Runtime:
    (tmp_path / "proj").mkdir()
    (tmp_path / "proj" / "notes.txt").write_text("alpha\nbeta\n")
    return Runtime.for_dirs([tmp_path / "proj"], state_dir=state_dir).start()


@pytest.mark.parametrize("name", ["read_file", "read_directory", "get_file_tree"])
def test_a_tool_built_alone_is_the_catalogs(rt: Runtime, name: str) -> None:
    alone = build_domain_toolbox(rt, FILES, name=name)
    catalog = build_toolbox(rt)
    assert [t.name for t in alone] == [name]
    assert tool_wire(alone.get(name)) == tool_wire(catalog.get(name))
    args = {"path": "notes.txt"} if name == "read_file" else {}

    async def both() -> tuple[str | None, str | None]:
        a = await alone.call(name, args, invocation=Invocation.silent())
        b = await catalog.call(name, args, invocation=Invocation.silent())
        return a.text, b.text

    mine, theirs = asyncio.run(both())
    assert mine == theirs and mine


def test_a_tool_its_domain_cannot_build_alone_comes_from_its_domain_built_whole(rt: Runtime) -> None:
    box = build_domain_toolbox(rt, FILES, name="file_actions")
    assert [t.name for t in box] == ["file_actions"]
    domain = build_domain_toolbox(rt, FILES)  # built then, and shared: not built again
    assert domain.get("file_actions") is box.get("file_actions") and "read_file" in domain


def test_the_profile_still_decides(rt: Runtime) -> None:
    assert [t.name for t in build_domain_toolbox(rt, "tooldeck.tools.git", "core", name="git")] == []
    assert [t.name for t in build_domain_toolbox(rt, FILES, "read-only", name="read_file")] == ["read_file"]


def test_one_build_per_domain_at_a_start_and_fresh_tools_after_a_workspace_change(rt: Runtime, tmp_path: Path) -> None:
    domain = build_domain_toolbox(rt, FILES)
    catalog = build_toolbox(rt, shared=True)
    assert catalog.get("read_file") is domain.get("read_file")  # built once, by whichever asked first
    (tmp_path / "other").mkdir()
    rt.replace_workspace(Workspace([make_root(tmp_path / "other")]))
    again = build_domain_toolbox(rt, FILES)
    assert again.get("read_file") is not domain.get("read_file")
    assert str(tmp_path / "other") in again.get("read_file").description


def test_every_declared_tool_is_built_by_its_domain_as_the_catalog_builds_it(rt: Runtime) -> None:
    """`tooldeck call` builds only the domain the shipped declarations name
    (tooldeck.cli_call.toolbox_for): each must hold the catalog's very tool."""
    catalog = build_toolbox(rt)
    entries = load()
    assert entries and {e["tool"]["name"] for e in entries} == {t.name for t in catalog}
    for entry in entries:
        name = entry["tool"]["name"]
        alone = build_domain_toolbox(rt, entry["domain"])
        assert tool_wire(alone.get(name)) == tool_wire(catalog.get(name)), name


SELECTION_READERS = [
    ("tooldeck.tools.files", "get_file_tree", {"mode": "selected"}),
    ("tooldeck.tools.structure", "get_code_structure", {}),
    ("tooldeck.tools.git", "git", {"op": "status", "scope": "selected"}),
]


@pytest.mark.parametrize(("domain", "name", "args"), SELECTION_READERS)
def test_a_domain_built_alone_reads_the_stored_selection_as_the_catalog_does(
    tmp_path: Path, state_dir: Path, domain: str, name: str, args: dict[str, str]
) -> None:
    """The tree's `*` and `scope=selected` read the selection the selection
    domain publishes; a process that built one other domain (`tooldeck call`,
    ChatMD's built-ins) must see the same stored selection."""
    proj = tmp_path / "proj"
    proj.mkdir()
    (proj / "a.py").write_text("def chosen():\n    return 1\n")
    (proj / "b.py").write_text("def other():\n    return 2\n")
    selecting = Runtime.for_dirs([proj], state_dir=state_dir).start()
    asyncio.run(build_toolbox(selecting).call("manage_selection", {"op": "add", "paths": ["a.py"]}))

    def answer(build: object) -> str:
        rt = Runtime.for_dirs([proj], state_dir=state_dir).start()  # a new process's runtime, same state
        box = build(rt)  # type: ignore[operator]
        result = asyncio.run(box.call(name, args, invocation=Invocation.silent()))
        return result.text or ""

    alone = answer(lambda rt: build_domain_toolbox(rt, domain))
    assert alone == answer(build_toolbox)
    if name != "git":  # not a repository: git says so either way
        assert "a.py" in alone and "b.py" not in alone
