"""git: model-supplied strings never reach git as options, repository
configuration never runs a program, and errors say what to do."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from tests.git.gitkit import GitCLI
from tooldeck.catalog import build_toolbox
from tooldeck.runtime import Runtime


@pytest.fixture
def committed(repo: GitCLI) -> GitCLI:
    repo.commit("one", {"a.py": "a\n"})
    repo.commit("two", {"a.py": "b\n"})
    return repo


INJECTIONS = [
    ({"op": "show", "ref": "--output={out}"}, "ref"),
    ({"op": "show", "ref": "  --output={out}"}, "ref"),
    ({"op": "log", "ref": "--output={out}"}, "ref"),
    ({"op": "log", "ref": "HEAD..--output={out}"}, "ref"),
    ({"op": "blame", "path": "a.py", "ref": "--output={out}"}, "ref"),
    ({"op": "diff", "compare": "--output={out}"}, "compare"),
    ({"op": "diff", "compare": "mergebase:--output={out}"}, "compare"),
    ({"op": "diff", "compare": "HEAD..--output={out}"}, "compare"),
    ({"op": "diff", "compare": "--output={out}...HEAD"}, "compare"),
    ({"op": "blame", "path": "-x"}, "path"),
    ({"op": "diff", "path": "--output={out}"}, "path"),
    ({"op": "status", "path": "-uno"}, "path"),
    ({"op": "status", "repo_root": "--git-dir={out}"}, "repo_root"),
    ({"op": "status", "repo_roots": ["--work-tree={out}"]}, "repo_roots"),
]


@pytest.mark.parametrize(("args", "field"), INJECTIONS)
def test_leading_dash_is_refused_and_nothing_is_written(
    committed: GitCLI, call, tmp_path: Path, args: dict, field: str
) -> None:
    out = tmp_path / "injected.txt"
    filled = {
        k: v.format(out=out) if isinstance(v, str) else [x.format(out=out) for x in v] if isinstance(v, list) else v
        for k, v in args.items()
    }
    res = call.err("git", filled, code="invalid_arguments")
    assert f"`{field}`" in res.text and "'-'" in res.text
    assert not out.exists()


def test_control_characters_refused(committed: GitCLI, call) -> None:
    call.err("git", {"op": "show", "ref": "HEAD\n--output=x"}, code="invalid_arguments")


def test_pathspec_magic_is_literal(committed: GitCLI, call) -> None:
    """':(exclude)a.py' would be pathspec magic; here it is just a (missing) name."""
    committed.write("a.py", "changed\n")
    out = call.ok("git", {"op": "diff", "path": ":(glob)*.py"})
    assert out.endswith("no changes")


def test_repository_config_never_runs_programs(committed: GitCLI, call, tmp_path: Path) -> None:
    marker = tmp_path / "ran"
    script = f"touch {marker}; cat"
    committed("config", "filter.evil.clean", script)
    committed("config", "filter.evil.smudge", script)
    committed("config", "filter.evil.process", f"touch {marker}")
    committed("config", "core.fsmonitor", f"touch {marker}; false")
    committed("config", "diff.external", f"touch {marker}; false")
    committed("config", "diff.conv.textconv", f"touch {marker}; tr a-z A-Z <")
    committed("config", "log.showSignature", "true")
    committed("config", "gpg.program", f"touch {marker}; false")
    committed.write(".gitattributes", "*.py filter=evil diff=conv\n")
    committed.write("a.py", "lowercase text\n")
    for args in (
        {"op": "status"},
        {"op": "diff", "detail": "patches"},
        {"op": "diff", "compare": "last", "detail": "full"},
        {"op": "log", "detail": "patches"},
        {"op": "show", "detail": "patches"},
        {"op": "blame", "path": "a.py"},
    ):
        out = call.ok("git", args)
        assert not marker.exists(), f"{args} ran a configured program"
        if args == {"op": "diff", "detail": "patches"}:
            assert "+lowercase text" in out  # no textconv applied


def test_inherited_git_environment_is_ignored(committed: GitCLI, call, tmp_path: Path, monkeypatch) -> None:
    other = tmp_path / "elsewhere"
    other.mkdir()
    monkeypatch.setenv("GIT_DIR", str(other))
    monkeypatch.setenv("GIT_WORK_TREE", str(other))
    monkeypatch.setenv("GIT_EXTERNAL_DIFF", "false")
    committed.write("a.py", "c\n")
    out = call.ok("git", {"op": "diff", "detail": "patches"})
    assert "+c" in out


def test_status_does_not_take_the_index_lock(committed: GitCLI, call) -> None:
    committed.write("a.py", "touched\n")
    index = committed.path / ".git" / "index"
    before = index.stat().st_mtime_ns
    call.ok("git", {"op": "status"})
    assert index.stat().st_mtime_ns == before


def test_non_repository_root(root: Path, call) -> None:
    (root / "file.txt").write_text("x\n")
    for op in ("status", "diff", "log"):
        res = call.err("git", {"op": op}, code="not_found")
        assert "not inside a git repository" in res.text and "repo_root" in res.text


def test_unknown_repo_root_and_outside_path(committed: GitCLI, call, tmp_path: Path) -> None:
    call.err("git", {"op": "status", "repo_root": "no-such-dir"}, code="not_found")
    outside = tmp_path / "outside"
    outside.mkdir()
    call.err("git", {"op": "status", "repo_root": str(outside)}, code="outside_roots")


def test_arguments_for_other_ops_are_refused(committed: GitCLI, call) -> None:
    call.err("git", {"op": "diff", "lines": "1-2"}, code="invalid_arguments")
    call.err("git", {"op": "status", "artifacts": True}, code="invalid_arguments")
    call.err("git", {"op": "log", "compare": "staged"}, code="invalid_arguments")
    call.err("git", {"op": "log", "count": 0}, code="invalid_arguments")
    call.err("git", {"op": "rebase"}, code="invalid_arguments")
    call.err("git", {"op": "status", "repo_root": "x", "repo_roots": ["y"]}, code="invalid_arguments")
    call.err("git", {"op": "status", "unknown": 1}, code="invalid_arguments")


def test_jj_repository_without_jj_is_reported(tmp_path: Path, state_dir: Path) -> None:
    ws = tmp_path / "jjrepo"
    (ws / ".jj").mkdir(parents=True)
    box = build_toolbox(Runtime.for_dirs([ws], state_dir=state_dir))
    res = box.call_sync("git", '{"op": "status"}')
    assert res.is_error and res.error is not None and res.error.code == "unsupported"
    assert "Jujutsu" in res.text


def test_colocated_jj_repository_is_read_through_git(committed: GitCLI, call) -> None:
    (committed.path / ".jj").mkdir()
    out = call.ok("git", {"op": "status"})
    assert "colocated Jujutsu" in out and "branch main" in out


def test_git_not_installed_is_unsupported(committed: GitCLI, call, monkeypatch) -> None:
    monkeypatch.setenv("PATH", os.devnull)
    call.err("git", {"op": "status"}, code="unsupported")
