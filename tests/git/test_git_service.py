"""The git service on its own: runner guards, parsers, repository discovery,
compare specs and untracked patches, against real repositories."""

from __future__ import annotations

import os
import subprocess
import time
from pathlib import Path

import pytest

from tests.git.gitkit import GitCLI, cli_env, init_repo
from tooldeck.core.errors import ToolError
from tooldeck.git.changes import list_changes, load_patches, parse_raw_numstat, untracked_patch
from tooldeck.git.compare import parse_compare
from tooldeck.git.history import blame, log, parse_line_range
from tooldeck.git.repo import default_branch, open_repo, resolve_commit, worktrees
from tooldeck.git.runner import SAFE_ENV, Git, refuse_option, safe_env
from tooldeck.git.status import parse_status, repo_status


def test_safe_env_drops_inherited_git_variables() -> None:
    env = safe_env({"GIT_DIR": "/x", "GIT_INDEX_FILE": "/y", "GIT_CONFIG_PARAMETERS": "'a.b=c'", "HOME": "/h"})
    assert "GIT_DIR" not in env and "GIT_INDEX_FILE" not in env and "GIT_CONFIG_PARAMETERS" not in env
    assert env["HOME"] == "/h" and env["GIT_TERMINAL_PROMPT"] == "0" and env["GIT_PAGER"] == "cat"
    assert all(env[k] == v for k, v in SAFE_ENV.items())


@pytest.mark.parametrize("value", ["-x", "--output=/tmp/x", "  -p", ""])
def test_refuse_option(value: str) -> None:
    with pytest.raises(ToolError) as err:
        refuse_option(value, "ref")
    assert err.value.code == "invalid_arguments"


def test_refuse_option_accepts_revisions() -> None:
    assert refuse_option(" HEAD~2 ", "ref") == "HEAD~2"
    assert refuse_option("a-b/c", "ref") == "a-b/c"


def test_runner_argv_carries_safety_config(tmp_path: Path) -> None:
    argv = Git(str(tmp_path), extra_config=("filter.x.clean=",)).argv(["status"])
    assert argv[:2] == ["git", "--no-pager"]
    pairs = {argv[i + 1] for i, a in enumerate(argv) if a == "-c"}
    assert {"core.fsmonitor=false", "diff.external=", "color.ui=never", "filter.x.clean="} <= pairs
    assert argv[-1] == "status"


def test_runner_error_carries_git_message(repo: GitCLI) -> None:
    with pytest.raises(ToolError) as err:
        Git(str(repo.path)).run(["cat-file", "-p", "nonexistent-object"])
    assert err.value.code == "git_error" and "nonexistent-object" in err.value.message


@pytest.mark.timeout(120)
def test_runner_timeout_is_a_tool_error(repo: GitCLI) -> None:
    """A git that really hangs: its exclude file is a FIFO nobody writes, which
    ``git status`` opens and waits on. The runner's timeout kills it."""
    exclude = repo.path / ".git" / "info" / "exclude"
    exclude.parent.mkdir(exist_ok=True)
    exclude.unlink(missing_ok=True)
    os.mkfifo(exclude)
    started = time.monotonic()
    with pytest.raises(ToolError) as err:
        Git(str(repo.path), timeout=0.5).run(["status", "--porcelain"])
    assert err.value.code == "timeout" and "0.5s" in err.value.message
    assert time.monotonic() - started < 60  # the limit, with far more than 5x headroom
    assert not _gits_in(repo.path), "the timed-out git was left running"


def _gits_in(path: Path) -> list[int]:
    """Live git processes whose working directory is ``path``."""
    out = []
    for proc in Path("/proc").iterdir():
        try:
            is_git = proc.name.isdigit() and (proc / "comm").read_text().strip() == "git"
            if is_git and os.path.realpath(proc / "cwd") == os.path.realpath(path):
                out.append(int(proc.name))
        except OSError:
            continue
    return out


