"""Break-out attempts at git: planting a command the person's next ``git`` runs.

A command git runs on the host (``core.fsmonitor``, hooks) written by the
model into a git directory would run at the person's next ``git status``. The
attempts run in a development runtime that allows everything; each is checked
from the host by running the person's ``git status`` and looking for the
marker file the planted command would create.
"""

from __future__ import annotations

import os
import signal
import subprocess
import threading
import time
from pathlib import Path

import pytest

from tests.shell.sandbox_kit import open_shell
from tests.shell.shell_harness import Shell, needs_bwrap

pytestmark = needs_bwrap

GIT = ["git", "-c", "user.name=t", "-c", "user.email=t@t", "-c", "init.defaultBranch=main"]


@pytest.fixture
def box(root: Path, state_dir: Path) -> Shell:
    return open_shell(root, state_dir)


@pytest.fixture
def marker(tmp_path: Path) -> Path:
    """The file a planted command would create (outside every root)."""
    return tmp_path / "PLANTED-RAN"


def person_git_status(path: Path) -> subprocess.CompletedProcess[str]:
    """The person's ``git status`` on the host (no global config of theirs)."""
    env = {"PATH": os.environ["PATH"], "HOME": str(path), "GIT_CONFIG_NOSYSTEM": "1", "GIT_CEILING_DIRECTORIES": ""}
    return subprocess.run(["git", "status", "--short"], cwd=path, capture_output=True, text=True, env=env)


def plant(marker: Path) -> str:
    return f"touch {marker}; false"


def _raw(box: Shell, code: str) -> dict:
    return box.structured("raw", {"code": code})


def test_git_init_in_a_root_without_a_repository_fails(box: Shell, root: Path, marker: Path) -> None:
    (root / "a.txt").write_text("a\n")
    out = _raw(box, f"git init -q . && git config core.fsmonitor '{plant(marker)}'; echo rc=$?")
    assert "Read-only file system" in out["stderr"] or "Read-only file system" in out["stdout"], out
    assert sorted(p.name for p in root.iterdir()) == ["a.txt"]  # placeholders gone
    person_git_status(root)
    assert not marker.exists()


def test_the_no_repository_note_is_what_the_model_sees(box: Shell) -> None:
    out = box.structured("sh", {"program": "cat", "arguments": [".git/README-tooldeck"]})
    assert out["exit_code"] == 0 and "read-only" in out["stdout"] and "person" in out["stdout"]


def test_git_dir_written_by_hand_in_a_root_without_a_repository(box: Shell, root: Path, marker: Path) -> None:
    _raw(box, "mkdir -p .git/objects .git/refs && echo 'ref: refs/heads/main' > .git/HEAD && "
         f"printf '[core]\\n\\tfsmonitor = {plant(marker)}\\n' > .git/config; echo done")  # fmt: skip
    assert not (root / ".git").exists()
    person_git_status(root)
    assert not marker.exists()


def test_the_root_cannot_be_made_a_bare_repository(box: Shell, root: Path, marker: Path) -> None:
    """git takes a folder holding HEAD, objects/ and refs/ for a repository: core.worktree
    makes it a working one whose fsmonitor the person's `git status` runs."""
    code = (
        "mkdir -p objects refs/heads; echo 'ref: refs/heads/main' > HEAD; "
        f"printf '[core]\\n\\tbare = false\\n\\tworktree = {root}\\n\\tfsmonitor = {plant(marker)}\\n' > config; "
        "ls; echo done"
    )
    out = _raw(box, code)
    assert "done" in out["stdout"]
    assert not (root / "HEAD").exists() or (root / "HEAD").read_text() == ""
    person_git_status(root)
    assert not marker.exists()


def test_a_root_that_is_a_git_directory_stays_read_only(box: Shell, root: Path, marker: Path) -> None:
    subprocess.run([*GIT, "init", "-q", "--bare", str(root)], check=True)
    config = (root / "config").read_text()
    _raw(box, f"git config core.fsmonitor '{plant(marker)}'; echo x > hooks/pre-commit; echo done")
    assert (root / "config").read_text() == config and not (root / "hooks" / "pre-commit").exists()


