"""Adversarial path cases, run through the real file tools.

Layout: ``tmp/root`` is the only root; ``tmp/outside`` and ``tmp/root-evil`` (a
sibling whose name extends the root's) hold secrets. Every case calls a real
tool and then proves containment: the result never shows an outside secret and
nothing outside the root changed (every path under ``tmp`` except ``root/`` is
snapshotted before and after, names, kinds, bytes and link targets).
"""

from __future__ import annotations

import errno
import json
import os
import re
import shutil
import stat
import threading
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

import pytest

from tooldeck.catalog import build_toolbox
from tooldeck.core.toolbox import ToolResult
from tooldeck.runtime import Runtime
from tooldeck.tools.files.read import MAX_BYTES
from tooldeck.workspace.roots import Root, Workspace

SECRET = "TOP-SECRET-OUTSIDE"
EVIL_SECRET = "TOP-SECRET-EVIL"
SAFE_ERRORS = {
    "outside_roots",
    "not_found",
    "denied",
    "invalid_arguments",
    "not_a_file",
    "not_a_directory",
    "binary_file",
    "read_only",
    "already_exists",
}


def tree_state(base: Path, skip: Path) -> dict[str, object]:
    """Everything under ``base`` except ``skip``: kind + bytes / link target."""
    state: dict[str, object] = {}
    for dirpath, dirnames, filenames in os.walk(base):
        d = Path(dirpath)
        if d == skip:
            dirnames[:] = []
            continue
        dirnames[:] = [n for n in dirnames if d / n != skip]
        for name in dirnames + filenames:
            p = d / name
            rel = str(p.relative_to(base))
            st = p.lstat()
            if stat.S_ISLNK(st.st_mode):
                state[rel] = ("link", os.readlink(p))
            elif stat.S_ISDIR(st.st_mode):
                state[rel] = ("dir",)
            elif stat.S_ISREG(st.st_mode):
                state[rel] = ("file", p.read_bytes(), stat.S_IMODE(st.st_mode))
            else:
                state[rel] = ("special", stat.S_IFMT(st.st_mode))
    return state


@dataclass
class Arena:
    base: Path
    root: Path
    outside: Path
    evil: Path
    runtime: Runtime

    def call(self, name: str, args: dict | str) -> ToolResult:
        box = build_toolbox(self.runtime)
        return box.call_sync(name, json.dumps(args) if isinstance(args, dict) else args)


@pytest.fixture
def arena(tmp_path: Path) -> Arena:
    base = tmp_path / "arena"  # the state directory (tmp_path/state) lives outside what is snapshotted
    root, outside, evil = base / "root", base / "outside", base / "root-evil"
    for d in (root, outside / "sub", evil):
        d.mkdir(parents=True)
    (outside / "secret.txt").write_text(SECRET + "\nline two\n")
    (outside / "sub" / "deep.txt").write_text(SECRET + " deep\n")
    (evil / "secret.txt").write_text(EVIL_SECRET + "\n")
    (root / "inside.txt").write_text("hello inside\nsecond line\n")
    (root / "dir").mkdir()
    (root / "dir" / "nested.txt").write_text("nested\n")
    rt = Runtime.for_dirs([root], state_dir=tmp_path / "state")
    return Arena(base, root, outside, evil, rt)


Case = Callable[[Arena], ToolResult]


def contained(arena: Arena, case: Case) -> ToolResult:
    """Run ``case`` and prove nothing outside the root was read or written."""
    before = tree_state(arena.base, arena.root)
    result = case(arena)
    after = tree_state(arena.base, arena.root)
    assert after == before, "something outside the root changed"
    assert SECRET not in result.text and EVIL_SECRET not in result.text, result.text
    if result.is_error:
        assert result.error is not None and result.error.code in SAFE_ERRORS, result.text
    return result


# --------------------------------------------------------------------------
# the cases: (id, setup+call, expected error code or None for "succeeds safely")


def _symlink(arena: Arena, name: str, target: Path | str) -> None:
    os.symlink(target, arena.root / name)


def c_dotdot(a: Arena) -> ToolResult:
    return a.call("read_file", {"file": "../outside/secret.txt"})