def test_open_repo_from_a_subdirectory_and_errors(repo: GitCLI, tmp_path: Path) -> None:
    repo.commit("one", {"deep/er/x.py": "x\n"})
    r = open_repo(str(repo.path / "deep" / "er"))
    assert r.toplevel == os.path.realpath(repo.path) and not r.is_linked_worktree
    plain = tmp_path / "plain"
    plain.mkdir()
    with pytest.raises(ToolError) as err:
        open_repo(str(plain))
    assert err.value.code == "not_found"
    bare = tmp_path / "bare.git"
    subprocess.run(["git", "init", "-q", "--bare", str(bare)], check=True, env=cli_env())
    with pytest.raises(ToolError) as err:
        open_repo(str(bare))
    assert err.value.code == "unsupported"


def test_filter_drivers_are_blanked(repo: GitCLI) -> None:
    repo("config", "filter.lfs.clean", "git-lfs clean -- %f")
    repo("config", "filter.my.driver.process", "run-me")
    extra = open_repo(str(repo.path)).git.extra_config
    assert "filter.lfs.clean=" in extra and "filter.my.driver.process=" in extra
    assert "filter.lfs.required=false" in extra


def test_resolve_commit(repo: GitCLI) -> None:
    sha = repo.commit("one", {"a": "1\n"})
    r = open_repo(str(repo.path))
    assert resolve_commit(r, "HEAD", "ref") == sha
    assert resolve_commit(r, "main", "ref") == sha
    for bad in ("nope", "HEAD:a", "--all"):
        with pytest.raises(ToolError):
            resolve_commit(r, bad, "ref")


def test_default_branch_prefers_origin_head(repo: GitCLI, tmp_path: Path) -> None:
    repo.commit("one", {"a": "1\n"})
    repo("branch", "develop")
    clone = tmp_path / "clone"
    GitCLI(tmp_path)("clone", "-q", str(repo.path), str(clone))
    GitCLI(clone)("remote", "set-head", "origin", "develop")
    assert default_branch(open_repo(str(clone))) == "origin/develop"
    assert default_branch(open_repo(str(repo.path))) == "main"


def test_worktrees_parse(repo: GitCLI, tmp_path: Path) -> None:
    repo.commit("one", {"a": "1\n"})
    repo("worktree", "add", "-q", "--detach", str(tmp_path / "det"))
    repo("worktree", "add", "-q", "-b", "b1", str(tmp_path / "wb"))
    repo("worktree", "lock", str(tmp_path / "wb"))
    wts = worktrees(open_repo(str(repo.path)))
    assert [w.path for w in wts] == [os.path.realpath(p) for p in (repo.path, tmp_path / "det", tmp_path / "wb")]
    assert wts[0].branch == "main" and wts[1].branch is None and wts[2].branch == "b1" and wts[2].locked
    linked = open_repo(str(tmp_path / "wb"))
    assert linked.is_linked_worktree and worktrees(linked)[0].path == wts[0].path


def test_parse_raw_numstat_with_rename_and_binary() -> None:
    data = (
        ":100644 100644 aaa bbb R087\0old name.py\0new name.py\0"
        ":000000 100644 000 ccc A\0img.png\0"
        ":100644 100755 ddd ddd M\0run.sh\0"
        "3\t1\t\0old name.py\0new name.py\0"
        "-\t-\timg.png\0"
        "0\t0\trun.sh\0"
    )
    files = parse_raw_numstat(data)
    assert [(f.status, f.path, f.old_path) for f in files] == [
        ("R", "new name.py", "old name.py"),
        ("A", "img.png", None),
        ("M", "run.sh", None),
    ]
    assert (files[0].added, files[0].deleted, files[0].similarity) == (3, 1, 87)
    assert files[1].binary and files[2].new_mode == "100755"


