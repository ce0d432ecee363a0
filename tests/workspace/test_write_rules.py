"""Path rules for writes (SPEC §3): VCS metadata is never writable, new names
carry no control characters, and with several roots a new file names its root.

Every write tool of the catalog is driven through the Toolbox; each refusal
must leave the tree byte-for-byte unchanged."""

from __future__ import annotations

import json
import os
import stat
from pathlib import Path

import pytest

from tooldeck.catalog import build_toolbox
from tooldeck.core.toolbox import Toolbox, ToolResult
from tooldeck.runtime import Runtime


class Caller:
    """Calls tools of one Toolbox (the shared ``call`` fixture serves one root only)."""

    def __init__(self, box: Toolbox) -> None:
        self.box = box

    def __call__(self, name: str, args: dict | str) -> ToolResult:
        return self.box.call_sync(name, json.dumps(args) if isinstance(args, dict) else args)

    def ok(self, name: str, args: dict | str) -> str:
        res = self(name, args)
        assert not res.is_error, res.text
        return res.text

    def err(self, name: str, args: dict | str, code: str) -> ToolResult:
        res = self(name, args)
        assert res.is_error and res.error is not None, f"expected {code}, got: {res.text[:300]}"
        assert res.error.code == code, res.text
        return res


def snapshot(path: Path) -> dict[str, bytes]:
    return {str(p.relative_to(path)): p.read_bytes() for p in sorted(path.rglob("*")) if p.is_file()}


def P(*lines: str) -> str:
    return "\n".join(["*** Begin Patch", *lines, "*** End Patch"]) + "\n"


@pytest.fixture
def repo_like(root: Path) -> Path:
    """A root with VCS metadata folders and an executable script."""
    for d in (".git/hooks", ".hg", ".svn", ".jj/repo"):
        (root / d).mkdir(parents=True)
    (root / ".git" / "HEAD").write_text("ref: refs/heads/main\n")
    (root / ".git" / "config").write_text("[core]\n")
    (root / ".hg" / "hgrc").write_text("[ui]\n")
    hook = root / "hook.sh"
    hook.write_text("#!/bin/sh\necho pwned\n")
    hook.chmod(0o755)
    (root / "a.txt").write_text("a\n")
    return root


def _all_write_calls(meta_file: str) -> list[tuple[str, dict | str]]:
    """Every write tool aimed at ``meta_file`` (a path inside VCS metadata)."""
    return [
        ("file_actions", {"action": "create", "path": meta_file, "content": "x"}),
        ("file_actions", {"action": "create", "path": meta_file, "content": "x", "if_exists": "overwrite"}),
        ("file_actions", {"action": "move", "path": "hook.sh", "new_path": meta_file, "if_exists": "overwrite"}),
        ("file_actions", {"action": "delete", "path": meta_file}),
        ("append_to_file", {"path": meta_file, "content": "x"}),
        ("find_and_replace", {"path": meta_file, "find": "[", "replace": "]", "all": True}),
        ("apply_edits", {"path": meta_file, "rewrite": "x\n", "on_missing": "create"}),
        ("apply_edits", {"path": meta_file, "search": "[", "replace": "]", "all": True}),
        ("apply_patch", P(f"*** Add File: {meta_file}", "+x")),
        ("apply_patch", P(f"*** Delete File: {meta_file}")),
        ("apply_patch", P("*** Update File: a.txt", f"*** Move to: {meta_file}", "@@", "-a", "+b")),
    ]


@pytest.mark.parametrize(
    "meta_file", [".git/config", ".git/hooks/pre-commit", ".hg/hgrc", ".svn/entries", ".jj/repo/x"]
)
def test_every_write_tool_refuses_vcs_metadata(repo_like: Path, call: Caller, meta_file: str) -> None:
    before = snapshot(repo_like)
    for name, args in _all_write_calls(meta_file):
        res = call.err(name, args, code="denied")
        assert "version-control metadata" in res.text, (name, args, res.text)
    assert snapshot(repo_like) == before
    assert not (repo_like / ".git" / "hooks" / "pre-commit").exists()


def test_creating_a_git_entry_is_refused_anywhere(repo_like: Path, call: Caller) -> None:
    before = snapshot(repo_like)
    for path in (".git", "sub/.git", "sub/.git/config", "pkg/.GIT/HEAD"):
        call.err("file_actions", {"action": "create", "path": path, "content": "gitdir: /elsewhere\n"}, code="denied")
        call.err("apply_patch", P(f"*** Add File: {path}", "+gitdir: /elsewhere"), code="denied")
    assert snapshot(repo_like) == before
    assert not (repo_like / "sub").exists() and not (repo_like / "pkg").exists()


def test_a_symlink_into_git_does_not_open_a_way_in(repo_like: Path, call: Caller) -> None:
    os.symlink(repo_like / ".git", repo_like / "meta")
    res = call.err("apply_edits", {"path": "meta/HEAD", "rewrite": "evil\n"}, code="denied")
    assert "version-control metadata" in res.text
    assert (repo_like / ".git" / "HEAD").read_text() == "ref: refs/heads/main\n"


