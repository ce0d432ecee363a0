"""manage_workspaces: workspaces, folders and tabs, with the seed's refusals."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from tooldeck.catalog import build_toolbox
from tooldeck.runtime import Runtime
from tooldeck.selection.service import selection_service
from tooldeck.state.workspaces import workspace_service


@pytest.fixture
def runtime(root: Path, state_dir: Path, tmp_path: Path) -> Runtime:
    """The person allows the whole temporary folder (``other`` lies beside the root)."""
    return Runtime.for_dirs([root], state_dir=state_dir, allow_roots=[tmp_path]).start()


def restart(root: Path, state_dir: Path) -> Runtime:
    """Another process on the same state, with the same allowed parent."""
    return Runtime.for_dirs([root], state_dir=state_dir, allow_roots=[root.parent]).start()


@pytest.fixture
def other(tmp_path: Path) -> Path:
    d = tmp_path / "other"
    d.mkdir()
    (d / "notes.txt").write_text("other project\n")
    return d


def roots(rt: Runtime) -> list[str]:
    return [r.path for r in rt.workspace.roots]


def test_list_shows_the_launch_workspace_as_current(call, root, runtime):
    out = call.ok("manage_workspaces", {"action": "list"})
    assert out.startswith("Workspaces (1; * = current):")
    assert f"* {root.name}  [id " in out and f"folders: {os.path.realpath(root)}" in out


def test_create_with_folder_switches_and_tools_follow(call, root, runtime, other):
    (root / "mine.txt").write_text("mine\n")
    out = call.ok("manage_workspaces", {"action": "create", "name": "Other", "folder_path": str(other)})
    assert "switched to it" in out
    assert roots(runtime) == [os.path.realpath(other)]
    assert call.ok("read_file", {"path": "notes.txt"}).endswith("other project")
    call.err("read_file", {"path": str(root / "mine.txt")}, code="outside_roots")
    call.ok("manage_workspaces", {"action": "switch", "workspace": root.name})
    assert roots(runtime) == [os.path.realpath(root)]
    assert call.ok("read_file", {"path": "mine.txt"}).endswith("mine")


def test_each_workspace_has_its_own_selection(call, root, runtime, other):
    (root / "a.py").write_text("A = 1\n")
    call.ok("manage_selection", {"op": "add", "paths": ["a.py"]})
    call.ok("manage_workspaces", {"action": "create", "name": "Other", "folder_path": str(other)})
    assert selection_service(runtime).snapshot().files == {}
    call.ok("manage_selection", {"op": "add", "paths": ["notes.txt"]})
    call.ok("manage_workspaces", {"action": "switch", "workspace": root.name})
    assert list(selection_service(runtime).snapshot().files) == [os.path.realpath(root / "a.py")]


def test_create_refusals_and_empty_workspace(call, root, runtime, other):
    out = call.ok("manage_workspaces", {"action": "create", "name": "Empty"})
    assert "with no folders" in out
    assert roots(runtime) == [os.path.realpath(root)]  # not switched: nothing to switch to
    call.err("manage_workspaces", {"action": "create", "name": "empty"}, code="already_exists")
    call.err("manage_workspaces", {"action": "switch", "workspace": "Empty"}, code="not_found")
    call.err("manage_workspaces", {"action": "create"}, code="invalid_arguments")
    call.err("manage_workspaces", {"action": "create", "name": "X", "folder_path": "rel/dir"}, code="invalid_arguments")
    call.ok("manage_workspaces", {"action": "add_folder", "workspace": "Empty", "folder_path": str(other)})
    call.ok("manage_workspaces", {"action": "switch", "workspace": "Empty"})
    assert roots(runtime) == [os.path.realpath(other)]


def test_switch_by_id_and_unknown_workspace(call, root, runtime, other):
    call.ok(
        "manage_workspaces",
        {"action": "create", "name": "Other", "folder_path": str(other), "switch_to_created": False},
    )
    ws_id = next(w.id for w in workspace_service(runtime).db.workspaces() if w.name == "Other")
    call.ok("manage_workspaces", {"action": "switch", "workspace": ws_id})
    assert roots(runtime) == [os.path.realpath(other)]
    res = call.err("manage_workspaces", {"action": "switch", "workspace": "nope"}, code="not_found")
    assert "'Other'" in res.text


def test_add_and_remove_folder_of_the_current_workspace(call, root, runtime, other):
    out = call.ok("manage_workspaces", {"action": "add_folder", "folder_path": str(other)})
    assert "roots now:" in out
    assert roots(runtime) == [os.path.realpath(root), os.path.realpath(other)]
    assert call.ok("read_file", {"path": str(other / "notes.txt")}).endswith("other project")
    tree = call.ok("get_file_tree", {"mode": "full"})
    assert "notes.txt" in tree
    call.err("manage_workspaces", {"action": "add_folder", "folder_path": str(other)}, code="already_exists")
    call.err("manage_workspaces", {"action": "add_folder", "folder_path": "other"}, code="invalid_arguments")
    call.err("manage_workspaces", {"action": "add_folder", "folder_path": str(other / "nope")}, code="not_found")
    call.err("manage_workspaces", {"action": "add_folder", "folder_path": "/"}, code="denied")
    call.ok("manage_workspaces", {"action": "remove_folder", "folder_path": str(other)})
    assert roots(runtime) == [os.path.realpath(root)]
    call.err("read_file", {"path": str(other / "notes.txt")}, code="outside_roots")
    call.err("manage_workspaces", {"action": "remove_folder", "folder_path": str(other)}, code="not_found")
    call.err("manage_workspaces", {"action": "remove_folder", "folder_path": str(root)}, code="denied")  # last folder


def test_delete_refuses_the_current_workspace_and_removes_another(call, root, runtime, other):
    call.err("manage_workspaces", {"action": "delete", "workspace": root.name}, code="denied")
    call.ok(
        "manage_workspaces",
        {"action": "create", "name": "Other", "folder_path": str(other), "switch_to_created": False},
    )
    call.ok("manage_workspaces", {"action": "delete", "workspace": "other"})
    assert "Other" not in call.ok("manage_workspaces", {"action": "list"})
    call.err("manage_workspaces", {"action": "delete", "workspace": "Other"}, code="not_found")


def test_tabs_create_select_fork_and_close(call, root, runtime):
    (root / "a.py").write_text("A = 1\n")
    call.ok("manage_selection", {"op": "add", "paths": ["a.py"]})
    call.ok("prompt", {"op": "set", "text": "first tab prompt"})
    out = call.ok("manage_workspaces", {"action": "create_tab", "name": "Scratch"})
    assert "this connection now works on it" in out
    assert selection_service(runtime).snapshot().files == {}
    assert "empty" in call.ok("prompt", {"op": "get"})
    call.ok("manage_workspaces", {"action": "create_tab", "name": "Copy", "mode": "fork", "source_tab": "Tab 1"})
    assert call.ok("prompt", {"op": "get"}) == "first tab prompt"
    assert list(selection_service(runtime).snapshot().files) == [os.path.realpath(root / "a.py")]
    listing = call.ok("manage_workspaces", {"action": "list_tabs"})
    assert "  Tab 1  [id " in listing and "(active)" in listing
    assert "* Copy  [id " in listing and "1 selected file(s), prompt 16 chars" in listing
    call.ok("manage_workspaces", {"action": "select_tab", "tab": "scratch"})
    assert selection_service(runtime).snapshot().files == {}
    call.err("manage_workspaces", {"action": "select_tab", "tab": "nope"}, code="not_found")
    call.err("manage_workspaces", {"action": "create_tab", "name": "copy"}, code="already_exists")
    call.err("manage_workspaces", {"action": "create_tab", "source_tab": "Tab 1"}, code="invalid_arguments")


def test_close_tab_refusals(call, root, runtime):
    res = call.err("manage_workspaces", {"action": "close_tab", "tab": "Tab 1"}, code="denied")
    assert "last tab" in res.text
    call.ok("manage_workspaces", {"action": "create_tab", "name": "Two", "bind": False})
    res = call.err("manage_workspaces", {"action": "close_tab", "tab": "Tab 1"}, code="denied")
    assert "active tab" in res.text and "allow_active" in res.text
    call.ok("manage_workspaces", {"action": "close_tab", "tab": "Two"})
    call.ok("manage_workspaces", {"action": "create_tab", "name": "Three"})  # bound, not active
    out = call.ok("manage_workspaces", {"action": "close_tab", "tab": "Tab 1", "allow_active": True})
    assert "works on tab 'Three'" in out
    listing = call.ok("manage_workspaces", {"action": "list_tabs"})
    assert "Tab 1" not in listing and "* Three" in listing and "(active)" in listing


def test_closing_the_bound_tab_rebinds_to_the_active_one(call, root, runtime):
    call.ok("manage_workspaces", {"action": "create_tab", "name": "Work"})
    out = call.ok("manage_workspaces", {"action": "close_tab", "tab": "Work"})
    assert "works on tab 'Tab 1'" in out


def test_tab_binding_and_added_folders_survive_a_restart(call, root, runtime, state_dir, other):
    (root / "a.py").write_text("A = 1\n")
    call.ok("manage_workspaces", {"action": "add_folder", "folder_path": str(other)})
    call.ok("manage_workspaces", {"action": "create_tab", "name": "Work"})
    call.ok("manage_selection", {"op": "add", "paths": ["a.py"]})
    again = restart(root, state_dir)
    box = build_toolbox(again)
    assert roots(again) == [os.path.realpath(root), os.path.realpath(other)]
    assert workspace_service(again).current().tab.name == "Work"
    assert list(selection_service(again).snapshot().files) == [os.path.realpath(root / "a.py")]
    assert box.call_sync("read_file", '{"path": "' + str(other / "notes.txt") + '"}').text.endswith("other project")


def test_focus_decides_the_tab_other_processes_switch_into(call, root, runtime, state_dir, other):
    call.ok("manage_workspaces", {"action": "create_tab", "name": "Focused", "focus": True})
    call.ok("manage_workspaces", {"action": "create_tab", "name": "Background"})  # bound here, not focused
    elsewhere = restart(other, state_dir)  # another process, started elsewhere
    box = build_toolbox(elsewhere)
    res = box.call_sync("manage_workspaces", '{"action": "switch", "workspace": "' + root.name + '"}')
    assert not res.is_error, res.text
    assert workspace_service(elsewhere).current().tab.name == "Focused"
    assert workspace_service(runtime).current().tab.name == "Background"  # this process keeps its binding


def test_a_removed_start_folder_comes_back_at_the_next_start(call, root, runtime, state_dir, other):
    call.ok("manage_workspaces", {"action": "add_folder", "folder_path": str(other)})
    call.ok("manage_workspaces", {"action": "remove_folder", "folder_path": str(root)})
    assert roots(runtime) == [os.path.realpath(other)]
    again = restart(root, state_dir)
    assert roots(again) == [os.path.realpath(root), os.path.realpath(other)]


def test_bad_action_arguments(call):
    for args in ({"action": "switch"}, {"action": "select_tab"}, {"action": "close_tab"}, {"action": "remove_folder"}):
        res = call.err("manage_workspaces", args, code="invalid_arguments")
        assert "needs" in res.text
    call.err("manage_workspaces", {"action": "fly"}, code="invalid_arguments")
    call.err("manage_workspaces", {"action": "list", "window_id": 1}, code="invalid_arguments")
