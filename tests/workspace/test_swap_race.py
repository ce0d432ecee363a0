"""Every reading and writing tool of the catalog under a concurrent symlink swap.

A thread flips ``root/flip`` between a real folder and a symbolic link to an
outside folder holding files of the same names, whose content carries a unique
secret. Each tool of the catalog is called in a loop through the folder while
the flipper runs; no result may ever contain the secret, and nothing outside
the root may change. Before the race each case runs once undisturbed and must
show the inside marker: proof that the call really reads the swapped folder
(a case that reads nothing would pass trivially).

``test_every_catalog_tool_has_a_case`` keeps this list complete: a new tool
must get a case here (or be listed in ``NO_FILE_ACCESS`` with a reason).
"""

from __future__ import annotations

import json
import os
import subprocess
import threading
import time
import uuid
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

import pytest

from tooldeck.catalog import build_toolbox
from tooldeck.core.toolbox import Toolbox
from tooldeck.runtime import Runtime

SECRET = "zqsecret" + uuid.uuid4().hex[:12]
INSIDE = "zqinside"

# name -> (call for iteration i) ; each returns (tool, arguments)
Call = Callable[[int], tuple[str, dict | str]]

PATCH = """*** Begin Patch
*** Update File: flip/f.txt
@@
 needle {marker} line
-second line
+second line
*** End Patch"""


def _patch(i: int) -> tuple[str, str]:
    # alternate a patch whose context matches the inside file and one that does
    # not: a mismatch message quotes the file's lines, the leak of issue 8 item 7
    return "apply_patch", PATCH.format(marker=INSIDE if i % 2 == 0 else "nomatch")


CASES: dict[str, list[Call]] = {
    "read_file": [lambda i: ("read_file", {"file": "flip/f.txt"})],
    "read_directory": [lambda i: ("read_directory", {"path": "flip"})],
    "get_file_tree": [lambda i: ("get_file_tree", {"mode": "full"})],
    "file_actions": [
        lambda i: ("file_actions", {"action": "create", "path": f"flip/n{i}.txt", "content": "x"}),
        lambda i: ("file_actions", {"action": "move", "path": f"flip/n{i}.txt", "new_path": f"moved{i}.txt"}),
    ],
    "append_to_file": [lambda i: ("append_to_file", {"path": "flip/f.txt", "content": "more"})],
    "find_and_replace": [
        lambda i: ("find_and_replace", {"path": "flip/f.txt", "find": "second", "replace": "second"}),
        lambda i: ("find_and_replace", {"path": "flip/f.txt", "find": "absent-text", "replace": "x"}),
    ],
    "apply_patch": [_patch],
    "apply_edits": [
        lambda i: ("apply_edits", {"path": "flip/f.txt", "search": "second line", "replace": "second line"}),
        lambda i: ("apply_edits", {"path": "flip/f.txt", "search": "needle nomatch line", "replace": "x"}),
    ],
    "file_search": [
        lambda i: ("file_search", {"pattern": "needle", "mode": "content", "context_lines": 1}),
        lambda i: ("file_search", {"pattern": "needle", "mode": "content", "count_only": True}),
        lambda i: ("file_search", {"pattern": "needle", "mode": "both"}),
    ],
    "get_code_structure": [lambda i: ("get_code_structure", {"scope": "paths", "paths": ["flip"]})],
    "find_symbol": [lambda i: ("find_symbol", {"name": "needle"})],
    "find_references": [lambda i: ("find_references", {"name": "needle_fn"})],
    "manage_selection": [
        lambda i: ("manage_selection", {"op": "set", "paths": ["flip"], "mode": "full"}),
        lambda i: ("manage_selection", {"op": "get", "view": "content"}),
        lambda i: ("manage_selection", {"op": "set", "paths": ["flip"], "mode": "codemap_only"}),
        lambda i: ("manage_selection", {"op": "get", "view": "codemaps"}),
    ],
    "workspace_context": [
        lambda i: ("manage_selection", {"op": "set", "paths": ["flip/f.txt", "flip/mod.py"], "mode": "full"}),
        lambda i: ("workspace_context", {"include": ["files", "code", "tokens"]}),
    ],
    "git": [
        lambda i: ("git", {"op": "diff", "detail": "patches"}),
        lambda i: ("git", {"op": "blame", "path": "flip/mod.py"}),
    ],
    "context_builder": [
        lambda i: ("context_builder", {"instructions": "where is needle_fn used", "budget": 5000}),
        lambda i: ("workspace_context", {"include": ["files", "code"]}),
    ],
    "prompt": [lambda i: ("prompt", {"op": "export", "path": f"flip/prompt{i}.md", "if_exists": "overwrite"})],
    "index_markdown_docs": [
        lambda i: ("index_markdown_docs", {"root": "flip", "index_name": "race_docs"}),
        lambda i: ("markdown_search", {"query": "needle line", "index_name": "race_docs"}),
    ],
    "markdown_search": [
        lambda i: ("index_markdown_docs", {"root": "flip", "index_name": "race_docs"}),
        lambda i: ("markdown_search", {"query": "needle deep", "index_name": "race_docs"}),
    ],
    "index_code": [
        lambda i: ("index_code", {"folder": "flip", "index_name": "race_code"}),
        lambda i: ("query_vector_db", {"query": "needle_fn", "index": "race_code"}),
    ],
    "query_vector_db": [
        lambda i: ("index_code", {"folder": "flip", "index_name": "race_code"}),
        lambda i: ("query_vector_db", {"query": "needle return", "index": "race_code"}),
    ],
}

