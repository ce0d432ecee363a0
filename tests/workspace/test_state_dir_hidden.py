"""The state directory is outside every root, even when a root contains it
(issue 28: serving $HOME with the default ~/.local/state/tooldeck).

Every tool that reads, lists, searches, indexes or writes files is driven at
it the way a model would — by its path, by an absolute path, through a
symbolic link — and the host checks that nothing was read out of it and
nothing was written into it."""

from __future__ import annotations

import json
import os
import subprocess
from pathlib import Path

import pytest

from tests.conftest import Caller, snapshot
from tooldeck.catalog import build_toolbox
from tooldeck.mcp.resources import ResourceProvider, file_uri
from tooldeck.runtime import Runtime
from tooldeck.workspace import journal
from tooldeck.workspace.ripgrep import find_rg
from tooldeck.workspace.walk import walk

MARK = "SECRETMARK4711"
STATE_REL = ".local/state/tooldeck"


@pytest.fixture
def home(tmp_path: Path) -> Path:
    d = tmp_path / "home"
    (d / "src").mkdir(parents=True)
    (d / "src" / "app.py").write_text("def visible_fn():\n    return 1\n")
    (d / "notes.md").write_text("# Notes\n")
    return d


@pytest.fixture
def state(home: Path) -> Path:
    d = home / STATE_REL
    d.mkdir(parents=True)
    (d / "secret.txt").write_text(f"api_key = {MARK}\n")
    (d / "evil.py").write_text(f"def fn_{MARK}():\n    return '{MARK}'\n")
    (d / "sub").mkdir()
    (d / "sub" / "deep.md").write_text(f"# {MARK}\n")
    return d


@pytest.fixture
def rt(home: Path, state: Path) -> Runtime:
    return Runtime.for_dirs([home], state_dir=state)


@pytest.fixture
def call(rt: Runtime) -> Caller:
    c = Caller(build_toolbox(rt))
    c.ok("file_actions", {"action": "create", "path": "made.txt", "content": "x"})  # a journal and its key exist
    c.ok("apply_patch", "*** Begin Patch\n*** Add File: two.txt\n+2\n*** Add File: three.txt\n+3\n*** End Patch\n")
    journal.flush()
    return c


def test_reading_the_state_dir_is_refused(call: Caller, rt: Runtime, home: Path, state: Path) -> None:
    for path in (f"{STATE_REL}/secret.txt", str(state / "secret.txt"), f"{STATE_REL}/journal.key", STATE_REL):
        res = call.err("read_file", {"file": path}, "outside_roots")
        assert MARK not in res.text
    call.err("read_directory", {"path": STATE_REL}, "outside_roots")
    call.err("read_directory", {"path": str(state / "journal")}, "outside_roots")
    assert "tooldeck" not in call.ok("read_directory", {"path": ".local/state"}).split()  # not even its name
    provider = ResourceProvider(lambda: rt.workspace)
    with pytest.raises(Exception, match="outside"):
        provider.read(file_uri(str(state / "secret.txt")))
    listed = [r["uri"] for r in provider.list(None)["resources"]]
    assert any(u.endswith("/src/app.py") for u in listed) and not any("/.local/state/tooldeck" in u for u in listed)


def test_a_symlink_into_the_state_dir_is_refused(call: Caller, home: Path, state: Path) -> None:
    (home / "link").symlink_to(state)
    (home / "keylink").symlink_to(state / "journal.key")
    call.err("read_file", {"file": "link/secret.txt"}, "outside_roots")
    call.err("read_file", {"file": "keylink"}, "outside_roots")
    call.err("file_actions", {"action": "create", "path": "link/planted.txt", "content": "x"}, "outside_roots")
    call.err("append_to_file", {"path": "link/secret.txt", "content": "more"}, "outside_roots")
    assert not (state / "planted.txt").exists()
    assert (state / "secret.txt").read_text() == f"api_key = {MARK}\n"


def test_tree_search_and_codemaps_never_show_it(call: Caller, home: Path, state: Path) -> None:
    tree = call.ok("get_file_tree", {"type": "files"})
    assert "app.py" in tree and "secret.txt" not in tree and "journal" not in tree and "evil.py" not in tree
    for args in ({"pattern": MARK, "mode": "content"}, {"pattern": "secret", "mode": "path"}):
        out = call("file_search", args).text  # the reply repeats the pattern: look for the files
        assert not any(n in out for n in ("secret.txt", "evil.py", "deep.md", "api_key")), out
    assert "visible_fn" in call.ok("file_search", {"pattern": "visible_fn", "mode": "content"})
    call.err("file_search", {"pattern": MARK, "filter": {"paths": [STATE_REL]}})
    structure = call("get_code_structure", {"scope": "paths", "paths": ["src", "."]}).text
    assert "visible_fn" in structure and MARK not in structure
    call.err("get_code_structure", {"scope": "paths", "paths": [f"{STATE_REL}/evil.py"]}, "outside_roots")
    assert "evil.py" not in call("find_symbol", {"name": f"fn_{MARK}"}).text
    call.err("manage_selection", {"op": "add", "paths": [f"{STATE_REL}/secret.txt"]})


