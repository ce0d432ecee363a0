"""A FIFO (or a link to one) under a rule file's name would stall ripgrep,
which opens every .gitignore with a blocking open: such a root is found
before rg runs and searched by the Python engine instead, through the real
CLI, within seconds."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.support.require import require
from tooldeck.confine import helpers
from tooldeck.core.toolbox import Toolbox
from tooldeck.runtime import Runtime
from tooldeck.tools.search import tools as search_tools
from tooldeck.workspace import ripgrep
from tooldeck.workspace.ignore import IgnoreRules
from tooldeck.workspace.rulefiles import stalling_rule_files

pytestmark = pytest.mark.skipif(not hasattr(os, "mkfifo"), reason="needs FIFOs")


def _tree(root: Path) -> Path:
    (root / "sub" / "deep").mkdir(parents=True)
    (root / "sub" / "deep" / "a.txt").write_text("needle here\n")
    (root / "keep.txt").write_text("needle too\n")
    (root / ".gitignore").write_text("*.log\n")
    (root / "skip.log").write_text("needle ignored\n")
    return root


def test_regular_rule_files_are_safe(root: Path) -> None:
    _tree(root)
    (root / "sub" / ".gitignore").symlink_to(root / ".gitignore")  # a link to a regular file is fine
    assert stalling_rule_files(str(root)) == []


@pytest.mark.parametrize(
    "where",
    ["sub/deep/.gitignore", "sub/.tooldeckignore", "nested/.git/info/exclude", "link"],
)
def test_a_fifo_under_a_rule_name_is_found(root: Path, where: str) -> None:
    _tree(root)
    if where == "link":
        os.mkfifo(root / "elsewhere.fifo")
        target = root / "sub" / ".gitignore"
        target.symlink_to(root / "elsewhere.fifo")
    else:
        target = root / where
        target.parent.mkdir(parents=True, exist_ok=True)
        os.mkfifo(target)
    assert stalling_rule_files(str(root)) == [str(target)]


def test_a_fifo_in_a_parent_folder_is_found(tmp_path: Path) -> None:
    inner = _tree(tmp_path / "outer" / "root")
    os.mkfifo(tmp_path / "outer" / ".gitignore")  # rg opens it even with --no-ignore-parent
    assert stalling_rule_files(str(inner)) == [str(tmp_path / "outer" / ".gitignore")]


def test_a_fifo_in_a_denied_folder_is_not_searched_so_not_reported(root: Path) -> None:
    _tree(root)
    (root / "node_modules" / "pkg").mkdir(parents=True)
    os.mkfifo(root / "node_modules" / "pkg" / ".gitignore")
    assert stalling_rule_files(str(root)) == []


def test_term_hits_with_a_fifo_gitignore_answers_like_the_python_engine(root: Path) -> None:
    _tree(root)
    os.mkfifo(root / "sub" / ".gitignore")
    hits = ripgrep.term_hits(IgnoreRules(str(root)), ["needle"], timeout=20)
    assert sorted(hits) == ["keep.txt", "sub/deep/a.txt"]  # skip.log stays ignored


def test_file_search_over_the_cli_does_not_stall_on_a_fifo(root: Path, state_dir: Path) -> None:
    _tree(root)
    os.mkfifo(root / "sub" / "deep" / ".gitignore")
    proc = subprocess.run(
        [sys.executable, "-m", "tooldeck", "call", "file_search", '{"pattern": "needle", "mode": "content"}'],
        cwd=root, capture_output=True, text=True, timeout=60,
        env={**os.environ, "TOOLDECK_STATE_DIR": str(state_dir)},
    )
    assert proc.returncode == 0, proc.stderr
    assert "sub/deep/a.txt" in proc.stdout and "keep.txt" in proc.stdout
    assert "skip.log" not in proc.stdout


def test_rg_ignores_rule_files_above_the_root_like_the_walker(tmp_path: Path, state_dir: Path) -> None:
    inner = _tree(tmp_path / "outer" / "root")
    (tmp_path / "outer" / ".gitignore").write_text("keep.txt\n")  # not the root's rule: not applied
    proc = subprocess.run(
        [sys.executable, "-m", "tooldeck", "call", "file_search", '{"pattern": "needle", "mode": "content"}'],
        cwd=inner, capture_output=True, text=True, timeout=60,
        env={**os.environ, "TOOLDECK_STATE_DIR": str(state_dir)},
    )
    assert proc.returncode == 0, proc.stderr
    assert "keep.txt" in proc.stdout and "[engine: python]" not in proc.stdout  # rg did the search


def _cli_search(root: Path, state_dir: Path, sandbox: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "tooldeck", "call", "file_search", '{"pattern": "needle", "mode": "content"}'],
        cwd=root, capture_output=True, text=True, timeout=60,
        env={**os.environ, "TOOLDECK_STATE_DIR": str(state_dir), "TOOLDECK_HELPER_SANDBOX": sandbox},
    )


@pytest.mark.parametrize("sandbox", ["launcher", "none"])
def test_a_fifo_sends_the_search_to_the_python_engine_in_each_mode(root: Path, state_dir: Path, sandbox: str) -> None:
    """One search per process: found by the list made before rg starts (the
    launcher has not yet shown it can start here)."""
    require("rg")
    if sandbox == "launcher":
        require("bwrap")
    _tree(root)
    os.mkfifo(root / "sub" / ".gitignore")
    proc = _cli_search(root, state_dir, sandbox)
    assert proc.returncode == 0, proc.stderr
    assert "[engine: python]" in proc.stdout
    assert "sub/deep/a.txt" in proc.stdout and "keep.txt" in proc.stdout and "skip.log" not in proc.stdout


@pytest.fixture
def proven_launcher(root: Path, state_dir: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[Toolbox]:
    """A Toolbox over ``_tree(root)`` in the launcher, after a first search
    (so the launcher has shown it can start here)."""
    require("rg")
    require("bwrap")
    monkeypatch.setenv(helpers.ENV, "launcher")
    helpers.reset_for_tests()
    try:
        if helpers.search_mode() != "launcher":
            pytest.fail("bubblewrap is installed but the launcher does not start")
        _tree(root)
        box = Toolbox(search_tools(Runtime.for_dirs([root], state_dir=state_dir)))
        first = box.call_sync("file_search", json.dumps({"pattern": "needle", "mode": "content"}))
        assert "[engine: python]" not in first.text and ripgrep.lazy_stall_check()
        yield box
    finally:
        helpers.reset_for_tests()


def _scans(monkeypatch: pytest.MonkeyPatch) -> list[str]:
    scans: list[str] = []
    real = ripgrep.stalling_rule_files
    monkeypatch.setattr(ripgrep, "stalling_rule_files", lambda path: scans.append(path) or real(path))
    return scans


def test_in_a_proven_launcher_rg_starts_first_and_is_killed_on_a_fifo(
    root: Path, proven_launcher: Toolbox, monkeypatch: pytest.MonkeyPatch
) -> None:
    """rg starts before any list is made, blocks on the FIFO, and the list
    made once it ran past the grace period kills it; the search is answered
    by the Python engine."""
    os.mkfifo(root / "sub" / ".gitignore")
    scans = _scans(monkeypatch)
    res = proven_launcher.call_sync("file_search", json.dumps({"pattern": "needle", "mode": "content"}))
    assert "[engine: python]" in res.text, res.text
    assert "sub/deep/a.txt" in res.text and "skip.log" not in res.text
    assert scans == [str(root)]  # made once, by the guard of the running rg


def test_in_a_proven_launcher_a_rule_file_linked_to_a_device_is_not_read(
    root: Path, proven_launcher: Toolbox, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Why the launcher may start rg before the list: /dev/zero does not exist
    in its namespace, so a .gitignore linked to it is a missing file to rg (an
    endless read elsewhere). The search ends, by rg, with the root's rules,
    before the grace period (no list made)."""
    (root / "sub" / ".gitignore").symlink_to("/dev/zero")
    scans = _scans(monkeypatch)
    res = proven_launcher.call_sync("file_search", json.dumps({"pattern": "needle", "mode": "content"}))
    assert "[engine: python]" not in res.text, res.text
    assert "sub/deep/a.txt" in res.text and "skip.log" not in res.text
    assert scans == []


