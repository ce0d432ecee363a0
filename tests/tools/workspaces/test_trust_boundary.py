"""The trust boundary (SPEC §3, issue 8 item 4): the model cannot widen its own roots.

manage_workspaces may create, switch to or extend a workspace only with
folders inside the allowed parents (launch roots, allow_roots, --allow-root,
folders the person approved or added); stored state never widens a process.
"""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

from tooldeck import cli_workspace as person
from tooldeck.catalog import build_toolbox
from tooldeck.core.toolbox import Toolbox, ToolResult
from tooldeck.runtime import Runtime
from tooldeck.state.tables import ContextDB
from tooldeck.state.workspaces import workspace_service


@pytest.fixture
def outside(tmp_path: Path) -> Path:
    d = tmp_path / "outside"
    d.mkdir()
    (d / "secret.txt").write_text("secret\n")
    return d


def run(box: Toolbox, name: str, args: dict) -> ToolResult:
    return box.call_sync(name, json.dumps(args))


def started(root: Path, state: Path, allow: list[Path] | None = None) -> tuple[Runtime, Toolbox]:
    rt = Runtime.for_dirs([root], state_dir=state, allow_roots=allow or []).start()
    return rt, build_toolbox(rt)


def roots(rt: Runtime) -> list[str]:
    return [r.path for r in rt.workspace.roots]


def folders_stored(state: Path) -> list[str]:
    from tooldeck.store.db import Store

    return sorted(f.path for w in ContextDB(Store(state)).workspaces() for f in w.folders)


def test_add_folder_outside_is_denied_and_reads_stay_outside(root: Path, state_dir: Path, outside: Path) -> None:
    rt, box = started(root, state_dir)
    for folder in (str(outside), "/etc"):
        res = run(box, "manage_workspaces", {"action": "add_folder", "folder_path": folder})
        assert res.is_error and res.error is not None and res.error.code == "denied", res.text
        assert "allow-root" in res.text and "tooldeck workspace add" in res.text
    assert roots(rt) == [os.path.realpath(root)]
    res = run(box, "read_file", {"path": str(outside / "secret.txt")})
    assert res.error is not None and res.error.code == "outside_roots"
    res = run(box, "read_file", {"path": "/etc/hostname"})
    assert res.error is not None and res.error.code == "outside_roots"
    assert folders_stored(state_dir) == [os.path.realpath(root)]


def test_create_with_an_outside_folder_is_denied(root: Path, state_dir: Path, outside: Path) -> None:
    rt, box = started(root, state_dir)
    res = run(box, "manage_workspaces", {"action": "create", "name": "Evil", "folder_path": str(outside)})
    assert res.error is not None and res.error.code == "denied", res.text
    assert roots(rt) == [os.path.realpath(root)]
    assert "Evil" not in run(box, "manage_workspaces", {"action": "list"}).text


def test_a_subfolder_of_a_launch_root_is_allowed(root: Path, state_dir: Path) -> None:
    (root / "pkg").mkdir()
    rt, box = started(root, state_dir)
    res = run(box, "manage_workspaces", {"action": "create", "name": "Pkg", "folder_path": str(root / "pkg")})
    assert not res.is_error, res.text
    assert roots(rt) == [os.path.realpath(root / "pkg")]


def test_allow_roots_admits_a_folder(root: Path, state_dir: Path, outside: Path) -> None:
    rt, box = started(root, state_dir, allow=[outside.parent])
    res = run(box, "manage_workspaces", {"action": "add_folder", "folder_path": str(outside)})
    assert not res.is_error, res.text
    assert run(box, "read_file", {"path": str(outside / "secret.txt")}).text.endswith("secret")