def c_dotdot_chain(a: Arena) -> ToolResult:
    return a.call("read_file", {"path": "dir/../../outside/../outside/./secret.txt"})


def c_dotdot_deep(a: Arena) -> ToolResult:
    return a.call("read_file", {"file": "dir/" + "../" * 30 + "etc/passwd"})


def c_dotdot_nonexistent_dirs(a: Arena) -> ToolResult:
    return a.call("read_file", {"file": "nope/nope/../../../outside/secret.txt"})


def c_absolute_outside(a: Arena) -> ToolResult:
    return a.call("read_file", {"file": str(a.outside / "secret.txt")})


def c_absolute_etc(a: Arena) -> ToolResult:
    return a.call("read_file", {"file": "/etc/passwd"})


def c_absolute_in_then_out(a: Arena) -> ToolResult:
    return a.call("read_file", {"file": f"{a.root}/../outside/secret.txt"})


def c_root_param_dotdot(a: Arena) -> ToolResult:
    return a.call("read_file", {"root": a.runtime.workspace.primary.id, "file": "../outside/secret.txt"})


def c_root_param_absolute(a: Arena) -> ToolResult:
    return a.call("read_file", {"root": a.runtime.workspace.primary.id, "file": str(a.outside / "secret.txt")})


def c_sibling_prefix_absolute(a: Arena) -> ToolResult:
    return a.call("read_file", {"file": str(a.evil / "secret.txt")})


def c_sibling_prefix_relative(a: Arena) -> ToolResult:
    return a.call("read_file", {"file": "../root-evil/secret.txt"})


def c_symlinked_file_out(a: Arena) -> ToolResult:
    _symlink(a, "link.txt", a.outside / "secret.txt")
    return a.call("read_file", {"file": "link.txt"})


def c_symlinked_dir_out(a: Arena) -> ToolResult:
    _symlink(a, "ldir", a.outside)
    return a.call("read_file", {"file": "ldir/secret.txt"})


def c_symlink_relative_target_out(a: Arena) -> ToolResult:
    _symlink(a, "rel.txt", "../outside/secret.txt")
    return a.call("read_file", {"file": "rel.txt"})


def c_symlink_chain_out(a: Arena) -> ToolResult:
    _symlink(a, "hop2", a.outside / "secret.txt")
    _symlink(a, "hop1", a.root / "hop2")
    return a.call("read_file", {"file": "hop1"})


def c_symlink_to_sibling(a: Arena) -> ToolResult:
    _symlink(a, "evil", a.evil)
    return a.call("read_file", {"file": "evil/secret.txt"})


def c_symlink_loop(a: Arena) -> ToolResult:
    _symlink(a, "loop1", a.root / "loop2")
    _symlink(a, "loop2", a.root / "loop1")
    return a.call("read_file", {"file": "loop1"})


def c_symlink_self_loop_dir(a: Arena) -> ToolResult:
    _symlink(a, "self", a.root / "self")
    return a.call("read_file", {"file": "self/x/y.txt"})


def c_nul_in_path(a: Arena) -> ToolResult:
    return a.call("read_file", {"file": "inside.txt\x00../../outside/secret.txt"})


def c_fifo(a: Arena) -> ToolResult:
    os.mkfifo(a.root / "fifo")
    return a.call("read_file", {"file": "fifo"})


def c_device(a: Arena) -> ToolResult:
    try:
        os.mknod(a.root / "zero", 0o600 | stat.S_IFCHR, os.makedev(1, 5))
    except PermissionError:
        pytest.skip("creating a device node needs CAP_MKNOD")
    return a.call("read_file", {"file": "zero"})


def c_socket(a: Arena) -> ToolResult:
    import socket

    sock = socket.socket(socket.AF_UNIX)
    path = a.root / "sock"
    try:
        sock.bind(str(path))
    except OSError as exc:
        if exc.errno == errno.ENAMETOOLONG:
            pytest.skip("tmp path too long for a unix socket")
        raise
    try:
        return a.call("read_file", {"file": "sock"})
    finally:
        sock.close()


def c_directory_as_file(a: Arena) -> ToolResult:
    return a.call("read_file", {"file": "dir"})


def c_file_as_directory(a: Arena) -> ToolResult:
    return a.call("read_file", {"file": "inside.txt/x"})


