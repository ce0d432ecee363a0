"""git op=status, log, show and blame on real temporary repositories."""

from __future__ import annotations

from pathlib import Path

from tests.git.gitkit import GitCLI, init_repo


def test_status_groups_staged_modified_untracked(repo: GitCLI, call) -> None:
    repo.commit("init", {"a.py": "a = 1\n", "b.py": "b = 1\n", "gone.py": "x\n"})
    repo.write("a.py", "a = 2\n")
    repo("add", "a.py")
    repo.write("b.py", "b = 2\n")
    (repo.path / "gone.py").unlink()
    repo.write("new.txt", "hello\n")
    out = call.ok("git", {"op": "status"})
    assert "branch main at " + repo.sha()[:7] in out
    staged = out.split("staged (1):")[1].split("modified")[0]
    assert "M a.py" in staged
    modified = out.split("modified (not staged) (2):")[1].split("untracked")[0]
    assert "M b.py" in modified and "D gone.py" in modified
    assert out.split("untracked (1):")[1].strip() == "new.txt"


def test_status_clean_and_unborn(repo: GitCLI, call) -> None:
    assert "no commits yet" in call.ok("git", {"op": "status"})
    repo.commit("init", {"a.py": "a\n"})
    out = call.ok("git", {"op": "status"})
    assert "working tree clean" in out and "no commits yet" not in out


def test_status_upstream_ahead_and_behind(tmp_path: Path, repo: GitCLI, call) -> None:
    repo.commit("init", {"a.py": "a\n"})
    origin = init_repo(tmp_path / "origin.git")
    origin("config", "receive.denyCurrentBranch", "ignore")
    repo("remote", "add", "origin", str(origin.path))
    repo("push", "-q", "-u", "origin", "main")
    other = GitCLI(tmp_path / "other")
    GitCLI(tmp_path)("clone", "-q", str(origin.path), "other")
    other.commit("theirs", {"t.py": "t\n"})
    other("push", "-q", "origin", "main")
    repo("fetch", "-q", "origin")
    repo.commit("mine", {"m.py": "m\n"})
    out = call.ok("git", {"op": "status"})
    assert "(upstream origin/main, ahead 1, behind 1)" in out


def test_status_reports_stash_and_merge_in_progress(repo: GitCLI, call) -> None:
    repo.commit("init", {"a.py": "base\n"})
    repo("checkout", "-q", "-b", "side")
    repo.commit("side", {"a.py": "side\n"})
    repo("checkout", "-q", "main")
    repo.commit("main", {"a.py": "main\n"})
    repo("merge", "-q", "side", check=False)
    repo.write("note.txt", "x\n")
    out = call.ok("git", {"op": "status"})
    assert "in progress: merge in progress" in out
    assert "conflicts (1):" in out and "U a.py" in out
    repo("merge", "--abort")
    repo.write("a.py", "dirty\n")
    repo("stash", "-q")
    assert "stash: 1 entry" in call.ok("git", {"op": "status"})


def test_log_count_stats_and_detail(repo: GitCLI, call) -> None:
    for i in range(5):
        repo.commit(f"commit {i}", {f"f{i}.py": "x\n" * (i + 1)})
    out = call.ok("git", {"op": "log", "count": 2})
    lines = [ln for ln in out.splitlines() if ": commit " in ln]
    assert len(lines) == 2
    assert lines[0].startswith(repo.sha()[:7]) and "commit 4" in lines[0] and "(1 file +5 -0)" in lines[0]
    assert "commit 3" in lines[1]
    files = call.ok("git", {"op": "log", "count": 1, "detail": "files"})
    assert "    f4.py  +5 -0" in files
    patches = call.ok("git", {"op": "log", "count": 1, "detail": "patches"})
    assert "diff --git a/f4.py b/f4.py" in patches and "+x" in patches


