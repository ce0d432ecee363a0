"""git stays inside the roots (SPEC §3, issue 8 item 5).

(a) a `.git` file is followed only when the git directory it names points
back to it (a registered worktree or submodule); (b) with a root that is a
subdirectory of a repository, git output is limited to the root by pathspec
and a `path` outside the roots is refused."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tests.git.gitkit import GitCLI, init_repo
from tooldeck.catalog import build_toolbox
from tooldeck.core.toolbox import Toolbox, ToolResult
from tooldeck.runtime import Runtime

OUTER = "OUTER-SECRET"
UNTRACKED = "UNTRACKED-ABOVE"


def run(box: Toolbox, args: dict) -> ToolResult:
    return box.call_sync("git", json.dumps(args))


@pytest.fixture
def sub_root(tmp_path: Path, state_dir: Path) -> tuple[Toolbox, GitCLI, Path]:
    """A repository at tmp/outer; the workspace root is tmp/outer/sub."""
    outer = init_repo(tmp_path / "outer")
    outer.commit("one", {"outer.txt": f"{OUTER} v1\n", "sub/inner.txt": "inner v1\n"})
    outer.commit("two", {"outer.txt": f"{OUTER} v2\n", "sub/inner.txt": "inner v2\n"})
    outer.write("outer.txt", f"{OUTER} v3 uncommitted\n")
    outer.write("loose.txt", f"{UNTRACKED}\n")
    outer.write("sub/inner.txt", "inner v3 uncommitted\n")
    outer.write("sub/new.txt", "new inside\n")
    box = build_toolbox(Runtime.for_dirs([tmp_path / "outer" / "sub"], state_dir=state_dir))
    return box, outer, tmp_path / "outer" / "sub"


@pytest.mark.parametrize(
    "args",
    [
        {"op": "blame", "path": "../outer.txt"},
        {"op": "blame", "path": "OUTER_ABS"},
        {"op": "diff", "path": ".."},
        {"op": "log", "path": "../outer.txt"},
        {"op": "status", "path": "../loose.txt"},
    ],
)
def test_a_path_above_the_root_is_refused(sub_root: tuple[Toolbox, GitCLI, Path], args: dict) -> None:
    box, outer, _ = sub_root
    if args["path"] == "OUTER_ABS":
        args = {**args, "path": str(outer.path / "outer.txt")}
    res = run(box, args)
    assert res.is_error and res.error is not None and res.error.code == "outside_roots", res.text
    assert OUTER not in res.text


@pytest.mark.parametrize(
    "args",
    [
        {"op": "diff", "detail": "patches"},
        {"op": "diff", "detail": "full"},
        {"op": "diff", "compare": "back:2", "detail": "patches"},
        {"op": "status"},
        {"op": "log", "detail": "patches"},
        {"op": "show", "detail": "patches"},
        {"op": "show", "ref": "HEAD~1", "detail": "full"},
    ],
)
def test_output_is_limited_to_the_root(sub_root: tuple[Toolbox, GitCLI, Path], args: dict) -> None:
    box, _, _ = sub_root
    res = run(box, args)
    assert not res.is_error, res.text
    assert OUTER not in res.text and UNTRACKED not in res.text, res.text
    assert "outer.txt" not in res.text and "loose.txt" not in res.text, res.text
    assert "inner" in res.text, res.text


def test_diff_still_shows_changes_inside_the_root(sub_root: tuple[Toolbox, GitCLI, Path]) -> None:
    box, _, _ = sub_root
    out = run(box, {"op": "diff", "detail": "patches"}).text
    assert "+inner v3 uncommitted" in out and "+new inside" in out
    blame = run(box, {"op": "blame", "path": "inner.txt", "ref": "HEAD"})
    assert not blame.is_error and "inner v2" in blame.text, blame.text


# --- .git files ---------------------------------------------------------------------


@pytest.fixture
def elsewhere(tmp_path: Path) -> GitCLI:
    other = init_repo(tmp_path / "elsewhere")
    other.commit("private history", {"private.txt": "ELSEWHERE-CONTENT\n"})
    return other


@pytest.mark.parametrize("args", [{"op": "status"}, {"op": "log"}, {"op": "show"}, {"op": "diff", "compare": "last"}])
def test_a_git_file_pointing_elsewhere_is_refused(root: Path, call, elsewhere: GitCLI, args: dict) -> None:  # type: ignore[no-untyped-def]
    (root / ".git").write_text(f"gitdir: {elsewhere.path / '.git'}\n")
    res = call.err("git", args, code="denied")
    assert "does not point back" in res.text
    assert "ELSEWHERE-CONTENT" not in res.text and "private history" not in res.text


def test_a_git_file_in_a_subfolder_pointing_elsewhere_is_refused(root: Path, call, elsewhere: GitCLI) -> None:  # type: ignore[no-untyped-def]
    init_repo(root).commit("root repo", {"a.txt": "a\n"})
    (root / "vendor").mkdir()
    (root / "vendor" / ".git").write_text(f"gitdir: {elsewhere.path / '.git'}\n")
    res = call.err("git", {"op": "log", "repo_root": "vendor"}, code="denied")
    assert "private history" not in res.text


def test_a_core_worktree_elsewhere_is_refused(root: Path, call, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    g = init_repo(root)
    g.commit("c", {"a.txt": "a\n"})
    far = tmp_path / "far"
    far.mkdir()
    (far / "far-file.txt").write_text("FAR\n")
    g("config", "core.worktree", str(far))
    res = call.err("git", {"op": "status"}, code="denied")
    assert "far-file.txt" not in res.text


def test_registered_worktrees_and_submodules_are_followed(root: Path, call, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    main = init_repo(root)
    main.commit("main", {"a.txt": "a\n"})
    lib = init_repo(tmp_path / "lib")
    lib.commit("lib commit", {"lib.txt": "lib\n"})
    main("-c", "protocol.file.allow=always", "submodule", "add", "-q", str(lib.path), "mod")
    main("commit", "-q", "-m", "add submodule")
    assert (root / "mod" / ".git").is_file()
    out = call.ok("git", {"op": "log", "repo_root": "mod"})
    assert "lib commit" in out
    main("worktree", "add", "-q", "-b", "feat", str(root / "wt"))
    assert (root / "wt" / ".git").is_file()
    out = call.ok("git", {"op": "log", "repo_root": "wt"})
    assert "add submodule" in out


def test_a_worktree_outside_the_roots_is_limited_like_the_root(
    sub_root: tuple[Toolbox, GitCLI, Path], tmp_path: Path
) -> None:
    """The root is outer/sub; a linked worktree of outer lies outside the roots:
    reached by path or with :main, git still sees only sub/."""
    box, outer, _ = sub_root
    wt = tmp_path / "wt-outer"
    outer("worktree", "add", "-q", "-b", "feat", str(wt))
    (wt / "outer.txt").write_text(f"{OUTER} in worktree\n")
    (wt / "sub" / "inner.txt").write_text("inner in worktree\n")
    res = run(box, {"op": "diff", "repo_root": str(wt), "detail": "patches"})
    assert not res.is_error, res.text
    assert OUTER not in res.text and "inner in worktree" in res.text
    res = run(box, {"op": "blame", "repo_root": str(wt), "path": str(wt / "outer.txt")})
    assert res.error is not None and res.error.code == "outside_roots", res.text
    main = run(box, {"op": "log", "repo_root": ":main", "detail": "patches"})
    assert not main.is_error and OUTER not in main.text