def c_path_too_long(a: Arena) -> ToolResult:
    return a.call("read_file", {"file": "a/" * 3000 + "x.txt"})


def c_name_too_long(a: Arena) -> ToolResult:
    return a.call("file_actions", {"action": "create", "path": "n" * 300, "content": "x"})


def c_invalid_utf8_content(a: Arena) -> ToolResult:
    (a.root / "latin1.txt").write_bytes(b"caf\xe9 au lait\n")
    return a.call("read_file", {"file": "latin1.txt"})


def c_nul_content(a: Arena) -> ToolResult:
    (a.root / "blob.bin").write_bytes(b"ELF\x00\x01\x02")
    return a.call("read_file", {"file": "blob.bin"})


def c_lone_surrogate_path(a: Arena) -> ToolResult:
    return a.call("file_actions", {"action": "create", "path": "x\ud800.txt", "content": "x"})


def c_lone_surrogate_content(a: Arena) -> ToolResult:
    return a.call("file_actions", {"action": "create", "path": "s.txt", "content": "a\ud800b"})


def c_read_directory_dotdot(a: Arena) -> ToolResult:
    return a.call("read_directory", {"path": ".."})


def c_read_directory_symlink_out(a: Arena) -> ToolResult:
    _symlink(a, "ldir", a.outside)
    return a.call("read_directory", {"path": "ldir"})


def c_read_directory_sibling(a: Arena) -> ToolResult:
    return a.call("read_directory", {"path": str(a.evil)})


def c_tree_dotdot(a: Arena) -> ToolResult:
    return a.call("get_file_tree", {"path": "../outside", "mode": "full"})


def c_tree_symlink_dir_path(a: Arena) -> ToolResult:
    _symlink(a, "ldir", a.outside)
    return a.call("get_file_tree", {"path": "ldir", "mode": "full"})


def c_create_dotdot(a: Arena) -> ToolResult:
    return a.call("file_actions", {"action": "create", "path": "../outside/new.txt", "content": "pwned"})


def c_create_absolute_outside(a: Arena) -> ToolResult:
    return a.call("file_actions", {"action": "create", "path": str(a.outside / "new.txt"), "content": "pwned"})


def c_create_sibling(a: Arena) -> ToolResult:
    return a.call("file_actions", {"action": "create", "path": "../root-evil/new.txt", "content": "pwned"})


def c_create_through_symlinked_dir(a: Arena) -> ToolResult:
    _symlink(a, "ldir", a.outside)
    return a.call("file_actions", {"action": "create", "path": "ldir/new.txt", "content": "pwned"})


def c_create_new_parents_through_link(a: Arena) -> ToolResult:
    _symlink(a, "ldir", a.outside)
    return a.call("file_actions", {"action": "create", "path": "ldir/a/b/new.txt", "content": "pwned"})


def c_overwrite_symlinked_file(a: Arena) -> ToolResult:
    _symlink(a, "link.txt", a.outside / "secret.txt")
    args = {"action": "create", "path": "link.txt", "content": "pwned", "if_exists": "overwrite"}
    return a.call("file_actions", args)


def c_overwrite_inside_symlink(a: Arena) -> ToolResult:
    _symlink(a, "alias.txt", a.root / "inside.txt")  # inside, but writes never go through a link
    args = {"action": "create", "path": "alias.txt", "content": "x", "if_exists": "overwrite"}
    return a.call("file_actions", args)


def c_create_dangling_symlink_out(a: Arena) -> ToolResult:
    _symlink(a, "dangling.txt", a.outside / "created-by-attack.txt")
    return a.call("file_actions", {"action": "create", "path": "dangling.txt", "content": "pwned"})


def c_create_dangling_symlink_in(a: Arena) -> ToolResult:
    _symlink(a, "dangling-in.txt", a.root / "target-new.txt")
    return a.call("file_actions", {"action": "create", "path": "dangling-in.txt", "content": "x"})


def c_create_nul(a: Arena) -> ToolResult:
    return a.call("file_actions", {"action": "create", "path": "a\x00b", "content": "x"})


def c_create_over_directory(a: Arena) -> ToolResult:
    return a.call("file_actions", {"action": "create", "path": "dir", "content": "x", "if_exists": "overwrite"})