# tools that open no file of a root (state only); listed so the coverage check stays exact
NO_FILE_ACCESS = {
    "manage_workspaces": "stored workspaces and tabs",
    "app_settings": "stored settings",
    "pydoc_search": "installed packages, not the roots",
    "webpage_to_markdown": "the web, not the roots",
    "shell": "programs run in the sandbox, whose binds (not the path rules) decide what they see",
    "import_image": "image bytes: covered by test_import_image_never_returns_the_outside_image below",
    "list_models": "model presets from the config",
    "chats": "stored chats",
    "chat_send": "files only through the selection package (the workspace_context case) and a model",
    "meta_refine": "a model, no file",
    "agent_run": "agent sessions run the catalog's own tools (each covered here) under a model",
    "agent_manage": "stored agent sessions",
}

# cases whose undisturbed run does not print file content (they write, or list names only)
NO_MARKER = {"file_actions", "append_to_file", "find_and_replace", "read_directory", "get_file_tree", "prompt"}


def tree_state(base: Path, skip: Path) -> dict[str, object]:
    """Everything under ``base`` except ``skip``: kind, bytes, link target."""
    state: dict[str, object] = {}
    for p in sorted(base.rglob("*")):
        if p == skip or skip in p.parents:
            continue
        if p.is_symlink():
            state[str(p)] = ("link", os.readlink(p))
        elif p.is_file():
            state[str(p)] = ("file", p.read_bytes())
        else:
            state[str(p)] = ("dir",)
    return state


@dataclass
class Race:
    base: Path
    root: Path
    outside: Path
    box: Toolbox


def _fill(folder: Path, marker: str) -> None:
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "f.txt").write_text(f"needle {marker} line\nsecond line\n")
    (folder / "mod.py").write_text(
        f"def needle_fn():\n    return '{marker}'\n\n\ndef needle_{marker}():\n    return needle_fn()\n"
    )
    (folder / "sub").mkdir(exist_ok=True)
    (folder / "sub" / "deep.txt").write_text(f"needle {marker} deep\n")


def _git(root: Path, *args: str) -> None:
    subprocess.run(
        ["git", "-c", "user.name=t", "-c", "user.email=t@t", *args], cwd=root, check=True, capture_output=True
    )


@pytest.fixture
def race(tmp_path: Path) -> Race:
    base = tmp_path / "arena"
    root, outside = base / "root", base / "outside"
    _fill(root / "flip", INSIDE)
    _fill(outside, SECRET)
    (root / "main.py").write_text("from flip.mod import needle_fn\n\nneedle_fn()\n")
    _git(root, "init", "-q")
    _git(root, "add", "main.py", "flip/mod.py")
    _git(root, "commit", "-qm", "init")
    rt = Runtime.for_dirs([root], state_dir=tmp_path / "state")
    return Race(base, root, outside, build_toolbox(rt))


