"""git op=diff: every compare spec and every detail level, on real repositories."""

from __future__ import annotations

import re

import pytest

from tests.git.gitkit import GitCLI


def changed(out: str) -> dict[str, str]:
    """{path: status} from the one-line-per-file listing."""
    found: dict[str, str] = {}
    for line in out.splitlines():
        m = re.match(r"^(\?\?|[AMDRCTU]) +(.+?)  (?:\+\d+ -\d+|binary|new file)", line)
        if m:
            found[m.group(2).split(" → ")[-1]] = m.group(1)
    return found


@pytest.fixture
def worked(repo: GitCLI) -> GitCLI:
    """A commit, then a staged change, an unstaged change and an untracked file."""
    repo.commit("init", {"staged.py": "s = 1\n", "unstaged.py": "u = 1\n", "both.py": "b = 1\n"})
    repo.write("staged.py", "s = 2\n")
    repo("add", "staged.py")
    repo.write("unstaged.py", "u = 2\n")
    repo.write("untracked.py", "n = 1\n")
    return repo


def test_uncommitted_is_staged_plus_unstaged_plus_untracked(worked: GitCLI, call) -> None:
    out = call.ok("git", {"op": "diff"})
    assert "diff uncommitted: HEAD " + worked.sha()[:7] + " → working tree" in out
    assert changed(out) == {"staged.py": "M", "unstaged.py": "M", "untracked.py": "??"}
    assert "3 files changed, +3 -2 (1 untracked)" in out


def test_staged_and_unstaged(worked: GitCLI, call) -> None:
    assert changed(call.ok("git", {"op": "diff", "compare": "staged"})) == {"staged.py": "M"}
    assert changed(call.ok("git", {"op": "diff", "compare": "unstaged"})) == {
        "unstaged.py": "M",
        "untracked.py": "??",
    }


def test_last_and_back_n(repo: GitCLI, call) -> None:
    repo.commit("one", {"one.py": "1\n"})
    repo.commit("two", {"two.py": "2\n"})
    repo.commit("three", {"three.py": "3\n"})
    repo.write("dirty.py", "not committed\n")
    assert changed(call.ok("git", {"op": "diff", "compare": "last"})) == {"three.py": "A"}
    assert changed(call.ok("git", {"op": "diff", "compare": "back:2"})) == {"two.py": "A", "three.py": "A"}
    everything = call.ok("git", {"op": "diff", "compare": "back:3"})
    assert changed(everything) == {"one.py": "A", "two.py": "A", "three.py": "A"}
    assert "empty tree" in everything
    err = call.err("git", {"op": "diff", "compare": "back:9"}, code="invalid_arguments")
    assert "back:3" in err.text
    call.err("git", {"op": "diff", "compare": "back:x"}, code="invalid_arguments")
    call.err("git", {"op": "diff", "compare": "back:0"}, code="invalid_arguments")


def test_last_on_a_single_root_commit(repo: GitCLI, call) -> None:
    repo.commit("only", {"a.py": "a\n"})
    assert changed(call.ok("git", {"op": "diff", "compare": "last"})) == {"a.py": "A"}


def branched(repo: GitCLI) -> GitCLI:
    repo.commit("base", {"base.py": "b\n"})
    repo("checkout", "-q", "-b", "feature")
    repo.commit("feature work", {"feat.py": "f\n"})
    repo("checkout", "-q", "main")
    repo.commit("main moves on", {"main_only.py": "m\n"})
    repo("checkout", "-q", "feature")
    repo.write("wip.py", "wip\n")
    return repo


def test_mergebase_spec_shows_branch_commits_and_uncommitted(repo: GitCLI, call) -> None:
    branched(repo)
    out = call.ok("git", {"op": "diff", "compare": "mergebase:main"})
    assert changed(out) == {"feat.py": "A", "wip.py": "??"}
    assert "merge-base(main, HEAD)" in out


@pytest.mark.parametrize("spec", ["main", "trunk"])
def test_main_and_trunk_use_the_default_branch(repo: GitCLI, call, spec: str) -> None:
    branched(repo)
    assert changed(call.ok("git", {"op": "diff", "compare": spec})) == {"feat.py": "A", "wip.py": "??"}


def test_default_branch_found_when_named_master(repo: GitCLI, call) -> None:
    repo("checkout", "-q", "-b", "master")
    repo.commit("base", {"base.py": "b\n"})
    repo("checkout", "-q", "-b", "topic")
    repo.commit("topic", {"t.py": "t\n"})
    repo("branch", "-D", "main", check=False)
    out = call.ok("git", {"op": "diff", "compare": "main"})
    assert changed(out) == {"t.py": "A"} and "merge-base(master, HEAD)" in out


def test_revspecs_two_dot_three_dot_and_single(repo: GitCLI, call) -> None:
    branched(repo)
    two = call.ok("git", {"op": "diff", "compare": "main..feature"})
    assert changed(two) == {"feat.py": "A", "main_only.py": "D"}
    three = call.ok("git", {"op": "diff", "compare": "main...feature"})
    assert changed(three) == {"feat.py": "A"}
    single = call.ok("git", {"op": "diff", "compare": "main"})  # the named spec, not the branch
    assert "main_only.py" not in changed(single)
    rev = call.ok("git", {"op": "diff", "compare": "HEAD~1"})
    assert changed(rev) == {"feat.py": "A", "wip.py": "??"}


