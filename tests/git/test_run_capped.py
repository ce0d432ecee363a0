"""``Git.run_capped``: the listing-with-patches call that stops reading a
diff too large to show (and kills git), with the same timeout and error
mapping as ``Git.run``."""

from __future__ import annotations

import os
import time

import pytest

from tests.git.gitkit import GitCLI
from tests.git.test_git_service import _gits_in
from tooldeck.core.errors import ToolError
from tooldeck.git.runner import Git


def test_small_output_is_read_whole_and_large_output_is_cut(repo: GitCLI) -> None:
    repo.commit("one", {f"f{i}.txt": f"line {i}\n" * 2000 for i in range(20)})
    git = Git(str(repo.path))
    full = git.run(["log", "-p"]).stdout
    got = git.run_capped(["log", "-p"], len(full) + 10)
    assert got is not None and got.stdout == full and got.code == 0
    assert git.run_capped(["log", "-p"], len(full) // 10) is None
    assert not _gits_in(repo.path), "the git whose output was cut was left running"


def test_an_error_is_the_same_tool_error(repo: GitCLI) -> None:
    repo.commit("one", {"a.txt": "a\n"})
    with pytest.raises(ToolError) as err:
        Git(str(repo.path)).run_capped(["cat-file", "-p", "nonexistent-object"], 1000)
    assert err.value.code == "git_error" and "nonexistent-object" in err.value.message


@pytest.mark.timeout(120)
def test_a_hanging_git_times_out(repo: GitCLI) -> None:
    exclude = repo.path / ".git" / "info" / "exclude"
    exclude.parent.mkdir(exist_ok=True)
    exclude.unlink(missing_ok=True)
    os.mkfifo(exclude)  # git status opens it and waits for a writer that never comes
    started = time.monotonic()
    with pytest.raises(ToolError) as err:
        Git(str(repo.path), timeout=0.5).run_capped(["status", "--porcelain"], 1 << 20)
    assert err.value.code == "timeout" and "0.5s" in err.value.message
    assert time.monotonic() - started < 60
    assert not _gits_in(repo.path), "the timed-out git was left running"