def _flipper(race: Race, stop: threading.Event, flips: list[int] | None = None) -> None:
    flip, real = race.root / "flip", race.root / "flip.real"
    while not stop.is_set():
        try:
            os.rename(flip, real)
            os.symlink(race.outside, flip)
            time.sleep(0.0005)
            os.unlink(flip)
            os.rename(real, flip)
            if flips is not None:
                flips[0] += 1
        except OSError:
            _unstick(race)


def _unstick(race: Race) -> None:
    """A tool that creates folders (prompt export) may create ``flip`` while the
    real one is swapped out; the flipper then fails on every turn and the race
    would go on without swaps. Move the new folder aside and swap on."""
    flip, real = race.root / "flip", race.root / "flip.real"
    try:
        if real.is_dir() and flip.is_dir() and not flip.is_symlink():
            os.rename(flip, race.root / f"flip.made-{time.monotonic_ns()}")
            os.rename(real, flip)
    except OSError:
        pass


def _run(race: Race, calls: list[Call], i: int) -> list[tuple[str, str]]:
    out = []
    for make in calls:
        name, args = make(i)
        res = race.box.call_sync(name, args if isinstance(args, str) else json.dumps(args))
        out.append((name, res.text))
        if res.is_error:
            assert res.error is not None and res.error.code != "internal_error", res.text
    return out


def _restore(race: Race) -> None:
    flip, real = race.root / "flip", race.root / "flip.real"
    if flip.is_symlink():
        flip.unlink()
    if real.exists() and not flip.exists():
        os.rename(real, flip)


def swap_race(race: Race, tool: str, rounds: int, seconds: float = 0.0) -> int:
    """Run the tool's case ``rounds`` times (and for ``seconds`` at least)
    while a thread swaps the folder for a link to the outside. Each round waits
    for the flipper to have swapped since the last one, so the rounds really
    interleave with swaps (counted, not timed: a loaded machine only slows it)."""
    calls = CASES[tool]
    first = _run(race, calls, 0) + _run(race, calls, 1)
    if tool not in NO_MARKER:
        assert any(INSIDE in text for _, text in first), first  # the case really reads the folder
    before = tree_state(race.base, race.root)
    stop = threading.Event()
    flips = [0]
    flipper = threading.Thread(target=_flipper, args=(race, stop, flips), daemon=True)
    flipper.start()
    n = 0
    try:
        deadline = time.monotonic() + seconds
        while n < rounds or time.monotonic() < deadline:
            seen, wait_until = flips[0], time.monotonic() + 30
            while flips[0] == seen:
                assert time.monotonic() < wait_until, f"the flipper stopped swapping (round {n}, {seen} swaps)"
                time.sleep(0.0005)
            n += 1
            for name, text in _run(race, calls, n):
                assert SECRET not in text, (name, text)
    finally:
        stop.set()
        flipper.join()
        _restore(race)
    assert flips[0] >= n, "the flipper did not swap between the rounds"
    assert tree_state(race.base, race.root) == before, "something outside the root changed"
    assert not list(race.outside.rglob("n*.txt")) and not list(race.outside.rglob("prompt*.md"))
    return n


def test_every_catalog_tool_has_a_case(race: Race) -> None:
    assert set(race.box.names) == set(CASES) | set(NO_FILE_ACCESS)


@pytest.mark.timeout(60)
@pytest.mark.parametrize("tool", sorted(CASES))
def test_swap_race_never_shows_outside_content(race: Race, tool: str) -> None:
    """The default run: a few rounds per tool; the soak below runs 20 s each."""
    assert swap_race(race, tool, rounds=3) == 3


@pytest.mark.slow
@pytest.mark.timeout(600)
@pytest.mark.parametrize("tool", sorted(CASES))
def test_swap_race_soak(race: Race, tool: str) -> None:
    assert swap_race(race, tool, rounds=10, seconds=20.0) >= 10