def test_log_range_and_path_filter(repo: GitCLI, call) -> None:
    first = repo.commit("one", {"a.py": "1\n"})
    repo.commit("two", {"b.py": "2\n"})
    repo.commit("three", {"a.py": "3\n"})
    ranged = call.ok("git", {"op": "log", "ref": f"{first}..HEAD"})
    assert "three" in ranged and "two" in ranged and ": one" not in ranged
    by_path = call.ok("git", {"op": "log", "path": "a.py"})
    assert ": three" in by_path and ": one" in by_path and ": two" not in by_path


def test_show_commit_default_head_and_ref(repo: GitCLI, call) -> None:
    root_sha = repo.commit("first\n\nlonger body text", {"a.py": "a\n"})
    repo.commit("second", {"a.py": "a\nb\n", "c.py": "c\n"})
    head = call.ok("git", {"op": "show"})
    assert f"commit {repo.sha()}" in head and "second" in head
    assert "M  a.py  +1 -0" in head and "A  c.py  +1 -0" in head
    assert "diff --git" not in head
    first = call.ok("git", {"op": "show", "ref": "HEAD~1", "detail": "patches"})
    assert f"commit {root_sha}" in first and "root commit" in first and "longer body text" in first
    assert "+a" in first and "c.py" not in first


def test_show_merge_commit_diffs_against_first_parent(repo: GitCLI, call) -> None:
    repo.commit("base", {"a.py": "a\n"})
    repo("checkout", "-q", "-b", "topic")
    repo.commit("topic", {"t.py": "t\n"})
    repo("checkout", "-q", "main")
    repo.commit("main work", {"m.py": "m\n"})
    repo("merge", "-q", "--no-edit", "topic")
    out = call.ok("git", {"op": "show"})
    assert "merge of" in out and "A  t.py" in out and "m.py" not in out.split("merge of")[1]


def test_blame_line_range_attributes_each_line(repo: GitCLI, call) -> None:
    first = repo.commit("one", {"f.txt": "l1\nl2\nl3\nl4\n"}, author="Grace")
    second = repo.commit("two", {"f.txt": "l1\nL2\nl3\nl4\n"}, author="Linus")
    repo.write("f.txt", "l1\nL2\nL3!\nl4\n")
    out = call.ok("git", {"op": "blame", "path": "f.txt", "lines": "2-3"})
    lines = out.splitlines()
    assert lines[0] == "blame f.txt:2-3 (working tree)"
    assert lines[1].startswith(second[:7]) and "Linus" in lines[1] and "two" in lines[1]
    assert lines[2] == "  2| L2"
    assert lines[3] == "0000000 not committed yet" and lines[4] == "  3| L3!"
    assert len(lines) == 5 and "l1" not in out
    at_first = call.ok("git", {"op": "blame", "path": "f.txt", "lines": "2", "ref": first})
    assert "Grace" in at_first and "  2| l2" in at_first
    (repo.path / "f.txt").unlink()
    deleted = call.ok("git", {"op": "blame", "path": "f.txt", "ref": "HEAD"})
    assert f"at HEAD {second[:7]}" in deleted and "  4| l4" in deleted


def test_blame_errors(repo: GitCLI, call) -> None:
    repo.commit("one", {"f.txt": "a\nb\n", "dir/x.txt": "x\n"})
    call.err("git", {"op": "blame"}, code="invalid_arguments")
    call.err("git", {"op": "blame", "path": "f.txt", "lines": "5-9"}, code="invalid_arguments")
    call.err("git", {"op": "blame", "path": "f.txt", "lines": "3-1"}, code="invalid_arguments")
    call.err("git", {"op": "blame", "path": "f.txt", "lines": "two"}, code="invalid_arguments")
    call.err("git", {"op": "blame", "path": "nope.txt"}, code="not_found")
    call.err("git", {"op": "blame", "path": "dir"}, code="not_a_file")
    call.err("git", {"op": "blame", "path": "../outside.txt"}, code="outside_roots")