def test_bad_revision_is_git_error(repo: GitCLI, call) -> None:
    repo.commit("one", {"a.py": "a\n"})
    err = call.err("git", {"op": "diff", "compare": "no-such-branch"}, code="git_error")
    assert "no-such-branch" in err.text
    call.err("git", {"op": "show", "ref": "deadbeef"}, code="git_error")
    call.err("git", {"op": "diff", "compare": "mergebase:nope"}, code="git_error")


def test_rename_is_reported_with_both_names(repo: GitCLI, call) -> None:
    repo.commit("one", {"old_name.py": "".join(f"line {i}\n" for i in range(20))})
    repo("mv", "old_name.py", "new_name.py")
    out = call.ok("git", {"op": "diff", "compare": "staged", "detail": "patches"})
    assert "R  old_name.py → new_name.py  +0 -0 (100% similar)" in out
    assert "rename from old_name.py" in out


def test_unborn_branch_diff_against_empty_tree(repo: GitCLI, call) -> None:
    repo.write("a.py", "a\n")
    repo("add", "a.py")
    out = call.ok("git", {"op": "diff", "compare": "staged"})
    assert changed(out) == {"a.py": "A"} and "empty tree" in out


def test_no_changes(repo: GitCLI, call) -> None:
    repo.commit("one", {"a.py": "a\n"})
    assert call.ok("git", {"op": "diff"}).endswith("no changes")


FUNC = "def compute(values):\n" + "".join(f"    step_{i} = {i}\n" for i in range(12)) + "    return values\n"


def test_detail_levels(repo: GitCLI, call) -> None:
    repo.commit("one", {"m.py": FUNC, "other.py": "x = 1\n"})
    repo.write("m.py", FUNC.replace("    return values\n", "    return sorted(values)\n"))
    summary = call.ok("git", {"op": "diff", "detail": "summary"})
    assert "M  m.py  +1 -1" in summary and "@@" not in summary and "sorted" not in summary
    files = call.ok("git", {"op": "diff", "detail": "files"})
    assert "    @@ -14 +14 @@ def compute(values):" in files and "sorted" not in files
    patches = call.ok("git", {"op": "diff", "detail": "patches"})
    assert "+    return sorted(values)" in patches and "-    return values" in patches
    assert "step_2 = 2" not in patches  # only 3 lines of context
    full = call.ok("git", {"op": "diff", "detail": "full"})
    assert "+    return sorted(values)" in full and " def compute(values):" in full and "step_2 = 2" in full


def test_untracked_file_patch_and_symlink_not_followed(repo: GitCLI, call, tmp_path) -> None:
    repo.commit("one", {"a.py": "a\n"})
    secret = tmp_path / "secret.txt"
    secret.write_text("TOP SECRET\n")
    (repo.path / "link").symlink_to(secret)
    repo.write("new.py", "print('hi')\nprint('there')")
    out = call.ok("git", {"op": "diff", "detail": "patches"})
    assert "+print('hi')" in out and "\\ No newline at end of file" in out
    assert "new file mode 120000" in out and "TOP SECRET" not in out


def test_path_limits_the_diff(worked: GitCLI, call) -> None:
    out = call.ok("git", {"op": "diff", "path": "staged.py"})
    assert changed(out) == {"staged.py": "M"}


def test_paths_with_spaces_tabs_and_quotes_keep_their_patch(repo: GitCLI, call) -> None:
    names = ["with space.py", 'quo"te.py', "tab\there.py", "ünï.py"]
    repo.commit("one", {n: "old\n" for n in names})
    for n in names:
        repo.write(n, f"new {n}\n")
    out = call.ok("git", {"op": "diff", "detail": "patches"})
    for n in names:
        assert f"+new {n}" in out
    assert len(changed(out)) == 4


def test_paths_are_relative_to_a_root_inside_the_repo(tmp_path, state_dir) -> None:
    from tests.git.gitkit import init_repo
    from tooldeck.catalog import build_toolbox
    from tooldeck.runtime import Runtime

    g = init_repo(tmp_path / "mono")
    g.commit("one", {"svc/app.py": "a\n", "lib/util.py": "u\n"})
    g.write("svc/app.py", "b\n")
    g.write("lib/util.py", "v\n")
    box = build_toolbox(Runtime.for_dirs([tmp_path / "mono" / "svc"], state_dir=state_dir))
    out = box.call_sync("git", '{"op": "diff"}').text
    # paths are shown relative to the root; files above it are not shown at all (SPEC §3)
    assert "M  app.py  +1 -1" in out and "util.py" not in out
    only = box.call_sync("git", '{"op": "diff", "path": "app.py"}').text
    assert "app.py" in only and "util.py" not in only


def test_conflicted_file_shows_one_combined_patch(repo: GitCLI, call) -> None:
    repo.commit("base", {"a.py": "base\n", "z.py": "z\n"})
    repo("checkout", "-q", "-b", "side")
    repo.commit("side", {"a.py": "side\n"})
    repo("checkout", "-q", "main")
    repo.commit("main", {"a.py": "main\n"})
    repo("merge", "-q", "side", check=False)
    repo.write("z.py", "z\ny\n")
    out = call.ok("git", {"op": "diff", "compare": "unstaged", "detail": "patches"})
    assert changed(out) == {"a.py": "U", "z.py": "M"}
    assert "diff --cc a.py" in out and "++<<<<<<< HEAD" in out and "+y" in out and "left out" not in out