def test_parse_status_v2() -> None:
    data = "\0".join(
        [
            "# branch.oid 1234567890abcdef",
            "# branch.head topic",
            "# branch.upstream origin/topic",
            "# branch.ab +2 -3",
            "# stash 4",
            "1 M. N... 100644 100644 100644 a b staged.py",
            "1 .D N... 100644 100644 000000 a b gone.py",
            "2 R. N... 100644 100644 100644 a b R100 new.py",
            "old.py",
            "u UU N... 100644 100644 100644 100644 a b c both.py",
            "? fresh dir/file.txt",
            "",
        ]
    )
    st = parse_status(data)
    assert (st.branch, st.upstream, st.ahead, st.behind, st.stash) == ("topic", "origin/topic", 2, 3, 4)
    assert [(e.code, e.path, e.old_path) for e in st.staged] == [("M", "staged.py", None), ("R", "new.py", "old.py")]
    assert [(e.code, e.path) for e in st.modified] == [("D", "gone.py")]
    assert [e.path for e in st.conflicts] == ["both.py"] and [e.path for e in st.untracked] == ["fresh dir/file.txt"]


def test_repo_status_detached(repo: GitCLI) -> None:
    repo.commit("one", {"a": "1\n"})
    repo("checkout", "-q", "--detach")
    st = repo_status(open_repo(str(repo.path)))
    assert st.branch is None and st.head_oid == repo.sha() and st.clean


def test_untracked_patch_matches_git_intent_to_add(repo: GitCLI) -> None:
    repo.commit("one", {"a": "1\n"})
    repo.write("n.py", "x = 1\ny = 2")
    r = open_repo(str(repo.path))
    ours = untracked_patch(r, next(f for f in list_changes(r, parse_compare(r, None)).files if f.untracked))
    repo("add", "-N", "n.py")
    theirs = repo("diff", "--no-color", "--", "n.py")
    strip = [ln for ln in theirs.splitlines() if not ln.startswith("index ")]
    assert ours.splitlines() == strip


def test_compare_descriptions_and_args(repo: GitCLI) -> None:
    first = repo.commit("one", {"a": "1\n"})
    second = repo.commit("two", {"a": "2\n"})
    r = open_repo(str(repo.path))
    assert parse_compare(r, "last").args == (first, second)
    assert parse_compare(r, "staged").args == ("--cached", second)
    assert parse_compare(r, "unstaged").args == () and parse_compare(r, "unstaged").worktree
    assert parse_compare(r, f"{first}..{second}").args == (first, second)
    assert parse_compare(r, "HEAD~1").args == (first,)


def test_load_patches_limited_to_some_files(repo: GitCLI) -> None:
    repo.commit("one", {f"f{i}.py": f"{i}\n" for i in range(4)})
    for i in range(4):
        repo.write(f"f{i}.py", f"{i} changed\n")
    r = open_repo(str(repo.path))
    cs = list_changes(r, parse_compare(r, None))
    load_patches(r, cs, cs.files[1:3])
    assert cs.files[0].patch is None and cs.files[3].patch is None
    assert "+1 changed" in (cs.files[1].patch or "") and "+2 changed" in (cs.files[2].patch or "")


def test_log_and_blame_services(repo: GitCLI) -> None:
    repo.commit("one", {"f.txt": "a\nb\n"})
    repo.commit("two", {"f.txt": "a\nB\n", "g.bin": "\0\1\2"})
    r = open_repo(str(repo.path))
    commits = log(r, repo.sha(), 5)
    assert [c.subject for c in commits] == ["two", "one"]
    assert {f.path: (f.added, f.deleted) for f in commits[0].files} == {"f.txt": (1, 1), "g.bin": (None, None)}
    lines, info = blame(r, "f.txt", line_range=(2, 2))
    assert [(b.line, b.text) for b in lines] == [(2, "B")] and info[lines[0].sha].summary == "two"


def test_parse_line_range() -> None:
    assert parse_line_range("45-60") == (45, 60)
    assert parse_line_range("7") == (7, 7)
    assert parse_line_range("7-") == (7, None)
    assert parse_line_range(None) is None
    for bad in ("0-3", "9-2", "a-b", "-5", "1-2-3"):
        with pytest.raises(ToolError):
            parse_line_range(bad)


def test_git_init_in_subdir_of_repo_is_its_own_repo(tmp_path: Path) -> None:
    outer = init_repo(tmp_path / "outer")
    outer.commit("o", {"o.txt": "o\n"})
    inner = init_repo(tmp_path / "outer" / "inner")
    inner.commit("i", {"i.txt": "i\n"})
    assert open_repo(str(inner.path)).toplevel == os.path.realpath(inner.path)
