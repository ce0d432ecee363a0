"""A FIFO named ``.gitignore`` would stall git: listing untracked files
(``git status``, ``ls-files --others --exclude-standard``) opens every rule
file with a blocking ``open``. When git runs past a short grace, tooldeck
looks at the rule files (directory entries, nothing opened), stops git on
such a one and answers without the untracked files and with a note naming
it, in seconds instead of the runner's timeout (issue 30; the look is made
only then since issue 35)."""

from __future__ import annotations

import os
import time

import pytest

from tests.git.gitkit import GitCLI
from tooldeck.git.changes import list_changes
from tooldeck.git.compare import parse_compare
from tooldeck.git.repo import open_repo
from tooldeck.git.status import repo_status

pytestmark = [
    pytest.mark.skipif(not hasattr(os, "mkfifo"), reason="needs FIFOs"),
    pytest.mark.timeout(60),
]


def test_status_and_changes_skip_untracked_with_a_fifo_rule_file(repo: GitCLI) -> None:
    repo.commit("init", {"a.txt": "one\n"})
    repo.write("a.txt", "two\n")
    repo.write("sub/new.txt", "untracked\n")
    os.mkfifo(repo.path / "sub" / ".gitignore")
    r = open_repo(str(repo.path))
    start = time.monotonic()
    st = repo_status(r)
    cs = list_changes(r, parse_compare(r, None))
    assert time.monotonic() - start < 10  # git opening the FIFO would wait for the runner's timeout
    assert [e.path for e in st.modified] == ["a.txt"]
    assert st.untracked == [] and st.untracked_note and "sub/.gitignore" in st.untracked_note
    assert [f.path for f in cs.files] == ["a.txt"]
    assert cs.untracked_note and "sub/.gitignore" in cs.untracked_note


def test_regular_rule_files_list_untracked(repo: GitCLI) -> None:
    repo.commit("init", {"a.txt": "one\n", "sub/.gitignore": "*.log\n"})
    repo.write("sub/new.txt", "untracked\n")
    repo.write("sub/skip.log", "ignored\n")
    r = open_repo(str(repo.path))
    st = repo_status(r)
    assert [e.path for e in st.untracked] == ["sub/new.txt"] and st.untracked_note is None


def test_the_tree_is_scanned_only_when_git_runs_long(repo: GitCLI, monkeypatch: pytest.MonkeyPatch) -> None:
    """The pass over the tree's rule files is made only once git has run
    past the grace period: a listing that ends before costs none, and one
    stuck on a FIFO is stopped by it (the test above)."""
    from tooldeck.workspace import rulefiles

    repo.commit("init", {"a.txt": "one\n"})
    repo.write("a.txt", "two\n")
    repo.write("sub/new.txt", "untracked\n")
    scans: list[str] = []
    real = rulefiles.stalling_rule_files
    monkeypatch.setattr(rulefiles, "stalling_rule_files", lambda path: scans.append(path) or real(path))
    r = open_repo(str(repo.path))
    assert [e.path for e in repo_status(r).untracked] == ["sub/"]  # git status names a new folder
    assert [f.path for f in list_changes(r, parse_compare(r, None)).files] == ["a.txt", "sub/new.txt"]
    assert scans == []
    os.mkfifo(repo.path / "sub" / ".gitignore")
    cs = list_changes(r, parse_compare(r, None))
    assert cs.untracked_note and "sub/.gitignore" in cs.untracked_note
    assert scans == [os.path.realpath(repo.path)]
