"""Discovery kept between calls (``tooldeck.git.discovery``): reused only
while every file its answer depends on is unchanged, so a changed
configuration (a filter driver above all: a program git would run), a
commit, a branch switch or a planted ``.git`` is seen by the next call."""

from __future__ import annotations

import os
import shutil
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from tests.git.gitkit import GitCLI, init_repo
from tooldeck.confine import helpers
from tooldeck.core.errors import ToolError
from tooldeck.git.discovery import DISCOVERY, config_listing
from tooldeck.git.repo import Repo, current_branch, head_commit, open_repo


@pytest.fixture
def spawned(monkeypatch: pytest.MonkeyPatch) -> Iterator[list[str]]:
    """The git subcommand of every git process started."""
    seen: list[str] = []
    real = helpers.popen

    def recording(policy: Any, argv: Any, **kw: Any) -> Any:
        rest = list(argv)[2:]
        while rest and rest[0] == "-c":
            rest = rest[2:]
        seen.append(rest[0] if rest else "?")
        return real(policy, argv, **kw)

    monkeypatch.setattr(helpers, "popen", recording)
    yield seen


def warm(path: Path) -> Repo:
    """Open until the answer is kept (at most three calls: the first may
    learn of included files it could not snapshot yet)."""
    for _ in range(3):
        hits = DISCOVERY.hits
        repo = open_repo(str(path))
        if DISCOVERY.hits > hits:
            return repo
    raise AssertionError("discovery was never reused")


def test_a_kept_answer_spares_both_processes_and_says_the_same(repo: GitCLI, spawned: list[str]) -> None:
    sha = repo.commit("one", {"a.py": "a\n"})
    repo("config", "filter.lfs.clean", "git-lfs clean -- %f")
    asked = open_repo(str(repo.path))
    kept = warm(repo.path)
    spawned.clear()
    again = open_repo(str(repo.path))
    assert spawned == []
    for r in (kept, again):
        assert (r.toplevel, r.git_dir, r.common_dir) == (asked.toplevel, asked.git_dir, asked.common_dir)
        assert r.git.extra_config == asked.git.extra_config and "filter.lfs.clean=" in r.git.extra_config
        assert head_commit(r) == sha and current_branch(r) == "main"
    assert spawned == []
    assert again._cache is not kept._cache  # a call's own memo, never shared


def test_a_filter_declared_after_is_blanked_on_the_next_call(repo: GitCLI) -> None:
    repo.commit("one", {"a.py": "a\n"})
    warm(repo.path)
    repo("config", "filter.evil.clean", "touch pwned")
    assert "filter.evil.clean=" in open_repo(str(repo.path)).git.extra_config


def test_a_rewrite_keeping_size_and_times_is_seen(repo: GitCLI) -> None:
    """Content, not timestamps, keys the answer: a same-size rewrite with
    the old mtime restored is still a change."""
    repo.commit("one", {"a.py": "a\n"})
    cfg = repo.path / ".git" / "config"
    cfg.write_text(cfg.read_text() + '[filter "aaaa"]\n\tclean = x\n')
    assert "filter.aaaa.clean=" in warm(repo.path).git.extra_config
    st = os.stat(cfg)
    cfg.write_text(cfg.read_text().replace('"aaaa"', '"bbbb"'))
    os.utime(cfg, ns=(st.st_atime_ns, st.st_mtime_ns))
    assert os.stat(cfg).st_size == st.st_size and os.stat(cfg).st_mtime_ns == st.st_mtime_ns
    extra = open_repo(str(repo.path)).git.extra_config
    assert "filter.bbbb.clean=" in extra and "filter.aaaa.clean=" not in extra


def test_an_include_created_later_is_read(repo: GitCLI) -> None:
    repo.commit("one", {"a.py": "a\n"})
    repo("config", "include.path", "later.cfg")  # relative to .git/config: .git/later.cfg, missing for now
    warm(repo.path)
    (repo.path / ".git" / "later.cfg").write_text("[include]\n\tpath = deeper.cfg\n")
    assert not any("filter." in c for c in open_repo(str(repo.path)).git.extra_config)
    warm(repo.path)
    (repo.path / ".git" / "deeper.cfg").write_text('[filter "late"]\n\tsmudge = run-me\n')
    assert "filter.late.smudge=" in open_repo(str(repo.path)).git.extra_config


