"""How many git processes a diff costs, and that the cheaper paths show
exactly what the longer ones did (issue 35: a diff ran eight git processes)."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest

from tests.git.gitkit import GitCLI
from tooldeck.confine import helpers
from tooldeck.git import changes

BODY = "def compute(values):\n" + "".join(f"    step_{i} = {i}\n" for i in range(12)) + "    return values\n"


@pytest.fixture
def worked(repo: GitCLI) -> GitCLI:
    """Edited, renamed, deleted, staged and untracked files."""
    repo.commit("one", {f"pkg/m{i}.py": BODY.replace("values", f"values_{i}") for i in range(6)})
    repo.commit("two", {"pkg/m4.py": BODY.replace("return", "return  ")})
    repo.write("pkg/m0.py", BODY.replace("values", "values_0").replace("step_3 = 3", "step_3 = 33"))
    repo("mv", "pkg/m1.py", "pkg/moved one.py")
    (repo.path / "pkg" / "m2.py").unlink()
    repo.write("pkg/m3.py", "replaced\n")
    repo("add", "pkg/m3.py")
    repo.write("new.py", "print('new')\n")
    return repo


@pytest.fixture
def spawned(monkeypatch: pytest.MonkeyPatch) -> Iterator[list[list[str]]]:
    """The argv of every git process started (recorded, then started as usual)."""
    seen: list[list[str]] = []
    real = helpers.popen

    def recording(policy: Any, argv: Any, **kw: Any) -> Any:
        seen.append(list(argv))
        return real(policy, argv, **kw)

    monkeypatch.setattr(helpers, "popen", recording)
    yield seen


def _git_ops(seen: list[list[str]]) -> list[str]:
    ops = []
    for argv in seen:
        rest = argv[2:]
        while rest and rest[0] == "-c":
            rest = rest[2:]
        ops.append(rest[0] if rest else "?")
    return ops


@pytest.mark.parametrize("detail", ["summary", "files", "patches"])
def test_a_diff_runs_one_git_diff_and_few_processes(worked: GitCLI, call, spawned, detail: str) -> None:
    out = call.ok("git", {"op": "diff", "detail": detail})
    assert "pkg/m0.py" in out and "new.py" in out
    ops = _git_ops(spawned)
    assert ops.count("diff") == 1, ops
    # discovery (HEAD and branch included), filter check, the diff, untracked files, and the blob check
    assert len(ops) <= 5, ops


@pytest.mark.parametrize("detail", ["files", "patches", "full"])
@pytest.mark.parametrize("compare", ["uncommitted", "staged", "last"])
def test_patches_from_the_listing_equal_those_fetched_apart(
    worked: GitCLI, call, monkeypatch: pytest.MonkeyPatch, detail: str, compare: str
) -> None:
    args = {"op": "diff", "detail": detail, "compare": compare}
    together = call.ok("git", args)
    monkeypatch.setattr(changes, "MAX_PRELOAD_BYTES", 10)  # every listing's patches now "too large"
    apart = call.ok("git", args)
    assert together == apart
    assert "@@" in together


def test_detached_head_and_branch_come_from_discovery(worked: GitCLI, call) -> None:
    assert f"(branch {worked('symbolic-ref', '--short', 'HEAD').strip()})" in call.ok("git", {"op": "diff"})
    worked("checkout", "-q", "--detach")
    out = call.ok("git", {"op": "diff"})
    assert "(detached HEAD)" in out and f"HEAD {worked.sha()[:7]} → working tree" in out


@pytest.mark.parametrize("detail", ["files", "patches"])
def test_a_repeated_diff_asks_no_discovery(worked: GitCLI, call, spawned, detail: str) -> None:
    """What discovery found is kept while the files it depends on are
    unchanged (tooldeck.git.discovery): the call after runs the diff and the
    untracked listing only, and shows the same."""
    first = call.ok("git", {"op": "diff", "detail": detail})
    for _ in range(2):  # the first call may learn of included configuration files it had not snapshotted
        spawned.clear()
        again = call.ok("git", {"op": "diff", "detail": detail})
    assert again == first
    ops = _git_ops(spawned)
    assert "rev-parse" not in ops and "config" not in ops, ops
    assert ops.count("diff") == 1 and len(ops) <= 3, ops
    worked.commit("moved on")
    after = call.ok("git", {"op": "diff", "detail": detail})
    assert f"HEAD {worked.sha()[:7]} → working tree" in after


@pytest.fixture
def tricky(worked: GitCLI) -> GitCLI:
    """On top of ``worked``: lines that read like patch headers, a binary
    file, a type change, a mode change, CRLF lines and a missing final newline."""
    worked.commit(
        "tricky",
        {
            "notes.md": "-- a\n++ b\n--- c\n+++ d\n@@ e\nkeep\n",
            "blob.bin": "\0\1\2 old",
            "link.txt": "target\n",
            "crlf.txt": "one\r\ntwo\r\n",
            "tail.txt": "no newline",
            "tool.sh": "echo hi\n",
        },
    )
    worked.write("notes.md", "-- a\n++ B\n--- C\n+++ d\n@@ E\nkeep\n-- added\n")
    (worked.path / "blob.bin").write_bytes(b"\0\1\2 new, longer")
    (worked.path / "link.txt").unlink()
    (worked.path / "link.txt").symlink_to("notes.md")
    worked.write("crlf.txt", "one\r\nTWO\r\nthree\r\n")
    worked.write("tail.txt", "no newline, still\nand more")
    (worked.path / "tool.sh").chmod(0o755)
    return worked


@pytest.mark.parametrize("detail", ["summary", "files", "patches", "full"])
@pytest.mark.parametrize("compare", ["uncommitted", "staged", "last", "back:2"])
def test_counts_read_off_the_patches_equal_numstat(
    tricky: GitCLI, call, monkeypatch: pytest.MonkeyPatch, detail: str, compare: str
) -> None:
    """The call that brings the patches counts lines from them (no
    --numstat); the listing alone asks git's --numstat: same output."""
    args = {"op": "diff", "detail": detail, "compare": compare}
    together = call.ok("git", args)
    monkeypatch.setattr(changes, "MAX_PRELOAD_BYTES", 10)
    assert call.ok("git", args) == together


def test_patch_counts_match_git_numstat(tricky: GitCLI) -> None:
    numstat = {}
    for line in tricky("diff", "--numstat", "HEAD").splitlines():
        added, deleted, path = line.split("\t")
        numstat[path] = (None, None) if added == "-" else (int(added), int(deleted))
    patches = changes.split_patches(tricky("diff", "HEAD"))
    counted: dict[str, tuple[int | None, int | None]] = {}
    for chunk in patches:
        path = chunk.split("\n", 1)[0].rsplit(" b/", 1)[1]
        a, d = changes.patch_counts(chunk)
        before = counted.get(path, (0, 0))
        counted[path] = (None, None) if a is None else (before[0] + a, (before[1] or 0) + (d or 0))  # type: ignore[operator]
    assert {"notes.md", "blob.bin", "link.txt", "crlf.txt", "tail.txt"} <= set(numstat)
    assert counted == numstat


def test_a_type_change_shows_both_halves_of_its_patch(tricky: GitCLI, call) -> None:
    out = call.ok("git", {"op": "diff", "detail": "patches", "path": "link.txt"})
    assert "T  link.txt  +1 -1" in out
    assert "deleted file mode 100644" in out and "-target" in out
    assert "new file mode 120000" in out and "+notes.md" in out