def test_in_a_proven_launcher_a_term_count_makes_no_list_when_rg_ends_in_time(
    root: Path, proven_launcher: Toolbox, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The context builder's term count (TermSearch) starts rg first, as
    file_search does: no pass over the tree when rg ends within the grace."""
    scans = _scans(monkeypatch)
    counts = ripgrep.TermSearch(IgnoreRules(str(root)), ["needle"]).result()
    assert counts == {"sub/deep/a.txt": {"needle": 1}, "keep.txt": {"needle": 1}}
    assert scans == []


def test_in_a_proven_launcher_a_term_count_stalled_on_a_fifo_is_killed(
    root: Path, proven_launcher: Toolbox, monkeypatch: pytest.MonkeyPatch
) -> None:
    """rg blocks on the FIFO; the list made once it ran past the grace finds
    it, rg is killed and the counts come from the Python engine."""
    os.mkfifo(root / "sub" / ".gitignore")
    monkeypatch.setattr(ripgrep, "TERMS_STALL_GRACE", 0.2)
    scans = _scans(monkeypatch)
    counts = ripgrep.TermSearch(IgnoreRules(str(root)), ["needle"]).result()
    assert counts == {"sub/deep/a.txt": {"needle": 1}, "keep.txt": {"needle": 1}}
    assert scans == [str(root)]