def test_the_persons_configuration_is_watched(repo: GitCLI, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    home = tmp_path / "home"
    xdg = home / ".config" / "git"
    xdg.mkdir(parents=True)
    # present from the start: a confined git may read only the files that existed when its rules were made
    (home / ".gitconfig").write_text("[core]\n\tquotepath = false\n")
    (xdg / "config").write_text("")
    monkeypatch.setenv("HOME", str(home))
    monkeypatch.delenv("XDG_CONFIG_HOME", raising=False)
    repo.commit("one", {"a.py": "a\n"})
    warm(repo.path)
    (home / ".gitconfig").write_text('[filter "mine"]\n\tprocess = p\n')
    assert "filter.mine.process=" in open_repo(str(repo.path)).git.extra_config
    warm(repo.path)
    (xdg / "config").write_text('[filter "xdg"]\n\tclean = c\n')
    assert "filter.xdg.clean=" in open_repo(str(repo.path)).git.extra_config


def test_commits_branches_and_packed_refs_are_followed(repo: GitCLI) -> None:
    repo.commit("one", {"a.py": "a\n"})
    warm(repo.path)
    second = repo.commit("two", {"a.py": "b\n"})
    assert head_commit(open_repo(str(repo.path))) == second
    warm(repo.path)
    repo("checkout", "-q", "-b", "topic")
    assert current_branch(open_repo(str(repo.path))) == "topic"
    warm(repo.path)
    repo("pack-refs", "--all")  # refs/heads/topic now only in packed-refs
    assert not (repo.path / ".git" / "refs" / "heads" / "topic").exists()
    assert head_commit(warm(repo.path)) == second
    third = repo.commit("three", {"a.py": "c\n"})
    assert head_commit(open_repo(str(repo.path))) == third
    warm(repo.path)
    repo("checkout", "-q", "--detach")
    r = open_repo(str(repo.path))
    assert current_branch(r) is None and head_commit(r) == third


def test_a_repository_planted_in_a_subfolder_is_seen(repo: GitCLI) -> None:
    repo.commit("one", {"sub/a.py": "a\n"})
    assert warm(repo.path / "sub").toplevel == os.path.realpath(repo.path)
    init_repo(repo.path / "sub")
    assert open_repo(str(repo.path / "sub")).toplevel == os.path.realpath(repo.path / "sub")


def test_a_git_entry_swapped_for_a_foreign_pointer_is_refused(repo: GitCLI, tmp_path: Path) -> None:
    repo.commit("one", {"a.py": "a\n"})
    warm(repo.path)
    elsewhere = tmp_path / "elsewhere.git"
    shutil.move(str(repo.path / ".git"), elsewhere)
    (repo.path / ".git").write_text(f"gitdir: {elsewhere}\n")
    with pytest.raises(ToolError) as err:
        open_repo(str(repo.path))
    assert err.value.code == "denied"


def test_what_cannot_be_snapshotted_is_asked_each_call(repo: GitCLI, spawned: list[str]) -> None:
    repo.commit("one", {"a.py": "a\n"})
    big = repo.path / ".git" / "big.cfg"
    big.write_text("# padding\n" * 30_000 + '[filter "far"]\n\tclean = x\n')  # over MAX_FILE_BYTES
    repo("config", "include.path", "big.cfg")
    for _ in range(3):
        spawned.clear()
        assert "filter.far.clean=" in open_repo(str(repo.path)).git.extra_config
        assert "rev-parse" in spawned and "config" in spawned


def test_config_listing_names_origins_and_include_targets(tmp_path: Path) -> None:
    home = os.path.expanduser("~")
    text = "\0".join(
        [
            "file:.git/config",
            "include.path\n../shared.cfg",
            "file:/etc/gitconfig",
            "includeIf.onbranch:main.path\n~/branch.cfg",
            "file:.git/config",
            "filter.My.Driver.clean\nrun",
            "command line:",
            "core.pager\ncat",
            "",
        ]
    )
    filters, files = config_listing(text, str(tmp_path))
    assert "filter.My.Driver.clean=" in filters and "filter.My.Driver.required=false" in filters
    assert files is not None
    assert set(files) == {
        str(tmp_path / ".git" / "config"),
        str(tmp_path / "shared.cfg"),
        "/etc/gitconfig",
        os.path.join(home, "branch.cfg"),
    }
    _, unsure = config_listing("file:.git/config\0include.path\n%(prefix)/etc/x\0", str(tmp_path))
    assert unsure is None