def test_walks_skip_it_even_without_ignore_rules(call: Caller, rt: Runtime) -> None:
    ws = rt.workspace
    rels = [e.rel for e in walk(ws.rules(ws.primary), respect_ignore=False)]
    assert "src/app.py" in rels and ".local/state" in rels
    assert not [r for r in rels if r.startswith(STATE_REL)]
    assert list(walk(ws.rules(ws.primary), STATE_REL)) == []


@pytest.mark.requires("rg")
def test_ripgrep_is_told_to_skip_it(home: Path, state: Path, call: Caller) -> None:
    from tooldeck.workspace.ripgrep import ignore_args

    args = ignore_args(str(home))
    proc = subprocess.run(
        [str(find_rg()), "--no-config", "-l", *args, MARK], cwd=home, capture_output=True, text=True, check=False
    )
    assert proc.stdout == "", proc.stdout
    bare = subprocess.run([str(find_rg()), "--no-config", "-l", "--hidden", MARK], cwd=home, capture_output=True)
    assert bare.stdout  # without the skip, rg would have found it


@pytest.mark.requires("git")
def test_git_never_shows_its_files(call: Caller, home: Path) -> None:
    env = {**os.environ, "GIT_CONFIG_GLOBAL": "/dev/null", "GIT_CONFIG_SYSTEM": "/dev/null"}
    subprocess.run(["git", "init", "-q", str(home)], check=True, env=env)
    subprocess.run(["git", "-C", str(home), "add", "src"], check=True, env=env)
    for op in ("status", "diff"):
        out = call.ok("git", {"op": op, "detail": "full"} if op == "diff" else {"op": op})
        assert MARK not in out and "journal.key" not in out and "secret.txt" not in out, out


WRITES = [
    ("file_actions", {"action": "create", "path": f"{STATE_REL}/journal/1-aa/intent.json", "content": "{}"}),
    ("file_actions", {"action": "create", "path": f"{STATE_REL}/secret.txt", "content": "x", "if_exists": "overwrite"}),
    ("file_actions", {"action": "delete", "path": f"{STATE_REL}/secret.txt"}),
    ("file_actions", {"action": "move", "path": f"{STATE_REL}/secret.txt", "new_path": "stolen.txt"}),
    ("file_actions", {"action": "move", "path": "notes.md", "new_path": f"{STATE_REL}/journal.key",
                      "if_exists": "overwrite"}),
    ("append_to_file", {"path": f"{STATE_REL}/secret.txt", "content": "more"}),
    ("find_and_replace", {"path": f"{STATE_REL}/secret.txt", "find": "api_key", "replace": "x"}),
    ("apply_edits", {"path": f"{STATE_REL}/evil.py", "search": "return", "replace": "yield"}),
    ("apply_edits", {"path": f"{STATE_REL}/new.py", "rewrite": "x = 1\n", "on_missing": "create"}),
]  # fmt: skip


@pytest.mark.parametrize(("name", "args"), WRITES, ids=[f"{n}-{i}" for i, (n, _a) in enumerate(WRITES)])
def test_no_tool_writes_into_it(call: Caller, home: Path, state: Path, name: str, args: dict) -> None:
    before_state, before_home = snapshot(state), snapshot(home / "src")
    res = call(name, args)
    assert res.is_error and res.error is not None and res.error.code == "outside_roots", res.text
    journal.flush()
    assert snapshot(state) == before_state and snapshot(home / "src") == before_home
    assert (home / "notes.md").exists() and not (home / "stolen.txt").exists()


def test_apply_patch_cannot_write_a_journal(call: Caller, home: Path, state: Path) -> None:
    before = snapshot(state)
    for path in (f"{STATE_REL}/journal/1-bb/intent.json", str(state / "journal" / "1-bb" / "intent.json")):
        patch = f"*** Begin Patch\n*** Add File: {path}\n+{json.dumps({'entries': []})}\n*** End Patch\n"
        res = call("apply_patch", patch)
        assert res.is_error and res.error is not None and res.error.code == "outside_roots", res.text
    journal.flush()
    assert snapshot(state) == before and not (state / "journal" / "1-bb").exists()