def _repo(path: Path) -> None:
    subprocess.run([*GIT, "init", "-q", str(path)], check=True)
    (path / "f.txt").write_text("x\n")
    subprocess.run([*GIT, "-C", str(path), "add", "f.txt"], check=True)
    subprocess.run([*GIT, "-C", str(path), "commit", "-qm", "init"], check=True)


@pytest.mark.parametrize("nested", ["vendor/lib", "a/b/c/lib"])  # the scan goes four folders down
def test_nested_repository_is_read_only(box: Shell, root: Path, marker: Path, nested: str) -> None:
    _repo(root)
    _repo(root / nested)
    config = (root / nested / ".git" / "config").read_text()
    _raw(box, f"git -C {nested} config core.fsmonitor '{plant(marker)}'; "
         f"echo '#!/bin/sh' > {nested}/.git/hooks/pre-commit; echo done")  # fmt: skip
    assert (root / nested / ".git" / "config").read_text() == config
    assert not (root / nested / ".git" / "hooks" / "pre-commit").exists()
    person_git_status(root / nested)
    person_git_status(root)
    assert not marker.exists()


def test_nested_git_file_and_the_git_dir_it_names_are_read_only(box: Shell, root: Path, marker: Path) -> None:
    """A submodule-style `.git` file pointing at a git directory elsewhere in the root."""
    _repo(root / "store" / "lib")
    (root / "vendor" / "lib").mkdir(parents=True)
    os.rename(root / "store" / "lib" / ".git", root / "gitdirs-lib")
    (root / "vendor" / "lib" / ".git").write_text(f"gitdir: {root / 'gitdirs-lib'}\n")
    config = (root / "gitdirs-lib" / "config").read_text()
    _raw(box, f"git -C vendor/lib config core.fsmonitor '{plant(marker)}'; "
         "echo 'gitdir: /tmp/x' > vendor/lib/.git; echo done")  # fmt: skip
    assert (root / "gitdirs-lib" / "config").read_text() == config
    assert (root / "vendor" / "lib" / ".git").read_text().startswith(f"gitdir: {root}")
    person_git_status(root / "vendor" / "lib")
    assert not marker.exists()


def test_submodule_listed_in_gitmodules_is_read_only_beyond_the_scan(box: Shell, root: Path, marker: Path) -> None:
    from tooldeck.shell.gitguard import SCAN_DIRS

    deep = root / "a"
    for i in range(SCAN_DIRS + 5):  # wider than the scan: only .gitmodules names it
        (deep / f"d{i:05d}").mkdir(parents=True)
    _repo(root / "zz" / "sub")
    (root / ".gitmodules").write_text('[submodule "sub"]\n\tpath = zz/sub\n\turl = ./zz/sub\n')
    config = (root / "zz" / "sub" / ".git" / "config").read_text()
    _raw(box, f"git -C zz/sub config core.fsmonitor '{plant(marker)}'; echo done")
    assert (root / "zz" / "sub" / ".git" / "config").read_text() == config
    person_git_status(root / "zz" / "sub")
    assert not marker.exists()


def test_git_symlink_to_a_git_dir_in_the_root_is_read_only(box: Shell, root: Path, marker: Path) -> None:
    _repo(root / "real")
    os.rename(root / "real" / ".git", root / "real.git")
    os.symlink(root / "real.git", root / "real" / ".git")
    config = (root / "real.git" / "config").read_text()
    _raw(box, f"git -C real config core.fsmonitor '{plant(marker)}'; echo done")
    assert (root / "real.git" / "config").read_text() == config


