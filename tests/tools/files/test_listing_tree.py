"""read_directory and get_file_tree."""

from __future__ import annotations

import json
import os
from pathlib import Path

from tooldeck.catalog import build_toolbox
from tooldeck.core.invocation import Invocation, Progress
from tooldeck.runtime import Runtime
from tooldeck.tokens import count_tokens
from tooldeck.tools.files.tree import AUTO_TOKENS
from tooldeck.workspace.roots import Workspace, make_root


def make(root: Path, *rels: str) -> None:
    for rel in rels:
        p = root / rel
        p.parent.mkdir(parents=True, exist_ok=True)
        p.write_text(f"{rel}\n")


def test_read_directory_sorted_and_marked(root: Path, call) -> None:  # type: ignore[no-untyped-def]
    make(root, "b.txt", "A.md", "sub/x.py", ".hidden")
    (root / "emptydir").mkdir()
    (root / "link").symlink_to(root / "sub")
    assert call.ok("read_directory", {"path": "."}).split("\n") == [
        ".hidden",
        "A.md",
        "b.txt",
        "emptydir/",
        "link",
        "sub/",
    ]
    assert call.ok("read_directory", {}) == call.ok("read_directory", {"path": "."})
    assert call.ok("read_directory", {"path": "sub"}) == "x.py"
    assert call.ok("read_directory", {"path": "emptydir"}) == "(empty directory)"
    call.err("read_directory", {"path": "b.txt"}, code="not_a_directory")
    call.err("read_directory", {"path": "missing"}, code="not_found")


def test_read_directory_root_enum_and_annotations(runtime: Runtime, box) -> None:  # type: ignore[no-untyped-def]
    t = box.get("read_directory")
    assert t.parameters["properties"]["root"]["enum"] == [r.id for r in runtime.workspace.roots]
    assert t.annotations.read_only and not t.annotations.destructive


def test_full_tree_leaves_out_ignored_files(root: Path, call) -> None:  # type: ignore[no-untyped-def]
    make(root, "src/app.py", "src/util/helpers.py", "README.md", "debug.log", "node_modules/x/i.js", "notes.txt")
    (root / ".gitignore").write_text("*.log\n")
    text = call.ok("get_file_tree", {"mode": "full"})
    lines = text.split("\n")
    assert lines[0] == str(root.resolve())
    assert lines[1:] == [
        "├── src/",
        "│   ├── util/",
        "│   │   └── helpers.py +",
        "│   └── app.py +",
        "├── .gitignore",
        "├── notes.txt",
        "└── README.md",
    ]
    assert "debug.log" not in text and "node_modules" not in text


def test_folders_mode_and_max_depth(root: Path, call) -> None:  # type: ignore[no-untyped-def]
    make(root, "a/one.txt", "a/two.txt", "a/deep/three.txt", "b/four.txt", "top.txt")
    folders = call.ok("get_file_tree", {"mode": "folders"}).split("\n")[1:]
    assert folders == ["├── a/ (3 files)", "│   └── deep/ (1 files)", "└── b/ (1 files)"]
    shallow = call.ok("get_file_tree", {"mode": "full", "max_depth": 1}).split("\n")[1:]
    assert shallow == ["├── a/", "├── b/", "└── top.txt"]
    assert call.ok("get_file_tree", {"mode": "full", "max_depth": 0}) == str(root.resolve())
    sub = call.ok("get_file_tree", {"mode": "full", "path": "a"})
    assert sub.split("\n")[0] == f"{root.resolve()}/a" and "one.txt" in sub and "four.txt" not in sub
    call.err("get_file_tree", {"path": "top.txt"}, code="not_a_directory")
    call.err("get_file_tree", {"path": "../"}, code="outside_roots")


def test_auto_fits_about_ten_thousand_tokens(root: Path, call) -> None:  # type: ignore[no-untyped-def]
    for p in range(12):
        for m in range(12):
            for f in range(25):
                make(root, f"package_{p:02d}/module_{m:02d}/source_file_number_{f:03d}.py")
    text = call.ok("get_file_tree", {"mode": "auto"})
    assert count_tokens(text) <= AUTO_TOKENS + 200
    assert "[auto: showing 2 level(s)" in text and "module_00/ (25 files)" in text
    assert count_tokens(call.ok("get_file_tree", {"mode": "full"})) > AUTO_TOKENS  # full is paged, auto degrades
    small = root / "package_00"
    text = call.ok("get_file_tree", {"mode": "auto", "path": str(small)})
    assert "[auto:" not in text and "source_file_number_024.py" in text


def test_selected_and_marks(runtime: Runtime, root: Path, box) -> None:  # type: ignore[no-untyped-def]
    make(root, "a/x.py", "a/y.txt", "b/z.md")
    runtime.provide("selected_paths", lambda: ["a/y.txt"])
    text = box.call_sync("get_file_tree", '{"mode": "selected"}').text
    assert text.split("\n")[1:] == ["└── a/", "    └── y.txt *"]
    full = box.call_sync("get_file_tree", '{"mode": "full"}').text
    assert "y.txt *" in full and "x.py +" in full and "z.md" in full and "z.md *" not in full
    runtime.provide("selected_paths", list)
    assert "(no files selected)" in box.call_sync("get_file_tree", '{"mode": "selected"}').text


def test_roots_type_and_several_roots(tmp_path: Path, state_dir: Path) -> None:
    a, b = tmp_path / "a", tmp_path / "b"
    make(a, "one.txt")
    make(b, "two.txt")
    rt = Runtime(
        Workspace([make_root(a, "first"), make_root(b, "second", "Second root", read_only=True)]), state_dir=state_dir
    )
    box = build_toolbox(rt)
    roots = box.call_sync("get_file_tree", '{"type": "roots"}').text
    assert "first" in roots and "second" in roots and "read-only" in roots
    both = box.call_sync("get_file_tree", '{"mode": "full"}').text
    assert "one.txt" in both and "two.txt" in both and str(b.resolve()) in both


def test_progress_is_reported_while_walking(root: Path, box) -> None:  # type: ignore[no-untyped-def]
    for i in range(30):
        make(root, f"d{i}/f.txt")
    seen: list[Progress] = []
    res = box.call_sync("get_file_tree", '{"mode": "full"}', invocation=Invocation.create(seen.append))
    assert not res.is_error
    assert seen and all(p.channel == "activity" for p in seen)
    assert seen[-1].update.text == "walked 60 entries"
    silent = box.call_sync("get_file_tree", '{"mode": "full"}')
    assert silent.output == res.output  # progress never changes the result


def test_deep_tree_renders_without_recursion(root: Path, call) -> None:  # type: ignore[no-untyped-def]
    rel = "/".join(["n"] * 400)
    os.makedirs(root / rel)
    (root / rel / "leaf.txt").write_text("x")
    text = call.ok("get_file_tree", {"mode": "full"})
    assert "leaf.txt" in text


def test_tree_lists_invalid_utf8_names_as_escapes(root: Path, call) -> None:  # type: ignore[no-untyped-def]
    with open(os.path.join(os.fsencode(root), b"caf\xe9.txt"), "wb") as fh:
        fh.write(b"x")
    text = call.ok("get_file_tree", {"mode": "full"})
    assert "caf\\xe9.txt" in text
    json.dumps(text, ensure_ascii=False).encode("utf-8")