def c_create_over_fifo(a: Arena) -> ToolResult:
    os.mkfifo(a.root / "fifo")
    return a.call("file_actions", {"action": "create", "path": "fifo", "content": "x", "if_exists": "overwrite"})


def c_delete_dotdot(a: Arena) -> ToolResult:
    return a.call("file_actions", {"action": "delete", "path": "../outside/secret.txt"})


def c_delete_symlink_out(a: Arena) -> ToolResult:
    _symlink(a, "link.txt", a.outside / "secret.txt")
    return a.call("file_actions", {"action": "delete", "path": "link.txt"})


def c_delete_through_symlinked_dir(a: Arena) -> ToolResult:
    _symlink(a, "ldir", a.outside)
    return a.call("file_actions", {"action": "delete", "path": "ldir/secret.txt"})


def c_delete_directory(a: Arena) -> ToolResult:
    return a.call("file_actions", {"action": "delete", "path": "dir"})


def c_delete_root(a: Arena) -> ToolResult:
    return a.call("file_actions", {"action": "delete", "path": "."})


def c_move_to_outside(a: Arena) -> ToolResult:
    return a.call("file_actions", {"action": "move", "path": "inside.txt", "new_path": "../outside/moved.txt"})


def c_move_from_outside(a: Arena) -> ToolResult:
    return a.call("file_actions", {"action": "move", "path": str(a.outside / "secret.txt"), "new_path": "stolen.txt"})


def c_move_to_sibling(a: Arena) -> ToolResult:
    return a.call("file_actions", {"action": "move", "path": "inside.txt", "new_path": str(a.evil / "moved.txt")})


def c_move_into_symlinked_dir(a: Arena) -> ToolResult:
    _symlink(a, "ldir", a.outside)
    return a.call("file_actions", {"action": "move", "path": "inside.txt", "new_path": "ldir/moved.txt"})


def c_move_over_outside_symlink(a: Arena) -> ToolResult:
    _symlink(a, "link.txt", a.outside / "secret.txt")
    args = {"action": "move", "path": "inside.txt", "new_path": "link.txt", "if_exists": "overwrite"}
    return a.call("file_actions", args)


def c_append_dotdot(a: Arena) -> ToolResult:
    return a.call("append_to_file", {"path": "../outside/secret.txt", "content": "pwned"})


def c_append_symlinked_file(a: Arena) -> ToolResult:
    _symlink(a, "link.txt", a.outside / "secret.txt")
    return a.call("append_to_file", {"path": "link.txt", "content": "pwned"})


def c_append_new_through_symlinked_dir(a: Arena) -> ToolResult:
    _symlink(a, "ldir", a.outside)
    return a.call("append_to_file", {"path": "ldir/new.txt", "content": "pwned"})


def c_append_fifo(a: Arena) -> ToolResult:
    os.mkfifo(a.root / "fifo")
    return a.call("append_to_file", {"path": "fifo", "content": "x"})


def c_replace_absolute_outside(a: Arena) -> ToolResult:
    return a.call("find_and_replace", {"path": str(a.outside / "secret.txt"), "find": "line", "replace": "pwned"})


def c_replace_through_symlinked_dir(a: Arena) -> ToolResult:
    _symlink(a, "ldir", a.outside)
    return a.call("find_and_replace", {"path": "ldir/secret.txt", "find": "line", "replace": "pwned"})


def c_replace_sibling(a: Arena) -> ToolResult:
    return a.call("find_and_replace", {"path": "../root-evil/secret.txt", "find": "TOP", "replace": "pwned"})


def c_replace_fifo(a: Arena) -> ToolResult:
    os.mkfifo(a.root / "fifo")
    return a.call("find_and_replace", {"path": "fifo", "find": "a", "replace": "b"})


def c_replace_binary(a: Arena) -> ToolResult:
    (a.root / "blob.bin").write_bytes(b"a\x00b")
    return a.call("find_and_replace", {"path": "blob.bin", "find": "a", "replace": "b"})


