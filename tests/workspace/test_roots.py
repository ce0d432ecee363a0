"""Roots and path resolution (SPEC §3): ids, containment, multi-root rules."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from tooldeck.core.errors import ToolError
from tooldeck.workspace.roots import PATH_MAX, Root, Workspace, make_root, short


def err(fn, *args, **kwargs) -> ToolError:  # type: ignore[no-untyped-def]
    with pytest.raises(ToolError) as info:
        fn(*args, **kwargs)
    return info.value


@pytest.fixture
def two(tmp_path: Path) -> tuple[Workspace, Path, Path]:
    a, b = tmp_path / "alpha", tmp_path / "beta"
    a.mkdir()
    b.mkdir()
    (a / "only_a.txt").write_text("a")
    (b / "only_b.txt").write_text("b")
    (a / "both.txt").write_text("a")
    (b / "both.txt").write_text("b")
    return Workspace.from_dirs([a, b]), a, b


def test_make_root_canonicalises_and_refuses_a_missing_directory(tmp_path: Path) -> None:
    real = tmp_path / "real"
    real.mkdir()
    (tmp_path / "alias").symlink_to(real)
    root = make_root(tmp_path / "alias", description="docs", read_only=True)
    assert root.path == str(real.resolve()) and root.id == "real"
    assert root.description == "docs" and root.read_only
    with pytest.raises(FileNotFoundError):
        make_root(tmp_path / "missing")
    (tmp_path / "file").write_text("x")
    with pytest.raises(FileNotFoundError):
        make_root(tmp_path / "file")


def test_root_ids_are_unique(tmp_path: Path) -> None:
    d1, d2 = tmp_path / "x" / "src", tmp_path / "y" / "src"
    d1.mkdir(parents=True)
    d2.mkdir(parents=True)
    ws = Workspace.from_dirs([d1, d2])
    assert [r.id for r in ws.roots] == ["src", "src-2"]
    with pytest.raises(ValueError):
        Workspace([Root("a", str(d1)), Root("a", str(d2))])
    with pytest.raises(ValueError):
        Workspace([])


def test_containment_is_separator_aware() -> None:
    root = Root("r", "/x/root")
    assert root.contains("/x/root") and root.contains("/x/root/a/b")
    assert not root.contains("/x/root-evil") and not root.contains("/x/root-evil/a")
    assert not root.contains("/x/roo") and not root.contains("/x")
    slash = Root("all", "/")
    assert slash.contains("/etc/hosts") and slash.relative("/etc/hosts") == "etc/hosts"
    assert root.relative("/x/root") == "." and root.relative("/x/root/a/b") == "a/b"


def test_relative_path_resolves_against_the_first_root_then_where_it_exists(two) -> None:  # type: ignore[no-untyped-def]
    ws, a, b = two
    assert ws.resolve("both.txt").abs == str(a.resolve() / "both.txt")
    assert ws.resolve("only_b.txt").abs == str(b.resolve() / "only_b.txt")
    new = ws.resolve("new.txt", must_exist=False)
    assert new.root.id == "alpha" and not new.exists


def test_named_root_and_its_rules(two) -> None:  # type: ignore[no-untyped-def]
    ws, a, b = two
    rp = ws.resolve("both.txt", root="beta")
    assert rp.abs == str(b.resolve() / "both.txt") and rp.rel == "both.txt" and rp.root.id == "beta"
    e = err(ws.resolve, "x", root="gamma")
    assert e.code == "invalid_arguments" and "alpha" in e.message and "beta" in e.message
    e = err(ws.resolve, str(a / "both.txt"), root="beta")
    assert e.code == "invalid_arguments" and "relative" in e.message


def test_absolute_path_picks_its_containing_root(two) -> None:  # type: ignore[no-untyped-def]
    ws, _a, b = two
    rp = ws.resolve(str(b / "only_b.txt"))
    assert rp.root.id == "beta" and rp.rel == "only_b.txt"
    assert ws.display(rp.abs) == rp.abs  # outside the first root: shown absolute
    assert ws.display(ws.resolve("only_a.txt").abs) == "only_a.txt"


def test_nested_roots_pick_the_most_specific(tmp_path: Path) -> None:
    outer = tmp_path / "outer"
    inner = outer / "inner"
    inner.mkdir(parents=True)
    (inner / "f.txt").write_text("x")
    ws = Workspace([make_root(outer, "outer"), make_root(inner, "inner", read_only=True)])
    rp = ws.resolve(str(inner / "f.txt"))
    assert rp.root.id == "inner" and rp.rel == "f.txt"
    assert err(ws.resolve, str(inner / "f.txt"), write=True).code == "read_only"


def test_new_path_is_judged_by_its_nearest_existing_parent(tmp_path: Path) -> None:
    root, outside = tmp_path / "root", tmp_path / "outside"
    root.mkdir()
    outside.mkdir()
    (root / "real").mkdir()
    (root / "inlink").symlink_to(root / "real")
    (root / "outlink").symlink_to(outside)
    ws = Workspace.from_dirs([root])
    rp = ws.resolve("inlink/a/b/new.txt", must_exist=False)
    assert rp.abs == str(root.resolve() / "real" / "a" / "b" / "new.txt") and rp.rel == "real/a/b/new.txt"
    assert err(ws.resolve, "outlink/a/new.txt", must_exist=False).code == "outside_roots"
    assert err(ws.resolve, "new/../../outside/x", must_exist=False).code == "outside_roots"


def test_bad_paths_are_invalid_arguments_naming_the_field(tmp_path: Path) -> None:
    ws = Workspace.from_dirs([tmp_path])
    for bad in ("", "   ", "a\x00b", "x\ud800y", "a" * PATH_MAX):
        e = err(ws.resolve, bad, field_name="new_path")
        assert e.code == "invalid_arguments" and "`new_path`" in e.message, bad
        assert len(e.message) < 400  # long input is quoted shortened


def test_missing_file_is_not_found_with_a_next_step(tmp_path: Path) -> None:
    ws = Workspace.from_dirs([tmp_path])
    e = err(ws.resolve, "nope/missing.txt")
    assert e.code == "not_found" and "read_directory" in e.message


def test_write_refuses_a_symlink_even_inside(tmp_path: Path) -> None:
    (tmp_path / "target.txt").write_text("x")
    (tmp_path / "link.txt").symlink_to(tmp_path / "target.txt")
    ws = Workspace.from_dirs([tmp_path])
    assert ws.resolve("link.txt").abs == str(tmp_path.resolve() / "target.txt")  # reads follow
    e = err(ws.resolve, "link.txt", write=True)
    assert e.code == "denied" and "target.txt" in e.message


def test_describe_roots_lists_id_path_flag_and_description(tmp_path: Path) -> None:
    ws = Workspace([make_root(tmp_path, "docs", description="Project documentation", read_only=True)])
    text = ws.describe_roots()
    assert "docs" in text and str(tmp_path.resolve()) in text
    assert "read-only" in text and "Project documentation" in text


def test_short_keeps_both_ends() -> None:
    long = "a" * 500 + "END"
    s = short(long)
    assert len(s) <= 160 and s.endswith("END'") and s.startswith("'aaa")
    assert short("x.txt") == "'x.txt'"


def test_relative_of_symlinked_root_directory(tmp_path: Path) -> None:
    real = tmp_path / "real"
    real.mkdir()
    (real / "f.txt").write_text("x")
    (tmp_path / "via").symlink_to(real)
    ws = Workspace.from_dirs([tmp_path / "via"])
    rp = ws.resolve(str(tmp_path / "via" / "f.txt"))
    assert rp.rel == "f.txt" and os.path.samefile(rp.abs, real / "f.txt")


def _outcome(ws: Workspace, path: str, **kw):  # type: ignore[no-untyped-def]
    """What resolving ``path`` gives: the resolved fields, or the error's code and message."""
    try:
        rp = ws.resolve(path, must_exist=False, write=True, **kw)
    except ToolError as exc:
        return ("error", exc.code, exc.message)
    return (rp.root.id, rp.abs, rp.rel, rp.exists)