def test_a_parent_repository_is_unaffected(tmp_path: Path, state_dir: Path, marker: Path) -> None:
    """The root is a folder of a repository; its placeholders must not show in the
    parent's status, and the model's `git init` there must not plant anything."""
    parent = tmp_path / "parent"
    _repo(parent)
    sub = parent / "sub"
    sub.mkdir()
    (sub / "a.txt").write_text("a\n")
    subprocess.run([*GIT, "-C", str(parent), "add", "sub/a.txt"], check=True)
    subprocess.run([*GIT, "-C", str(parent), "commit", "-qm", "sub"], check=True)
    box = open_shell(sub, state_dir)
    seen: list[str] = []
    done = threading.Event()

    def watch() -> None:  # the person's status in the parent while the sandboxed run holds its placeholders
        while not done.is_set():
            seen.append(person_git_status(parent).stdout)
            time.sleep(0.05)

    thread = threading.Thread(target=watch)
    thread.start()
    try:
        _raw(box, f"sleep 0.5; git init -q . ; git config core.fsmonitor '{plant(marker)}'; echo done")
    finally:
        done.set()
        thread.join()
    assert seen and all(s == "" for s in seen), seen  # clean throughout: an empty .git/HEAD folder is not listed
    assert person_git_status(parent).stdout == "" and person_git_status(sub).stdout == ""
    assert sorted(p.name for p in sub.iterdir()) == ["a.txt"]
    assert not marker.exists()


def test_overlapping_runs_keep_the_placeholder_until_the_last_ends(box: Shell, root: Path, marker: Path) -> None:
    results: list[dict] = []
    long = threading.Thread(target=lambda: results.append(
        _raw(box, f"while [ ! -e go ]; do sleep 0.05; done; git init -q .; git config core.fsmonitor "
                  f"'{plant(marker)}'; ls -A .git")))  # fmt: skip
    long.start()
    try:
        deadline = time.monotonic() + 10
        while not (root / ".git").exists() and time.monotonic() < deadline:
            time.sleep(0.02)
        assert (root / ".git").is_dir()  # the long run's placeholder
        _raw(box, "true")  # a second run starts and ends meanwhile
        assert (root / ".git").is_dir()  # still there: the long run holds it
    finally:
        (root / "go").write_text("")
        long.join(20)
    assert results and "README-tooldeck" in results[0]["stdout"]  # still read-only after the short run ended
    assert sorted(p.name for p in root.iterdir()) == ["go"]
    person_git_status(root)
    assert not marker.exists()


def _held_by_a_killed_process(state_dir: Path, root: Path) -> None:
    """A process that holds the placeholders of ``root`` and is killed (kill -9) mid-run."""
    from tooldeck.shell.gitguard import prepare
    from tooldeck.shell.placeholders import Placeholders

    r, w = os.pipe()
    pid = os.fork()
    if pid == 0:  # the child: hold, say so, wait to be killed
        try:
            prepare(Placeholders(state_dir), [str(root)], [str(root)])
            os.write(w, b"held")
            time.sleep(60)
        finally:
            os._exit(0)
    os.close(w)
    assert os.read(r, 4) == b"held"
    os.close(r)
    os.kill(pid, signal.SIGKILL)
    os.waitpid(pid, 0)


def test_a_crash_leftover_is_removed_by_the_next_server(root: Path, state_dir: Path) -> None:
    _held_by_a_killed_process(state_dir, root)
    assert (root / ".git").is_dir() and (root / "HEAD").is_dir()  # left behind by the killed process
    other = state_dir.parent / "other"
    other.mkdir()
    open_shell(other, state_dir)  # a new server on the same state directory sweeps it
    assert sorted(p.name for p in root.iterdir()) == []


def test_a_crash_leftover_is_reused_then_removed_by_the_next_run(
    box: Shell, root: Path, state_dir: Path, marker: Path
) -> None:
    _held_by_a_killed_process(state_dir, root)
    out = _raw(box, f"git init -q . ; git config core.fsmonitor '{plant(marker)}'; ls -A .git")
    assert "README-tooldeck" in out["stdout"]  # the leftover is a placeholder again: read-only
    assert sorted(p.name for p in root.iterdir()) == []
    person_git_status(root)
    assert not marker.exists()


def test_a_leftover_the_person_turned_into_a_repository_is_kept(root: Path, state_dir: Path) -> None:
    _held_by_a_killed_process(state_dir, root)
    subprocess.run([*GIT, "init", "-q", str(root)], check=True)  # the person's git init filled the placeholder
    open_shell(root, state_dir).structured("raw", {"code": "true"})
    assert (root / ".git" / "HEAD").is_file()
