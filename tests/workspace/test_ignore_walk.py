"""Ignore rules and the walker, checked against git itself where git decides."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from pathspec import GitIgnoreSpec

from tooldeck.workspace.ignore import DirSpec, IgnoreRules
from tooldeck.workspace.walk import walk, walk_files


def write(root: Path, rel: str, text: str = "x\n") -> None:
    p = root / rel
    p.parent.mkdir(parents=True, exist_ok=True)
    p.write_text(text)


@pytest.fixture
def repo(tmp_path: Path) -> Path:
    root = tmp_path / "repo"
    files = [
        "README.md",
        "app.log",
        "keep.log",
        "src/main.py",
        "src/gen.tmp",
        "src/nested/deep.py",
        "src/nested/also.tmp",
        "src/nested/important.tmp",
        "gen/out.js",
        "lib/gen/inner.js",
        "docs/site/page.html",
        "out",
        "dist2/x.txt",
        "notes/todo.md",
        "notes/draft.md",
        "weird name [1].txt",
    ]
    for rel in files:
        write(root, rel)
    write(root, ".gitignore", "*.log\n!keep.log\n/gen/\ndocs/site\n# comment\n\nout/\n")
    write(root, "src/.gitignore", "*.tmp\n")
    write(root, "src/nested/.gitignore", "!important.tmp\n")
    write(root, "notes/.gitignore", "draft.md\n")
    return root


def git_admitted(root: Path) -> set[str]:
    """Files git considers not ignored (its own reference implementation)."""
    subprocess.run(["git", "init", "-q", str(root)], check=True)
    out = subprocess.run(
        ["git", "-C", str(root), "ls-files", "--others", "--exclude-standard", "-z"],
        check=True,
        capture_output=True,
    ).stdout
    return {p for p in out.decode().split("\0") if p}


@pytest.mark.requires("git")
def test_walk_admits_exactly_what_git_admits(repo: Path) -> None:
    expected = git_admitted(repo)
    shutil.rmtree(repo / ".git")  # our deny list drops .git anyway; compare like for like
    assert set(walk_files(IgnoreRules(str(repo)))) == expected
    assert "keep.log" in expected and "src/nested/important.tmp" in expected and "out" in expected
    assert "lib/gen/inner.js" in expected and "gen/out.js" not in expected


@pytest.mark.requires("git")
def test_is_ignored_agrees_with_the_walk(repo: Path) -> None:
    rules = IgnoreRules(str(repo))
    admitted = set(walk_files(rules))
    for dirpath, _dirs, files in os.walk(repo):
        for name in files:
            rel = os.path.relpath(os.path.join(dirpath, name), repo).replace(os.sep, "/")
            assert rules.is_ignored(rel) == (rel not in admitted), rel


def test_git_info_exclude_applies_without_any_gitignore(tmp_path: Path) -> None:
    write(tmp_path, "a.txt")
    write(tmp_path, "secret.env")
    write(tmp_path, ".git/info/exclude", "*.env\n")
    rules = IgnoreRules(str(tmp_path))
    assert set(walk_files(rules)) == {"a.txt"}
    assert rules.is_ignored("secret.env")


def test_tooldeckignore_and_deny_list(tmp_path: Path) -> None:
    for rel in ("keep.py", "skip.me", "node_modules/x/index.js", "__pycache__/m.pyc", "a.pyc", ".venv/bin/py"):
        write(tmp_path, rel)
    write(tmp_path, ".tooldeckignore", "*.me\n")
    files = set(walk_files(IgnoreRules(str(tmp_path))))
    assert files == {"keep.py", ".tooldeckignore"}
    everything = set(walk_files(IgnoreRules(str(tmp_path)), respect_ignore=False))
    assert "node_modules/x/index.js" in everything and "skip.me" in everything


def test_rules_are_reread_when_a_gitignore_changes(tmp_path: Path) -> None:
    write(tmp_path, "a.txt")
    write(tmp_path, "b.txt")
    rules = IgnoreRules(str(tmp_path))
    assert set(walk_files(rules)) == {"a.txt", "b.txt"}
    write(tmp_path, ".gitignore", "a.txt\n")
    assert set(walk_files(rules)) == {"b.txt", ".gitignore"}
    write(tmp_path, ".gitignore", "b.txt\n# longer now\n")
    assert set(walk_files(rules)) == {"a.txt", ".gitignore"}


def test_nested_rule_files_are_found_among_many_names_and_forgotten_when_removed(tmp_path: Path) -> None:
    # the walker looks rule files up in its sorted listing: names that sort around them must not hide them
    names = ("-dash.txt", ".aaa", ".gitignore-not", ".tooldeckignore.bak", "_x.txt", "z.txt", "skip.me", "drop.log")
    for name in names:
        write(tmp_path, f"sub/{name}")
    write(tmp_path, "sub/.gitignore", "*.log\n")
    write(tmp_path, "sub/.tooldeckignore", "*.me\n")
    rules = IgnoreRules(str(tmp_path))
    listed = set(walk_files(rules))
    assert "sub/drop.log" not in listed and "sub/skip.me" not in listed
    assert {"sub/-dash.txt", "sub/.aaa", "sub/.gitignore-not", "sub/.tooldeckignore.bak", "sub/z.txt"} <= listed
    (tmp_path / "sub" / ".gitignore").unlink()
    listed = set(walk_files(rules))
    assert "sub/drop.log" in listed and "sub/skip.me" not in listed


def test_walk_order_depth_and_entries(tmp_path: Path) -> None:
    for rel in ("b.txt", "a/z.txt", "a/m/n.txt", "c/d.txt"):
        write(tmp_path, rel)
    rules = IgnoreRules(str(tmp_path))
    entries = list(walk(rules))
    assert [e.rel for e in entries] == ["a", "a/m", "a/m/n.txt", "a/z.txt", "b.txt", "c", "c/d.txt"]
    assert [e.depth for e in entries] == [1, 2, 3, 2, 1, 1, 2]
    assert [e.rel for e in walk(rules, max_depth=1)] == ["a", "b.txt", "c"]
    assert list(walk(rules, max_depth=0)) == []
    assert [e.rel for e in walk(rules, "a", include_dirs=False)] == ["a/m/n.txt", "a/z.txt"]
    sized = {e.rel: e.size for e in walk(rules, sizes=True) if not e.is_dir}
    assert sized["b.txt"] == 2


def test_walk_never_follows_symlinked_dirs_and_survives_loops(tmp_path: Path) -> None:
    root, outside = tmp_path / "root", tmp_path / "outside"
    write(outside, "secret.txt")
    write(root, "real/f.txt")
    (root / "out").symlink_to(outside)
    (root / "loop").symlink_to(root)
    (root / "real" / "up").symlink_to(root / "real")
    entries = {e.rel: e for e in walk(IgnoreRules(str(root)))}
    assert set(entries) == {"real", "real/f.txt", "real/up", "out", "loop"}
    assert entries["out"].is_symlink and not entries["out"].is_dir


def test_walk_skips_a_directory_swapped_for_a_symlink_mid_walk(tmp_path: Path) -> None:
    root, outside = tmp_path / "root", tmp_path / "outside"
    write(outside, "secret.txt")
    write(root, "a/first.txt")
    write(root, "b/second.txt")
    seen = []
    for entry in walk(IgnoreRules(str(root))):
        seen.append(entry.rel)
        if entry.rel == "a/first.txt":  # b was listed (as a dir) but not entered yet
            shutil.rmtree(root / "b")
            (root / "b").symlink_to(outside)
    assert "b/secret.txt" not in seen and "b" in seen


def test_walk_of_a_deep_tree_has_no_recursion_limit(tmp_path: Path) -> None:
    rel = "/".join(["d"] * 1200)  # deeper than Python's recursion limit
    fd = os.open(tmp_path, os.O_RDONLY)
    for _ in range(1200):  # os.makedirs itself recurses
        os.mkdir("d", dir_fd=fd)
        nxt = os.open("d", os.O_RDONLY, dir_fd=fd)
        os.close(fd)
        fd = nxt
    os.close(fd)
    (tmp_path / rel / "leaf.txt").write_text("x")
    try:
        files = list(walk_files(IgnoreRules(str(tmp_path))))
        assert files == [rel + "/leaf.txt"]
    finally:  # shutil.rmtree (pytest's cleanup) recurses too: remove it bottom-up
        (tmp_path / rel / "leaf.txt").unlink()
        for depth in range(1200, 0, -1):
            os.rmdir(tmp_path / "/".join(["d"] * depth))


PATTERNS = ["*.log", "!keep.log", "build/", "/root_only", "a/**/b", "[abc]x?.py", "doc/*.md", "**/tmp", "\\#x", "z*"]
SEGMENTS = ["a", "b", "build", "keep.log", "x.log", "ax1.py", "tmp", "doc", "r.md", "root_only", "#x", "zz", "q"]


@settings(max_examples=150, deadline=None)
@given(
    patterns=st.lists(st.sampled_from(PATTERNS), min_size=1, max_size=6),
    parts=st.lists(st.sampled_from(SEGMENTS), min_size=1, max_size=4),
    is_dir=st.booleans(),
)
def test_quick_precheck_never_changes_a_decision(patterns: list[str], parts: list[str], is_dir: bool) -> None:
    spec = GitIgnoreSpec.from_lines(patterns)
    fast = DirSpec.build("", spec)
    path = "/".join(parts) + ("/" if is_dir else "")
    assert fast.check(path) == spec.check_file(path).include


@settings(max_examples=150, deadline=None)
@given(
    patterns=st.lists(st.sampled_from(PATTERNS), min_size=1, max_size=6),
    folder=st.lists(st.sampled_from(SEGMENTS), max_size=3),
    names=st.lists(st.sampled_from([*SEGMENTS, "new\nline.log", "doc.md", "xbuild", "a.log.txt"]), max_size=8),
)
def test_a_folder_judged_at_once_equals_each_file_judged_alone(
    patterns: list[str], folder: list[str], names: list[str]
) -> None:
    """The walk decides a folder's files together (a literal of each pattern
    looked for in the names joined, then the quick regex, then pathspec):
    the same verdict as pathspec on each path."""
    from tooldeck.workspace.ignore import ignored_files

    spec = GitIgnoreSpec.from_lines(patterns)
    fast = DirSpec.build("", spec)
    names = sorted(set(names))
    prefix = "/".join(folder) + "/" if folder else ""
    out = ignored_files(prefix, names, [(fast.quick, fast, 0)])
    assert out == {k for k, n in enumerate(names) if spec.check_file(prefix + n).include}


def test_walk_enters_a_mount_point_whose_entry_numbers_another_inode(tmp_path: Path) -> None:
    """A mount point's directory entry (``d_ino``, which the listing reads)
    holds the inode of the folder beneath the mount, not of the mounted
    root the walk opens: the walk checks the name's own inode then, and
    enters it. Run in a private mount namespace (``unshare -rm``)."""
    root = tmp_path / "root"
    write(root, "m/hidden-by-the-mount.txt")
    write(root, "top.txt")
    code = (
        "import sys, os; from tooldeck.workspace.ignore import IgnoreRules;"
        "from tooldeck.workspace.walk import walk_files;"
        "open(os.path.join(sys.argv[1], 'm', 'on-tmpfs.txt'), 'w').write('x');"
        "print(sorted(walk_files(IgnoreRules(sys.argv[1]))))"
    )
    script = 'mount -t tmpfs none "$1/m" && exec "$2" -c "$3" "$1"'
    done = subprocess.run(["unshare", "-rm", "sh", "-c", script, "sh", str(root), sys.executable, code],
                          capture_output=True, text=True, timeout=60)  # fmt: skip
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == str(["m/on-tmpfs.txt", "top.txt"])


def test_a_rule_file_without_a_negation_decides_by_its_quick_regex_alone() -> None:
    """A rule file none of whose patterns re-includes ignores every path one
    of them applies to: its quick regex decides (no pathspec loop), and a
    file with a ``!`` pattern still asks pathspec, whose last match wins."""
    plain = DirSpec.build("", GitIgnoreSpec.from_lines(["*.log", "build/", "# a comment", ""]))
    mixed = DirSpec.build("", GitIgnoreSpec.from_lines(["*.log", "!keep.log"]))
    assert plain.ignores_only and not mixed.ignores_only
    assert plain.check("a/app.log") is True and plain.check("a/build/x.c") is True
    assert plain.check("a/app.txt") is None
    assert mixed.check("keep.log") is False and mixed.check("app.log") is True


@pytest.mark.parametrize(
    ("patterns", "prefix", "names", "ignored"),
    [
        # one literal (".log") in several names: every one of them is found, not only the first
        (["*.log", "build/"], "x/", ["a.log", "b.log", "c.py", "d.log"], {"a.log", "b.log", "d.log"}),
        (["*.log", "!b.log"], "x/", ["a.log", "b.log", "c.py", "d.log"], {"a.log", "d.log"}),
        # the literal is in the folder's path, in none of its names: every name is a candidate
        (["build/"], "src/build/", ["x.c", "y.h"], {"x.c", "y.h"}),
        (["logs/*.txt"], "logs/", ["a.txt", "b.md"], {"a.txt"}),
    ],
)
def test_a_folders_names_are_judged_wherever_a_literal_occurs(
    patterns: list[str], prefix: str, names: list[str], ignored: set[str]
) -> None:
    from tooldeck.workspace.ignore import ignored_files

    spec = GitIgnoreSpec.from_lines(patterns)
    fast = DirSpec.build("", spec)
    assert fast.literals is not None  # the pre-check under test is on
    out = ignored_files(prefix, names, [(fast.quick, fast, 0)])
    assert {names[k] for k in out} == ignored
    assert ignored == {n for n in names if spec.check_file(prefix + n).include}