def test_resolving_with_a_folder_cache_answers_as_without_it(tmp_path: Path) -> None:
    """The cache of one call's folders (an 800-file patch resolved each of its
    10 folders 80 times) gives every path the answer of a whole realpath:
    links as the last name, folder links inside and out, ``..``, missing
    folders and files, a file used as a folder."""
    root, outside = tmp_path / "root", tmp_path / "outside"
    (root / "pkg" / "sub").mkdir(parents=True)
    outside.mkdir()
    (outside / "secret.py").write_text("s = 1\n")
    (root / "pkg" / "a.py").write_text("a = 1\n")
    (root / "pkg" / "sub" / "b.py").write_text("b = 1\n")
    (root / "pkg" / "link.py").symlink_to(root / "pkg" / "a.py")
    (root / "pkg" / "out.py").symlink_to(outside / "secret.py")
    (root / "inner").symlink_to(root / "pkg")
    (root / "away").symlink_to(outside)
    ws = Workspace([make_root(root)])
    paths = [
        "pkg/a.py",
        "pkg/sub/b.py",
        "pkg/new.py",
        "pkg/link.py",
        "pkg/out.py",
        "inner/a.py",
        "inner/sub/b.py",
        "inner/new.py",
        "away/secret.py",
        "away/new.py",
        "pkg/sub/../a.py",
        "pkg/..",
        "pkg/.",
        "missing/x.py",
        "pkg/a.py/x.py",
        "pkg/sub/",
        str(root / "pkg" / "a.py"),
        str(outside / "secret.py"),
    ]
    folders: dict[str, str] = {}
    for _ in range(2):  # the second round answers from a full cache
        for p in paths:
            assert _outcome(ws, p, folders=folders) == _outcome(ws, p), p
    assert folders  # the cache was used