CASES: list[tuple[Case, str | None]] = [
    (c_dotdot, "outside_roots"),
    (c_dotdot_chain, "outside_roots"),
    (c_dotdot_deep, "outside_roots"),
    (c_dotdot_nonexistent_dirs, "outside_roots"),
    (c_absolute_outside, "outside_roots"),
    (c_absolute_etc, "outside_roots"),
    (c_absolute_in_then_out, "outside_roots"),
    (c_root_param_dotdot, "outside_roots"),
    (c_root_param_absolute, "invalid_arguments"),
    (c_sibling_prefix_absolute, "outside_roots"),
    (c_sibling_prefix_relative, "outside_roots"),
    (c_symlinked_file_out, "outside_roots"),
    (c_symlinked_dir_out, "outside_roots"),
    (c_symlink_relative_target_out, "outside_roots"),
    (c_symlink_chain_out, "outside_roots"),
    (c_symlink_to_sibling, "outside_roots"),
    (c_symlink_loop, "invalid_arguments"),
    (c_symlink_self_loop_dir, "invalid_arguments"),
    (c_nul_in_path, "invalid_arguments"),
    (c_fifo, "not_a_file"),
    (c_device, "not_a_file"),
    (c_socket, "not_a_file"),
    (c_directory_as_file, "not_a_file"),
    (c_file_as_directory, "not_a_directory"),
    (c_path_too_long, "invalid_arguments"),
    (c_name_too_long, "invalid_arguments"),
    (c_invalid_utf8_content, "binary_file"),
    (c_nul_content, "binary_file"),
    (c_lone_surrogate_path, "invalid_arguments"),
    (c_lone_surrogate_content, "invalid_arguments"),
    (c_read_directory_dotdot, "outside_roots"),
    (c_read_directory_symlink_out, "outside_roots"),
    (c_read_directory_sibling, "outside_roots"),
    (c_tree_dotdot, "outside_roots"),
    (c_tree_symlink_dir_path, "outside_roots"),
    (c_create_dotdot, "outside_roots"),
    (c_create_absolute_outside, "outside_roots"),
    (c_create_sibling, "outside_roots"),
    (c_create_through_symlinked_dir, "outside_roots"),
    (c_create_new_parents_through_link, "outside_roots"),
    (c_overwrite_symlinked_file, "outside_roots"),
    (c_overwrite_inside_symlink, "denied"),
    (c_create_dangling_symlink_out, "outside_roots"),
    (c_create_dangling_symlink_in, "denied"),
    (c_create_nul, "invalid_arguments"),
    (c_create_over_directory, "not_a_file"),
    (c_create_over_fifo, "not_a_file"),
    (c_delete_dotdot, "outside_roots"),
    (c_delete_symlink_out, "outside_roots"),
    (c_delete_through_symlinked_dir, "outside_roots"),
    (c_delete_directory, "not_a_file"),
    (c_delete_root, "not_a_file"),
    (c_move_to_outside, "outside_roots"),
    (c_move_from_outside, "outside_roots"),
    (c_move_to_sibling, "outside_roots"),
    (c_move_into_symlinked_dir, "outside_roots"),
    (c_move_over_outside_symlink, "outside_roots"),
    (c_append_dotdot, "outside_roots"),
    (c_append_symlinked_file, "outside_roots"),
    (c_append_new_through_symlinked_dir, "outside_roots"),
    (c_append_fifo, "not_a_file"),
    (c_replace_absolute_outside, "outside_roots"),
    (c_replace_through_symlinked_dir, "outside_roots"),
    (c_replace_sibling, "outside_roots"),
    (c_replace_fifo, "not_a_file"),
    (c_replace_binary, "binary_file"),
]


@pytest.mark.timeout(20)
@pytest.mark.parametrize(("case", "code"), CASES, ids=[c.__name__[2:] for c, _ in CASES])
def test_case_is_refused_and_nothing_outside_changes(arena: Arena, case: Case, code: str) -> None:
    root_before = tree_state(arena.root, arena.root / "__none__")
    result = contained(arena, case)
    assert result.is_error, result.text
    assert result.error is not None and result.error.code == code, result.text
    # a refused call changes nothing inside the root either (setup aside)
    for rel, value in root_before.items():
        p = arena.root / rel
        if value[0] == "file":
            assert p.read_bytes() == value[1], rel