def test_a_git_link_to_another_folder_is_still_metadata(root: Path, call: Caller) -> None:
    """``.git`` a symlink to a folder named otherwise (git follows it): the
    canonical path has no ``.git`` in it, so the model's spelling is checked too."""
    (root / "gitstore" / "hooks").mkdir(parents=True)
    (root / ".git").symlink_to("gitstore")
    for name, args in _all_write_calls(".git/hooks/pre-commit")[:2]:
        res = call.err(name, args, code="denied")
        assert "version-control metadata" in res.text, res.text
    assert not (root / "gitstore" / "hooks" / "pre-commit").exists()


def test_the_hook_move_of_the_issue_is_refused(repo_like: Path, call: Caller) -> None:
    res = call.err(
        "file_actions", {"action": "move", "path": "hook.sh", "new_path": ".git/hooks/post-checkout"}, code="denied"
    )
    assert ".git" in res.text
    assert (repo_like / "hook.sh").exists() and not (repo_like / ".git/hooks/post-checkout").exists()
    assert stat.S_IMODE((repo_like / "hook.sh").stat().st_mode) == 0o755


def test_reads_of_vcs_metadata_are_unaffected(repo_like: Path, call: Caller) -> None:
    assert "refs/heads/main" in call.ok("read_file", {"path": ".git/HEAD"})


@pytest.mark.parametrize("name", ["bad\nname.txt", "tab\there.txt", "esc\x1b[31m.txt", "del\x7f.txt", "c1\x85.txt"])
def test_new_names_with_control_characters_are_refused(root: Path, call: Caller, name: str) -> None:
    (root / "a.txt").write_text("a\n")
    for tool, args in (
        ("file_actions", {"action": "create", "path": name, "content": "x"}),
        ("file_actions", {"action": "move", "path": "a.txt", "new_path": name}),
        ("append_to_file", {"path": name, "content": "x"}),
        ("apply_edits", {"path": name, "rewrite": "x", "on_missing": "create"}),
    ):
        res = call.err(tool, args, code="invalid_arguments")
        assert "control character" in res.text, res.text
    if "\n" not in name:  # a patch header cannot hold a newline
        res = call.err("apply_patch", P(f"*** Add File: {name}", "+x"), code="invalid_arguments")
        assert "control character" in res.text, res.text
    assert sorted(p.name for p in root.iterdir()) == ["a.txt"]


# --- several roots: a new file names its root ------------------------------------------


@pytest.fixture
def two(tmp_path: Path, state_dir: Path) -> tuple[Caller, Path, Path]:
    app, docs = tmp_path / "app", tmp_path / "docs"
    app.mkdir()
    docs.mkdir()
    (docs / "guide.md").write_text("guide\n")
    rt = Runtime.for_dirs([app, docs], state_dir=state_dir)
    return Caller(build_toolbox(rt)), app, docs


def test_multi_root_create_with_a_bare_relative_path_is_ambiguous(two: tuple[Caller, Path, Path]) -> None:
    call, app, docs = two
    for tool, args in (
        ("file_actions", {"action": "create", "path": "notes.md", "content": "x"}),
        ("append_to_file", {"path": "notes.md", "content": "x"}),
        ("apply_edits", {"path": "notes.md", "rewrite": "x", "on_missing": "create"}),
        ("apply_patch", P("*** Add File: notes.md", "+x")),
        ("file_actions", {"action": "move", "path": str(docs / "guide.md"), "new_path": "moved.md"}),
    ):
        res = call.err(tool, args, code="invalid_arguments")
        assert "app:" in res.text and "docs:" in res.text and "absolute" in res.text, res.text
    assert not (app / "notes.md").exists() and not (docs / "notes.md").exists()
    assert (docs / "guide.md").exists()


def test_multi_root_create_with_a_root_prefix_or_absolute_path(two: tuple[Caller, Path, Path]) -> None:
    call, app, docs = two
    call.ok("file_actions", {"action": "create", "path": "docs:notes.md", "content": "n\n"})
    assert (docs / "notes.md").read_text() == "n\n" and not (app / "notes.md").exists()
    call.ok("apply_patch", P("*** Add File: app:src/x.py", "+X = 1"))
    assert (app / "src" / "x.py").read_text() == "X = 1\n"
    call.ok("file_actions", {"action": "create", "path": str(app / "abs.txt"), "content": "a"})
    assert (app / "abs.txt").read_text() == "a"
    # an existing file needs no prefix: it is found in the one root that has it
    call.ok("append_to_file", {"path": "guide.md", "content": "more"})
    assert (docs / "guide.md").read_text() == "guide\n\nmore"
    assert call.ok("read_file", {"path": "docs:guide.md"}).endswith("guide\n\nmore")
    call.err("file_actions", {"action": "create", "path": "nope:x.md", "content": "x"}, code="invalid_arguments")


def test_single_root_create_needs_no_prefix(root: Path, call: Caller) -> None:
    call.ok("file_actions", {"action": "create", "path": "notes.md", "content": "x"})
    assert (root / "notes.md").read_text() == "x"
