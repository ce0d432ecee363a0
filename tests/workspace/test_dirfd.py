"""The one walker from the root (workspace/dirfd.py) and the walk built on it."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from tooldeck.core.errors import ToolError
from tooldeck.workspace.dirfd import components, open_beneath, open_parent, regular_files
from tooldeck.workspace.ignore import IgnoreRules
from tooldeck.workspace.walk import MAX_HELD_FDS, walk_files


def _code(fn, *args, **kwargs) -> str:  # type: ignore[no-untyped-def]
    with pytest.raises(ToolError) as info:
        fn(*args, **kwargs)
    return info.value.code


def test_components_are_separator_aware(tmp_path: Path) -> None:
    root = str(tmp_path / "root")
    assert components(root, root + "/a/b.txt") == ["a", "b.txt"]
    assert components(root, root) == []
    assert _code(components, root, root + "-evil/x") == "outside_roots"
    assert _code(components, root, "/etc/passwd") == "outside_roots"
    assert _code(components, root, root + "/a/../../x") == "outside_roots"


def test_open_parent_for_writers(tmp_path: Path) -> None:
    (tmp_path / "a").mkdir()
    fd, name = open_parent(str(tmp_path), str(tmp_path / "a" / "new.txt"))
    try:
        assert name == "new.txt" and os.fstat(fd).st_ino == (tmp_path / "a").stat().st_ino
    finally:
        os.close(fd)
    fd, name = open_parent(str(tmp_path), str(tmp_path / "x" / "y" / "z.txt"), create=True)
    os.close(fd)
    assert (tmp_path / "x" / "y").is_dir() and name == "z.txt"
    os.symlink(tmp_path / "a", tmp_path / "link")
    assert _code(open_parent, str(tmp_path), str(tmp_path / "link" / "f.txt")) == "denied"


def test_loops_and_links_are_named(tmp_path: Path) -> None:
    os.symlink(tmp_path / "l2", tmp_path / "l1")
    os.symlink(tmp_path / "l1", tmp_path / "l2")
    with pytest.raises(ToolError) as info:
        open_beneath(str(tmp_path), str(tmp_path / "l1"), "l1")
    err = info.value
    assert err.code == "invalid_arguments" and "loop" in err.message and err.details.get("loop")
    (tmp_path / "t.txt").write_text("x")
    os.symlink(tmp_path / "t.txt", tmp_path / "alias")
    assert _code(open_beneath, str(tmp_path), str(tmp_path / "alias"), "alias") == "denied"


def test_regular_files_keeps_only_what_is_reached_without_a_link(tmp_path: Path) -> None:
    root, outside = tmp_path / "root", tmp_path / "outside"
    (root / "d").mkdir(parents=True)
    outside.mkdir()
    (root / "d" / "f.txt").write_text("in")
    (outside / "s.txt").write_text("out")
    os.symlink(outside, root / "ln")
    os.mkfifo(root / "d" / "pipe")
    got = regular_files(str(root), ["d/f.txt", "ln/s.txt", "d/pipe", "d/missing", "../outside/s.txt"])
    assert got == {"d/f.txt"}


def test_walk_deeper_than_the_held_descriptors(tmp_path: Path) -> None:
    deep = tmp_path
    for i in range(MAX_HELD_FDS + 20):
        deep = deep / f"d{i}"
    deep.mkdir(parents=True)
    (deep / "bottom.txt").write_text("x")
    (tmp_path / "top.txt").write_text("x")
    files = list(walk_files(IgnoreRules(str(tmp_path))))
    assert "top.txt" in files and any(f.endswith("/bottom.txt") for f in files), files


def test_open_beneath_never_opens_the_state_directory(tmp_path: Path) -> None:
    """Defence in depth below path resolution: even a caller that skipped it
    cannot open a file of a hidden (state) folder inside the root."""
    from tooldeck.workspace.hidden import hide

    state = tmp_path / "state"
    state.mkdir()
    (state / "journal.key").write_bytes(b"k" * 32)
    hide(state)
    for path, directory in ((state / "journal.key", False), (state, True)):
        with pytest.raises(ToolError) as err:
            open_beneath(str(tmp_path), str(path), "state", directory=directory)
        assert err.value.code == "outside_roots"


def _outcome(root: Path, target: Path, directory: bool = False) -> str:
    try:
        fd = open_beneath(str(root), str(target), target.name, directory=directory)
    except ToolError as err:
        return err.code
    try:
        st = os.fstat(fd)
        return f"ino {st.st_ino}"
    finally:
        os.close(fd)


@pytest.mark.skipif(not hasattr(os, "mkfifo"), reason="needs FIFOs")
def test_one_call_open_and_the_walk_agree(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Where openat2 is available a read opens its path in one call
    (RESOLVE_BENEATH | RESOLVE_NO_SYMLINKS); it reaches exactly what the
    component walk reaches, and refuses what the walk refuses."""
    from tooldeck.workspace import dirfd

    root, outside = tmp_path / "root", tmp_path / "outside"
    (root / "a" / "b").mkdir(parents=True)
    outside.mkdir()
    (root / "a" / "b" / "f.txt").write_text("inside")
    (outside / "secret.txt").write_text("outside")
    os.symlink(outside, root / "a" / "out")  # a folder link leading out
    os.symlink(root / "a" / "b", root / "a" / "in")  # a folder link staying in
    os.symlink("f.txt", root / "a" / "b" / "alias")  # a final link
    os.mkfifo(root / "a" / "fifo")
    cases = [
        (root / "a" / "b" / "f.txt", False),
        (root / "a" / "b", True),
        (root / "a" / "out" / "secret.txt", False),
        (root / "a" / "in" / "f.txt", False),
        (root / "a" / "b" / "alias", False),
        (root / "a" / "missing.txt", False),
        (root / "a" / "b" / "f.txt" / "x", False),
        (root / "a" / "fifo", False),  # opened without waiting (O_NONBLOCK); the reader's fstat refuses it
    ]
    fast = [_outcome(root, p, d) for p, d in cases]
    if dirfd._OPENAT2.call is None:
        pytest.skip("no openat2 here: only the walk runs")
    opened: list[str] = []
    real = dirfd._OPENAT2.open
    monkeypatch.setattr(dirfd._OPENAT2, "open", lambda fd, rel, flags: opened.append(rel) or real(fd, rel, flags))
    assert [_outcome(root, p, d) for p, d in cases] == fast
    assert "a/b/f.txt" in opened
    monkeypatch.setattr(dirfd._OPENAT2, "call", None)
    walked = [_outcome(root, p, d) for p, d in cases]
    assert walked == fast
    assert fast[0] == f"ino {(root / 'a' / 'b' / 'f.txt').stat().st_ino}"
    assert fast[2] == "denied" and fast[3] == "denied" and fast[4] == "denied"
