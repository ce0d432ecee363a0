"""git: worktrees, several checkouts, scope=selected, artifacts and the
output budget."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tests.git.gitkit import GitCLI, init_repo
from tests.support.require import require
from tooldeck.catalog import build_toolbox, build_tools
from tooldeck.core.toolbox import Toolbox
from tooldeck.runtime import Runtime


def run(box: Toolbox, args: dict) -> str:
    res = box.call_sync("git", json.dumps(args))
    assert not res.is_error, res.text
    return res.text


@pytest.fixture
def with_worktree(repo: GitCLI, tmp_path: Path) -> Path:
    repo.commit("init", {"a.py": "a\n"})
    wt = tmp_path / "wt-feature"
    repo("worktree", "add", "-q", "-b", "feature", str(wt))
    GitCLI(wt).write("only_in_wt.py", "w\n")
    return wt


def test_main_checkout_lists_its_linked_worktrees(with_worktree: Path, call) -> None:
    out = call.ok("git", {"op": "status"})
    assert f"worktree: main checkout; linked worktrees: {with_worktree} (branch feature)" in out
    assert "only_in_wt.py" not in out


def test_linked_worktree_as_root_and_main_suffix(with_worktree: Path, repo: GitCLI, state_dir: Path) -> None:
    box = build_toolbox(Runtime.for_dirs([with_worktree], state_dir=state_dir))
    here = run(box, {"op": "diff"})
    assert f"worktree: linked checkout (branch feature); main checkout: {repo.path} (branch main)" in here
    assert "?? only_in_wt.py" in here
    explicit = run(box, {"op": "diff", "repo_root": "wt-feature:worktree"})
    assert "?? only_in_wt.py" in explicit
    main = run(box, {"op": "status", "repo_root": ":main"})
    assert f"repo: {repo.path}" in main and "branch main" in main and "only_in_wt.py" not in main


def test_worktree_outside_roots_is_reachable_by_path(with_worktree: Path, call) -> None:
    out = call.ok("git", {"op": "status", "repo_root": str(with_worktree)})
    assert "branch feature" in out and "only_in_wt.py" in out


def test_several_repo_roots(tmp_path: Path, state_dir: Path) -> None:
    one, two = init_repo(tmp_path / "one"), init_repo(tmp_path / "two")
    one.commit("c1", {"x.py": "1\n"})
    two.commit("c2", {"y.py": "2\n"})
    one.write("x.py", "changed\n")
    box = build_toolbox(Runtime.for_dirs([one.path, two.path], state_dir=state_dir))
    out = run(box, {"op": "diff", "repo_roots": ["one", "two"]})
    first, second = out.split("=== two ===")
    assert first.startswith("=== one ===") and "M  x.py" in first
    assert second.strip().endswith("no changes")
    res = box.call_sync("git", json.dumps({"op": "status", "repo_roots": ["one", "nope"]}))
    assert res.is_error


def test_scope_selected_uses_the_selection_provider(repo: GitCLI, runtime: Runtime, box: Toolbox) -> None:
    repo.commit("one", {"a.py": "a\n", "b.py": "b\n", "sub/c.py": "c\n"})
    for name in ("a.py", "b.py", "sub/c.py"):
        repo.write(name, "changed\n")
    selection: list[str] = []
    runtime.provide("selected_paths", lambda: list(selection))
    assert "no selected file" in run(box, {"op": "diff", "scope": "selected"})
    selection += ["b.py", "sub/c.py", "../elsewhere.py"]
    out = run(box, {"op": "diff", "scope": "selected"})
    assert "M  b.py" in out and "M  sub/c.py" in out and "a.py" not in out
    assert "scope: 2 selected path(s)" in out
    status = run(box, {"op": "status", "scope": "selected"})
    assert "b.py" in status and "a.py" not in status
    only_sub = run(box, {"op": "diff", "scope": "selected", "path": "sub"})
    assert "sub/c.py" in only_sub and "b.py" not in only_sub


def test_scope_selected_without_a_selection_domain(repo: GitCLI, root: Path, state_dir: Path) -> None:
    repo.commit("one", {"a.py": "a\n"})
    rt = Runtime.for_dirs([root], state_dir=state_dir)
    box = Toolbox(build_tools(rt, ["tooldeck.tools.git"]))
    assert "no selection is available" in run(box, {"op": "diff", "scope": "selected"})


def test_scope_selected_with_manage_selection(repo: GitCLI, box: Toolbox) -> None:
    require("the selection domain", present="manage_selection" in box,
            how="tooldeck.tools.selection in the catalog (tooldeck/catalog.py)")  # fmt: skip
    repo.commit("one", {"a.py": "a\n", "b.py": "b\n"})
    repo.write("a.py", "A\n")
    repo.write("b.py", "B\n")
    res = box.call_sync("manage_selection", json.dumps({"op": "add", "paths": ["b.py"]}))
    assert not res.is_error, res.text
    out = run(box, {"op": "diff", "scope": "selected"})
    assert "M  b.py" in out and "a.py" not in out


def test_artifacts_written_under_the_state_dir(repo: GitCLI, call, state_dir: Path, root: Path) -> None:
    repo.commit("one", {"src/a.py": "a\n", "b.py": "b\n"})
    repo.write("src/a.py", "a2\n")
    repo.write("b.py", "b\nmore\n")
    repo.write("new.txt", "n\n")
    before = set(root.rglob("*"))
    out = call.ok("git", {"op": "diff", "artifacts": True})
    snaps = list((state_dir / "git-artifacts").iterdir())
    assert len(snaps) == 1 and f"artifacts: {snaps[0]}" in out
    assert set(root.rglob("*")) == before  # nothing written into the workspace
    map_text = (snaps[0] / "MAP.txt").read_text()
    rows = [r.split("\t") for r in map_text.splitlines() if "\t" in r]
    assert {r[2] for r in rows} == {"src/a.py", "b.py", "new.txt"}
    for _status, _stat, path, patch_name in rows:
        patch = (snaps[0] / patch_name).read_text()
        assert patch.startswith(f"diff --git a/{path} b/{path}")
    b_patch = next((snaps[0] / r[3]).read_text() for r in rows if r[2] == "b.py")
    assert "+more" in b_patch and "2 patch" not in out
    assert "3 .patch file(s)" in out


def test_show_artifacts_and_no_changes(repo: GitCLI, call, state_dir: Path) -> None:
    repo.commit("one", {"a.py": "a\n"})
    assert "nothing written" in call.ok("git", {"op": "diff", "artifacts": True})
    assert not (state_dir / "git-artifacts").exists()
    out = call.ok("git", {"op": "show", "artifacts": True})
    snap = next((state_dir / "git-artifacts").iterdir())
    assert "+a" in next(snap.glob("*.patch")).read_text() and str(snap) in out


def test_patches_degrade_to_fit_the_budget(repo: GitCLI, tmp_path: Path, root: Path, state_dir: Path) -> None:
    repo.commit("one", {f"f{i:02d}.py": "".join(f"old {i} {j}\n" for j in range(60)) for i in range(12)})
    for i in range(12):
        repo.write(f"f{i:02d}.py", "".join(f"new {i} {j}\n" for j in range(60)))
    box = build_toolbox(Runtime.for_dirs([root], state_dir=state_dir, budget_tokens=3000))
    out = run(box, {"op": "diff", "detail": "patches"})
    assert "12 files changed, +720 -720" in out  # the listing is always there
    shown = out.count("diff --git ")
    assert 0 < shown < 12
    assert f"patches of {12 - shown} of 12 files left out" in out and "path=<file>" in out
    assert box.count_tokens(out) <= 3000
    full = run(box, {"op": "diff", "detail": "full", "path": "f00.py"})
    assert "+new 0 59" in full and "did not fit" not in full
    degraded = run(box, {"op": "diff", "detail": "full"})
    assert "detail=full (whole functions) did not fit" in degraded and degraded.count("diff --git ") == shown
    one = run(box, {"op": "diff", "detail": "patches", "path": "f11.py"})
    assert "+new 11 0" in one and "left out" not in one


def test_log_patches_degrade_to_fit_the_budget(repo: GitCLI, root: Path, state_dir: Path) -> None:
    for i in range(6):
        repo.commit(f"c{i}", {f"f{i}.py": "".join(f"line {i} {j}\n" for j in range(150))})
    box = build_toolbox(Runtime.for_dirs([root], state_dir=state_dir, budget_tokens=2500))
    out = run(box, {"op": "log", "detail": "patches", "count": 6})
    for i in range(6):  # every commit line stays
        assert f"Ada Lovelace: c{i} " in out
    assert "patches of" in out and "left out to fit" in out and "op=show" in out
    assert 0 < out.count("diff --git ") < 6


def test_files_detail_keeps_every_file_line_within_budget(repo: GitCLI, root: Path, state_dir: Path) -> None:
    original = "".join(f"line {j}\n" for j in range(80))
    edited = "".join(f"line {j}{' edited' if j % 6 == 0 else ''}\n" for j in range(80))
    repo.commit("one", {f"m{i:02d}.py": original for i in range(30)})
    for i in range(30):
        repo.write(f"m{i:02d}.py", edited)
    box = build_toolbox(Runtime.for_dirs([root], state_dir=state_dir, budget_tokens=2000))
    out = run(box, {"op": "diff", "detail": "files"})
    assert all(f"M  m{i:02d}.py  +14 -14" in out for i in range(30))
    assert "    @@ -1 +1 @@" in out and "… 2 more hunks" in out
    assert "hunk lists of" in out and "path=<file>" in out
    assert box.count_tokens(out) <= 2000


def test_too_many_files_are_grouped_by_folder(repo: GitCLI, root: Path, state_dir: Path) -> None:
    files = {f"{d}/sub/file_{i:03d}.py": "x\n" for d in ("alpha", "beta", "gamma") for i in range(100)}
    repo.commit("bulk", files)
    box = build_toolbox(Runtime.for_dirs([root], state_dir=state_dir, budget_tokens=1000))
    out = run(box, {"op": "show"})
    assert "300 files changed, +300 -0" in out and "grouped by folder" in out
    assert "alpha/sub/  100 files +100 -0" in out and "file_001.py" not in out
    narrowed = run(box, {"op": "show", "path": "alpha/sub/file_001.py"})
    assert "A  alpha/sub/file_001.py  +1 -0" in narrowed


def test_log_file_lists_degrade_per_commit(repo: GitCLI, root: Path, state_dir: Path) -> None:
    repo.commit("big", {f"big/f{i:03d}.py": "x\n" for i in range(400)})
    repo.commit("small", {"small.py": "s\n"})
    box = build_toolbox(Runtime.for_dirs([root], state_dir=state_dir, budget_tokens=1000))
    out = run(box, {"op": "log", "detail": "files"})
    assert "    small.py  +1 -0" in out and "big/f001.py" not in out
    assert f"[file lists of 1 commit(s) left out to fit the ~900-token budget: {repo.sha('HEAD~1')[:7]}" in out


@pytest.mark.parametrize("detail", ["files", "patches"])
def test_a_diff_that_fits_is_counted_in_a_few_calls(
    repo: GitCLI, root: Path, state_dir: Path, monkeypatch: pytest.MonkeyPatch, detail: str
) -> None:
    """Where the tokenizer is a worker process each count is a round trip:
    a diff whose files all fit is counted as a whole, not once per file."""
    repo.commit("one", {f"f{i:02d}.py": "".join(f"old {i} {j}\n" for j in range(30)) for i in range(30)})
    for i in range(30):
        repo.write(f"f{i:02d}.py", "".join(f"{'new' if j % 7 == 0 else 'old'} {i} {j}\n" for j in range(30)))
    rt = Runtime.for_dirs([root], state_dir=state_dir)
    box = build_toolbox(rt)
    counted: list[int] = []
    real = rt.count_tokens
    monkeypatch.setattr(rt, "count_tokens", lambda text: counted.append(len(text)) or real(text))
    out = run(box, {"op": "diff", "detail": detail})
    assert "30 files changed" in out and "left out" not in out
    assert out.count("@@ -") >= 30
    assert len(counted) <= 6, counted


def test_a_large_diff_is_tokenized_once(
    repo: GitCLI, root: Path, state_dir: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The tool counts its whole result to fit it; the toolbox's output
    budget counts the same text and finds that count (Runtime.count_tokens)."""
    from tooldeck import runtime as runtime_module

    repo.commit("one", {f"f{i:02d}.py": "".join(f"old {i} {j}\n" for j in range(60)) for i in range(20)})
    for i in range(20):
        repo.write(f"f{i:02d}.py", "".join(f"new {i} {j}\n" for j in range(60)))
    box = build_toolbox(Runtime.for_dirs([root], state_dir=state_dir))
    large: list[int] = []
    real = runtime_module.count_texts
    monkeypatch.setattr(
        runtime_module, "count_texts", lambda enc, texts: large.extend(map(len, texts)) or real(enc, texts)
    )
    out = run(box, {"op": "diff", "detail": "patches"})
    assert out.count("diff --git ") == 20 and "left out" not in out and len(out) > 20_000
    assert large == [len(out)]
