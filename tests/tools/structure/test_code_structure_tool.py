"""get_code_structure through the Toolbox: folders, ignore rules, files with
no codemap, paging by max_results/offset and by the output budget, and the
selection scope."""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

from tooldeck.catalog import build_toolbox
from tooldeck.runtime import Runtime


def module(i: int, methods: int = 2) -> str:
    body = "".join(
        f"    def method_{j}(self, value: int) -> int:\n        return value + {j}\n\n" for j in range(methods)
    )
    return f"import os\n\n\nclass Widget{i}:\n{body}\ndef build_{i}() -> Widget{i}:\n    return Widget{i}()\n"


def tree(root: Path) -> None:
    (root / "src" / "pkg").mkdir(parents=True)
    (root / "src" / "pkg" / "a.py").write_text(module(1), encoding="utf-8")
    (root / "src" / "pkg" / "b.go").write_text('package pkg\n\nfunc Hello() string {\n\treturn "hi"\n}\n')
    (root / "src" / "notes.md").write_text("# notes\n", encoding="utf-8")
    (root / "src" / "data.bin").write_bytes(b"\x00\x01")
    (root / "src" / "blob.py").write_bytes(b"\x00binary\x00")
    (root / "src" / "app.min.js").write_text("function a(){}\n", encoding="utf-8")
    (root / "src" / "gen").mkdir()
    (root / "src" / "gen" / "out.py").write_text("class Generated:\n    pass\n", encoding="utf-8")
    (root / ".gitignore").write_text("src/gen/\n", encoding="utf-8")


def test_folder_is_walked_recursively_with_ignore_rules(call: Any, root: Path):
    tree(root)
    text = call.ok("get_code_structure", {"paths": ["src"]})
    assert "src/pkg/a.py\n4 class Widget1\n5\tmethod_0(value:int)->int" in text
    assert "12 build_1()->Widget1" in text
    assert "src/pkg/b.go\n1 package pkg\n3 func Hello() string" in text
    assert "Generated" not in text  # gitignored folder
    assert "return value" not in text  # never a body
    assert re.search(
        r"no codemap for: .*src/blob\.py \(binary\).*src/app\.min\.js \(minified\)|"
        r"no codemap for: .*src/app\.min\.js \(minified\).*src/blob\.py \(binary\)",
        text,
    )
    assert "2 file(s) have no codemap support (no grammar): src/data.bin, src/notes.md" in text


def test_an_explicitly_named_ignored_file_is_mapped(call: Any, root: Path):
    tree(root)
    text = call.ok("get_code_structure", {"scope": "paths", "paths": ["src/gen/out.py"]})
    assert "1 class Generated" in text


def test_max_results_pages_with_offset(call: Any, root: Path):
    for i in range(5):
        (root / f"m{i}.py").write_text(module(i), encoding="utf-8")
    first = call.ok("get_code_structure", {"paths": ["."], "max_results": 2})
    assert "class Widget0" in first and "class Widget1" in first and "Widget2" not in first
    assert "files 1-2 of 5 with a grammar shown; 3 more left out (max_results=2): call again with offset=2" in first
    second = call.ok("get_code_structure", {"paths": ["."], "max_results": 2, "offset": 2})
    assert "class Widget2" in second and "class Widget3" in second and "Widget1 " not in second
    last = call.ok("get_code_structure", {"paths": ["."], "max_results": 2, "offset": 4})
    assert "class Widget4" in last and "left out" not in last
    call.err("get_code_structure", {"paths": ["."], "offset": 9}, code="invalid_arguments")


def test_output_over_budget_is_cut_with_a_note(root: Path, state_dir: Path):
    for i in range(30):
        (root / f"m{i:02d}.py").write_text(module(i, methods=12), encoding="utf-8")
    rt = Runtime.for_dirs([root], state_dir=state_dir, budget_tokens=1500)
    res = build_toolbox(rt).call_sync("get_code_structure", {"paths": ["."], "max_results": 30})
    assert not res.is_error, res.text
    text = res.text
    m = re.search(
        r"files 1-(\d+) of 30 with a grammar shown; (\d+) more left out \(the 1500-token output budget\): "
        r"call again with offset=(\d+)",
        text,
    )
    assert m, text[-400:]
    shown, more, offset = map(int, m.groups())
    assert shown + more == 30 and offset == shown and 0 < shown < 30
    assert len(re.findall(r"^m\d\d\.py$", text, re.M)) == shown
    assert rt.count_tokens(text) <= 1500


def test_selected_scope(call: Any, runtime: Runtime, root: Path):
    tree(root)
    runtime.provide("selected_paths", lambda: [])
    assert call.ok("get_code_structure", {"scope": "selected"}).startswith("Nothing is selected")
    runtime.provide("selected_paths", lambda: ["src/pkg/b.go"])
    text = call.ok("get_code_structure", {})
    assert text.startswith("src/pkg/b.go\n") and "a.py" not in text


def test_bad_arguments_and_paths(call: Any, root: Path, tmp_path: Path):
    tree(root)
    call.err("get_code_structure", {"scope": "paths"}, code="invalid_arguments")
    call.err("get_code_structure", {"paths": ["src"], "max_results": 0}, code="invalid_arguments")
    call.err("get_code_structure", {"paths": ["src"], "depth": 2}, code="invalid_arguments")
    call.err("get_code_structure", {"paths": ["nope.py"]}, code="not_found")
    call.err("get_code_structure", {"paths": [str(tmp_path)]}, code="outside_roots")
    mixed = call.ok("get_code_structure", {"paths": ["nope.py", "src/pkg/a.py"]})
    assert "class Widget1" in mixed and "[not found: nope.py:" in mixed


def test_only_files_without_grammar(call: Any, root: Path):
    (root / "README.md").write_text("hi\n", encoding="utf-8")
    text = call.ok("get_code_structure", {"paths": ["README.md"]})
    assert "(no codemaps)" in text and "no codemap support (no grammar): README.md" in text