def test_git_blame_never_reads_the_working_tree_through_a_link(race: Race) -> None:
    """git opens working-tree files by name: blame reads the file through the
    safe path instead, so a tracked folder turned into a link is refused."""
    flip = race.root / "flip"
    os.rename(flip, race.root / "flip.real")
    os.symlink(race.outside, flip)
    res = race.box.call_sync("git", json.dumps({"op": "blame", "path": "flip/mod.py"}))
    assert SECRET not in res.text
    assert res.error is not None and res.error.code == "denied", res.text


def test_worktree_patch_is_checked_against_the_safe_read(race: Race) -> None:
    from tooldeck.git.worktree_check import patch_matches_worktree, side_lines

    patch = (
        "diff --git a/flip/f.txt b/flip/f.txt\n--- a/flip/f.txt\n+++ b/flip/f.txt\n"
        f"@@ -1,2 +1,2 @@\n-old\n+needle {INSIDE} line\n second line\n"
    )
    assert side_lines(patch, True) == {1: f"needle {INSIDE} line", 2: "second line"}
    assert patch_matches_worktree(str(race.root), "flip/f.txt", patch)
    leaked = patch.replace(INSIDE, SECRET)  # what git printed after reading through a swapped link
    assert not patch_matches_worktree(str(race.root), "flip/f.txt", leaked)
    os.rename(race.root / "flip", race.root / "flip.real")
    os.symlink(race.outside, race.root / "flip")
    assert not patch_matches_worktree(str(race.root), "flip/f.txt", leaked)


PNG_1X1 = bytes.fromhex(
    "89504e470d0a1a0a0000000d4948445200000001000000010806000000"
    "1f15c4890000000d49444154789c6300010000050001" "0d0a2db40000000049454e44ae426082"
)
GIF_1X1 = bytes.fromhex("47494638396101000100800000000000ffffff21f90401000000002c00000000010001000002024401003b")


def test_import_image_never_returns_the_outside_image(race: Race) -> None:
    """Inside: a PNG; outside, under the same name: a GIF. A result that ever
    says GIF read the outside file through the swapped folder."""
    (race.root / "flip" / "pic.img").write_bytes(PNG_1X1)
    (race.outside / "pic.img").write_bytes(GIF_1X1)
    first = race.box.call_sync("import_image", json.dumps({"path": "flip/pic.img"}))
    assert not first.is_error and "PNG" in first.text, first.text
    stop = threading.Event()
    flipper = threading.Thread(target=_flipper, args=(race, stop), daemon=True)
    flipper.start()
    try:
        deadline = time.monotonic() + 1.5
        while time.monotonic() < deadline:
            res = race.box.call_sync("import_image", json.dumps({"path": "flip/pic.img"}))
            assert "GIF" not in res.text, res.text
    finally:
        stop.set()
        flipper.join()
        _restore(race)


def test_a_blob_side_read_from_the_working_tree_is_caught(race: Race) -> None:
    """git reads a blob it finds unchanged in the working tree from there, by
    name: a deleted file's ``-`` lines once came from the outside folder. Each
    side with a blob id is checked against the object store."""
    from tooldeck.git.repo import open_repo
    from tooldeck.git.worktree_check import sides_match_blobs

    repo = open_repo(str(race.root))
    oid = repo.git.text(["rev-parse", "--short", "HEAD:flip/mod.py"]).strip()
    body = (race.root / "flip" / "mod.py").read_text()
    minus = "".join("-" + line + "\n" for line in body.splitlines())
    patch = (
        f"diff --git a/flip/mod.py b/flip/mod.py\ndeleted file mode 100644\nindex {oid}..0000000\n"
        f"--- a/flip/mod.py\n+++ /dev/null\n@@ -1,{len(body.splitlines())} +0,0 @@\n{minus}"
    )
    leaked = patch.replace(INSIDE, SECRET)
    worktree_side = patch.replace(f"index {oid}..0000000", f"index {oid}..{'1' * len(oid)}")  # hashed, not stored
    assert sides_match_blobs(repo.git, [patch, leaked, worktree_side]) == [True, False, True]