def test_there_are_at_least_forty_cases() -> None:
    assert len(CASES) >= 40


# --------------------------------------------------------------------------
# cases that succeed, but only inside


def test_symlink_inside_root_is_followed_for_reads(arena: Arena) -> None:
    _symlink(arena, "alias.txt", arena.root / "inside.txt")
    _symlink(arena, "dlink", arena.root / "dir")
    res = contained(arena, lambda a: a.call("read_file", {"file": "alias.txt"}))
    assert "hello inside" in res.text
    res = contained(arena, lambda a: a.call("read_file", {"file": "dlink/nested.txt"}))
    assert "nested" in res.text


def test_tree_and_listing_never_descend_into_symlinked_dirs(arena: Arena) -> None:
    _symlink(arena, "ldir", arena.outside)
    _symlink(arena, "loop", arena.root)
    tree = contained(arena, lambda a: a.call("get_file_tree", {"mode": "full"}))
    assert not tree.is_error, tree.text
    assert "secret.txt" not in tree.text and "deep.txt" not in tree.text
    assert "nested.txt" in tree.text
    listing = contained(arena, lambda a: a.call("read_directory", {"path": "."}))
    assert "ldir" in listing.text and "secret.txt" not in listing.text


def test_huge_single_line_is_cut_not_crashed(arena: Arena) -> None:
    (arena.root / "huge.txt").write_text("é" * MAX_BYTES + "\nsecond\n")
    box = build_toolbox(arena.runtime)
    res = box.call_sync("read_file", '{"file": "huge.txt"}')
    assert not res.is_error, res.text[:300]
    pages = [res.text]
    while "Continue with" in pages[-1]:  # the output budget pages it; follow the cursors
        cursor = re.search(r'"cursor": "(p:[0-9a-f]+)"', pages[-1])
        assert cursor is not None
        pages.append(box.call_sync("read_file", json.dumps({"cursor": cursor.group(1)})).text)
        assert len(pages) < 40
    assert len(pages) > 1 and "é" * 1000 in pages[0]  # the first page is filled, not empty
    whole = "".join(re.sub(r"\n\[output truncated[^\n]*\]$", "", p) for p in pages)
    assert "[File truncated: line 1 cut at" in whole
    body = whole.split("\n", 1)[1].split("\n---\n")[0]
    assert body == "é" * (MAX_BYTES // 2)  # cut at a character boundary, within the byte cap


def test_invalid_utf8_file_name_is_listed_safely(arena: Arena) -> None:
    raw = os.path.join(os.fsencode(arena.root), b"bad-\xff-name.txt")
    with open(raw, "wb") as fh:
        fh.write(b"content\n")
    listing = contained(arena, lambda a: a.call("read_directory", {"path": "."}))
    assert "bad-\\xff-name.txt" in listing.text
    listing.text.encode("utf-8")  # valid UTF-8 on the wire
    tree = contained(arena, lambda a: a.call("get_file_tree", {"mode": "full"}))
    assert "bad-\\xff-name.txt" in tree.text
    # the surrogate-escaped name still addresses the file
    res = contained(arena, lambda a: a.call("read_file", {"file": "bad-\udcff-name.txt"}))
    assert "content" in res.text


def test_read_only_root_refuses_every_write(tmp_path: Path) -> None:
    root = tmp_path / "ro"
    root.mkdir()
    (root / "a.txt").write_text("a\n")
    ro = Root("ro", str(root.resolve()), "read-only docs", read_only=True)
    rt = Runtime(Workspace([ro]), state_dir=tmp_path / "state")
    box = build_toolbox(rt)
    before = tree_state(root, root / "__none__")
    calls = [
        ("file_actions", {"action": "create", "path": "b.txt", "content": "x"}),
        ("file_actions", {"action": "delete", "path": "a.txt"}),
        ("file_actions", {"action": "move", "path": "a.txt", "new_path": "c.txt"}),
        ("append_to_file", {"path": "a.txt", "content": "x"}),
        ("find_and_replace", {"path": "a.txt", "find": "a", "replace": "b"}),
    ]
    for name, args in calls:
        res = box.call_sync(name, json.dumps(args))
        assert res.error is not None and res.error.code == "read_only", (name, res.text)
    assert tree_state(root, root / "__none__") == before
    assert "a" in box.call_sync("read_file", '{"file": "a.txt"}').text


# --------------------------------------------------------------------------
# a symlink swapped in between the check and the write (or the read)


def swap_after_resolve(monkeypatch: pytest.MonkeyPatch, arena: Arena, swap: Callable[[], None]) -> None:
    """Run ``swap`` right after the workspace resolved (checked) a path: the
    worst moment, between the path check and the file operation."""
    original = Workspace.resolve

    def resolve_then_swap(self: Workspace, *args: object, **kwargs: object):  # type: ignore[no-untyped-def]
        resolved = original(self, *args, **kwargs)  # type: ignore[arg-type]
        swap()
        return resolved

    # on the class: another domain may replace rt.workspace with a new instance
    monkeypatch.setattr(Workspace, "resolve", resolve_then_swap)


def dir_to_outside_link(arena: Arena, name: str) -> Callable[[], None]:
    def swap() -> None:
        target = arena.root / name
        if target.is_dir() and not target.is_symlink():
            shutil.rmtree(target)
            os.symlink(arena.outside, target)

    return swap


def file_to_outside_link(arena: Arena, name: str) -> Callable[[], None]:
    def swap() -> None:
        target = arena.root / name
        if not target.is_symlink():
            target.unlink()
            os.symlink(arena.outside / "secret.txt", target)

    return swap


def test_swap_dir_before_create(arena: Arena, monkeypatch: pytest.MonkeyPatch) -> None:
    swap_after_resolve(monkeypatch, arena, dir_to_outside_link(arena, "dir"))
    args = {"action": "create", "path": "dir/new.txt", "content": "x"}
    res = contained(arena, lambda a: a.call("file_actions", args))
    assert res.error is not None and res.error.code == "denied", res.text
    assert not (arena.outside / "new.txt").exists()


def test_swap_dir_before_overwrite(arena: Arena, monkeypatch: pytest.MonkeyPatch) -> None:
    (arena.outside / "nested.txt").write_text("outside nested\n")
    swap_after_resolve(monkeypatch, arena, dir_to_outside_link(arena, "dir"))
    args = {"action": "create", "path": "dir/nested.txt", "content": "pwned", "if_exists": "overwrite"}
    res = contained(arena, lambda a: a.call("file_actions", args))
    assert res.error is not None and res.error.code == "denied", res.text


def test_swap_file_before_find_and_replace(arena: Arena, monkeypatch: pytest.MonkeyPatch) -> None:
    swap_after_resolve(monkeypatch, arena, file_to_outside_link(arena, "inside.txt"))
    args = {"path": "inside.txt", "find": "line", "replace": "pwned"}
    res = contained(arena, lambda a: a.call("find_and_replace", args))
    assert res.error is not None and res.error.code == "denied", res.text


def test_swap_file_before_append(arena: Arena, monkeypatch: pytest.MonkeyPatch) -> None:
    swap_after_resolve(monkeypatch, arena, file_to_outside_link(arena, "inside.txt"))
    res = contained(arena, lambda a: a.call("append_to_file", {"path": "inside.txt", "content": "pwned"}))
    assert res.error is not None and res.error.code == "denied", res.text


def test_swap_file_before_overwrite_replaces_the_link_not_the_target(
    arena: Arena, monkeypatch: pytest.MonkeyPatch
) -> None:
    swap_after_resolve(monkeypatch, arena, file_to_outside_link(arena, "inside.txt"))
    args = {"action": "create", "path": "inside.txt", "content": "new", "if_exists": "overwrite"}
    res = contained(arena, lambda a: a.call("file_actions", args))
    assert res.is_error or not (arena.root / "inside.txt").is_symlink(), res.text


def test_swap_dir_before_move(arena: Arena, monkeypatch: pytest.MonkeyPatch) -> None:
    swap_after_resolve(monkeypatch, arena, dir_to_outside_link(arena, "dir"))
    args = {"action": "move", "path": "inside.txt", "new_path": "dir/moved.txt"}
    res = contained(arena, lambda a: a.call("file_actions", args))
    # the swap lands after the source is checked: the destination's own check (or the walk) refuses it
    assert res.error is not None and res.error.code in ("outside_roots", "denied"), res.text
    assert (arena.root / "inside.txt").read_text().startswith("hello inside")


def test_swap_dir_before_delete(arena: Arena, monkeypatch: pytest.MonkeyPatch) -> None:
    (arena.outside / "nested.txt").write_text("outside nested\n")
    swap_after_resolve(monkeypatch, arena, dir_to_outside_link(arena, "dir"))
    res = contained(arena, lambda a: a.call("file_actions", {"action": "delete", "path": "dir/nested.txt"}))
    assert res.error is not None and res.error.code == "denied", res.text


def test_swap_dir_before_read(arena: Arena, monkeypatch: pytest.MonkeyPatch) -> None:
    (arena.outside / "nested.txt").write_text(SECRET + " via swapped dir\n")
    swap_after_resolve(monkeypatch, arena, dir_to_outside_link(arena, "dir"))
    res = contained(arena, lambda a: a.call("read_file", {"file": "dir/nested.txt"}))
    assert res.error is not None and res.error.code == "denied", res.text


@pytest.mark.parametrize("tool", ["apply_patch", "apply_edits"])
def test_swap_dir_before_edit_never_quotes_the_outside_file(
    arena: Arena, monkeypatch: pytest.MonkeyPatch, tool: str
) -> None:
    """issue 8 item 7: the edit tools read through the safe path too, so a
    context mismatch never quotes a line of the file the swapped link reaches."""
    (arena.outside / "nested.txt").write_text(SECRET + " via swapped dir\nmore\n")
    swap_after_resolve(monkeypatch, arena, dir_to_outside_link(arena, "dir"))
    if tool == "apply_patch":
        patch = "*** Begin Patch\n*** Update File: dir/nested.txt\n@@\n-nothing like this\n+x\n*** End Patch"
        res = contained(arena, lambda a: a.call("apply_patch", patch))
    else:
        args = {"path": "dir/nested.txt", "search": "nothing like this", "replace": "x"}
        res = contained(arena, lambda a: a.call("apply_edits", args))
    assert res.error is not None and res.error.code == "denied", res.text


def test_swap_dir_before_listing(arena: Arena, monkeypatch: pytest.MonkeyPatch) -> None:
    swap_after_resolve(monkeypatch, arena, dir_to_outside_link(arena, "dir"))
    res = contained(arena, lambda a: a.call("read_directory", {"path": "dir"}))
    assert "secret.txt" not in res.text, res.text


@pytest.mark.timeout(60)
def test_concurrent_swapping_never_lets_a_write_or_read_out(arena: Arena) -> None:
    """A thread flips ``flip`` between a real directory and a symlink to the
    outside while the tools write and read through it: every operation either
    lands inside or is refused."""
    flip = arena.root / "flip"
    flip.mkdir()
    (flip / "f.txt").write_text("inside flip\n")
    (arena.outside / "f.txt").write_text(SECRET + " flip\n")
    before = tree_state(arena.base, arena.root)
    stop = threading.Event()

    def flipper() -> None:
        while not stop.is_set():
            try:
                os.rename(flip, arena.root / "flip.real")
                os.symlink(arena.outside, flip)
                os.unlink(flip)
                os.rename(arena.root / "flip.real", flip)
            except OSError:
                pass

    t = threading.Thread(target=flipper, daemon=True)
    t.start()
    box = build_toolbox(arena.runtime)
    try:
        for i in range(80):
            create = {"action": "create", "path": f"flip/n{i}.txt", "content": "x"}
            for name, args in (
                ("file_actions", create),
                ("read_file", {"file": "flip/f.txt"}),
                ("append_to_file", {"path": "flip/f.txt", "content": "more"}),
                ("read_directory", {"path": "flip"}),
            ):
                res = box.call_sync(name, json.dumps(args))
                assert SECRET not in res.text, (name, res.text)
                if res.is_error:
                    assert res.error is not None and res.error.code != "internal_error", res.text
    finally:
        stop.set()
        t.join()
    if flip.is_symlink():
        flip.unlink()
        os.rename(arena.root / "flip.real", flip)
    assert tree_state(arena.base, arena.root) == before