def test_a_folder_stored_by_a_wider_server_does_not_widen_the_next(root: Path, state_dir: Path, outside: Path) -> None:
    wide, box = started(root, state_dir, allow=[outside])
    assert not run(box, "manage_workspaces", {"action": "add_folder", "folder_path": str(outside)}).is_error
    assert not run(box, "manage_workspaces", {"action": "create", "name": "Out", "folder_path": str(outside)}).is_error
    narrow, box2 = started(root, state_dir)  # same roots, no --allow-root
    assert roots(narrow) == [os.path.realpath(root)]
    res = run(box2, "read_file", {"path": str(outside / "secret.txt")})
    assert res.error is not None and res.error.code == "outside_roots"
    res = run(box2, "manage_workspaces", {"action": "switch", "workspace": "Out"})
    assert res.error is not None and res.error.code == "denied", res.text
    assert roots(narrow) == [os.path.realpath(root)]
    # the wider server's stored folder is kept for it, not deleted by the narrow one
    assert os.path.realpath(outside) in folders_stored(state_dir)
    again, _ = started(root, state_dir, allow=[outside])
    assert roots(again) == [os.path.realpath(root), os.path.realpath(outside)]


def test_folders_the_person_added_are_trusted(root: Path, state_dir: Path, outside: Path) -> None:
    rt, box = started(root, state_dir)
    db = workspace_service(rt).db
    assert "created workspace 'Theirs'" in person.add_folder(db, "Theirs", str(outside))
    res = run(box, "manage_workspaces", {"action": "switch", "workspace": "Theirs"})
    assert not res.is_error, res.text
    assert run(box, "read_file", {"path": "secret.txt"}).text.endswith("secret")
    listing = person.list_workspaces(db)
    assert "Theirs" in listing and "added by you" in listing
    assert "removed" in person.remove(db, "Theirs", str(outside))


def test_the_person_is_asked_when_the_host_can_ask(root: Path, state_dir: Path, outside: Path) -> None:
    rt, box = started(root, state_dir)
    questions: list[str] = []
    answers = [False, True]

    def ask(question: str) -> bool:
        questions.append(question)
        return answers.pop(0)

    rt.ask_person = ask
    res = run(box, "manage_workspaces", {"action": "add_folder", "folder_path": str(outside)})
    assert res.error is not None and res.error.code == "denied" and "declined" in res.text
    assert roots(rt) == [os.path.realpath(root)]
    res = run(box, "manage_workspaces", {"action": "add_folder", "folder_path": str(outside)})
    assert not res.is_error, res.text
    assert len(questions) == 2 and str(os.path.realpath(outside)) in questions[0]
    assert run(box, "read_file", {"path": str(outside / "secret.txt")}).text.endswith("secret")


def test_building_the_catalog_changes_nothing(root: Path, state_dir: Path, tmp_path: Path) -> None:
    """Issue 9 item 4: stored roots are restored by Runtime.start(), whatever the domain order."""
    extra = root / "extra"
    extra.mkdir()
    rt, box = started(root, state_dir)
    assert not run(box, "manage_workspaces", {"action": "add_folder", "folder_path": str(extra)}).is_error
    fresh = Runtime.for_dirs([root], state_dir=state_dir)
    build_toolbox(fresh)
    assert roots(fresh) == [os.path.realpath(root)]  # building restored nothing
    from tooldeck.catalog import DOMAINS, build_tools

    reordered = Runtime.for_dirs([root], state_dir=state_dir).start()
    names = [t.name for t in build_tools(reordered, tuple(reversed(DOMAINS)))]
    assert "manage_workspaces" in names
    assert roots(reordered) == [os.path.realpath(root), os.path.realpath(extra)]


def test_root_describing_tools_follow_a_switch(root: Path, state_dir: Path, outside: Path) -> None:
    rt, box = started(root, state_dir, allow=[outside])
    assert box.get("read_file").parameters["properties"]["root"]["enum"] == ["root"]
    before = box.generation
    assert not run(box, "manage_workspaces", {"action": "add_folder", "folder_path": str(outside)}).is_error
    assert box.generation > before
    assert box.get("read_file").parameters["properties"]["root"]["enum"] == ["root", "outside"]
    assert os.path.realpath(outside) in box.get("read_directory").description
    assert not run(box, "manage_workspaces", {"action": "create", "name": "O", "folder_path": str(outside)}).is_error
    assert box.get("read_file").parameters["properties"]["root"]["enum"] == ["outside"]
    assert run(box, "read_file", {"file": "secret.txt", "root": "outside"}).text.endswith("secret")
