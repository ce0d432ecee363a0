"""manage_selection: every op, mode and view, over a small real project."""

from __future__ import annotations

from pathlib import Path

from tooldeck.runtime import Runtime
from tooldeck.selection.package import Package
from tooldeck.selection.service import selection_service
from tooldeck.state.selections import SelectedFile
from tooldeck.tokens import count_with


def selected(rt: Runtime, *, with_auto: bool = False) -> dict[str, tuple[str, bool]]:
    """rel path -> (mode, auto) of the current selection (automatic codemaps
    left out unless asked: test_auto_codemap.py covers them)."""
    sel = selection_service(rt).snapshot()
    root = rt.workspace.primary
    return {root.relative(p): (f.mode, f.auto) for p, f in sel.files.items() if with_auto or not f.auto}


def entry(rt: Runtime, rel: str) -> SelectedFile:
    return selection_service(rt).snapshot().files[str(Path(rt.workspace.primary.path) / rel)]


def test_add_folder_expands_recursively_honouring_gitignore_and_skipping_binary(call, project, runtime):
    out = call.ok("manage_selection", {"op": "add", "paths": ["."]})
    got = selected(runtime)
    for rel in ("app/main.py", "app/models.py", "app/util.py", "app/registry.py", "docs/guide.md"):
        assert got[rel][0] == "full"
    assert "build_out/generated.py" not in got  # .gitignore: build_out/
    assert "app.log" not in got  # .gitignore: *.log
    assert "logo.png" not in got  # binary
    assert "skipped 1 binary file(s): logo.png" in out


def test_add_subfolder_only_takes_that_folder(call, project, runtime):
    call.ok("manage_selection", {"op": "add", "paths": ["docs"]})
    assert set(selected(runtime)) == {"docs/guide.md"}


def test_ignored_file_named_explicitly_is_selected(call, project, runtime):
    call.ok("manage_selection", {"op": "add", "paths": ["app.log"]})
    assert "app.log" in selected(runtime)


def test_binary_file_named_explicitly_is_refused_and_nothing_changes(call, project, runtime):
    call.ok("manage_selection", {"op": "add", "paths": ["docs/guide.md"]})
    call.err("manage_selection", {"op": "add", "paths": ["app/util.py", "logo.png"]}, code="binary_file")
    assert set(selected(runtime)) == {"docs/guide.md"}


def test_full_file_tokens_and_package_total(call, project, runtime):
    call.ok("manage_selection", {"op": "add", "paths": ["app/models.py", "app/util.py"]})
    call.ok("prompt", {"op": "set", "text": "Explain how users are modelled."})
    svc = selection_service(runtime)
    bd = svc.breakdown()
    text = (project / "app/models.py").read_text()
    models = next(f for f in bd.files if f.shown == "app/models.py")
    raw = count_with("o200k_base", text)
    assert raw < models.tokens <= raw + 20  # content plus its heading and fence
    pkg, _ = svc.package()
    whole = count_with("o200k_base", pkg.text())
    assert abs(bd.total - whole) <= max(3, whole // 50)
    summary = call.ok("manage_selection", {"op": "get"})
    assert f"{models.tokens} tokens" in summary
    assert "2 full" in summary


def test_slices_with_ranges_and_descriptions_render_numbered_lines(call, project, runtime):
    slices = [{"path": "app/main.py", "ranges": [{"start_line": 5, "end_line": 10, "description": "the run entry"}]}]
    call.ok("manage_selection", {"op": "add", "slices": slices})
    assert selected(runtime) == {"app/main.py": ("slices", False)}
    content = call.ok("manage_selection", {"op": "get", "view": "content"})
    assert "### app/main.py (lines 5-10 of 14)" in content
    assert "Lines 5-10: the run entry" in content
    assert ' 5 | def run(reg: "Registry", name: str) -> str:' in content
    assert "10 |     return key" in content
    assert "def report" not in content  # line 13 is outside the range
    files = call.ok("manage_selection", {"op": "get", "view": "files"})
    assert "app/main.py  slices lines 5-10" in files and "5-10: the run entry" in files


def test_slices_merge_overlapping_ranges_and_remove_cuts_them(call, project, runtime):
    path = "app/main.py"

    def sl(op: str, start: int, end: int) -> dict:
        return {"op": op, "slices": [{"path": path, "ranges": [{"start_line": start, "end_line": end}]}]}

    call.ok("manage_selection", sl("add", 5, 10))
    call.ok(
        "manage_selection",
        {"op": "add", "slices": [{"path": path, "ranges": [{"start_line": 9, "end_line": 14, "description": "r"}]}]},
    )
    assert [(r.start, r.end) for r in entry(runtime, path).ranges] == [(5, 14)]
    call.ok("manage_selection", sl("remove", 7, 8))
    assert [(r.start, r.end) for r in entry(runtime, path).ranges] == [(5, 6), (9, 14)]
    call.ok("manage_selection", sl("remove", 1, 20))
    assert selected(runtime) == {}


def test_slice_range_past_the_end_is_refused_or_cut(call, project, runtime):
    res = call.err(
        "manage_selection",
        {"op": "add", "slices": [{"path": "app/util.py", "ranges": [{"start_line": 50, "end_line": 60}]}]},
        code="invalid_arguments",
    )
    assert "has 5 lines" in res.text
    out = call.ok(
        "manage_selection",
        {"op": "add", "slices": [{"path": "app/util.py", "ranges": [{"start_line": 4, "end_line": 60}]}]},
    )
    assert "cut to the last line (5)" in out
    (r,) = entry(runtime, "app/util.py").ranges
    assert (r.start, r.end) == (4, 5)


def test_codemap_only_mode_and_views(call, project, runtime):
    out = call.ok("manage_selection", {"op": "add", "paths": ["app"], "mode": "codemap_only"})
    got = selected(runtime)
    assert got["app/models.py"] == ("codemap", False)
    assert all(mode == "codemap" for mode, _ in got.values())
    assert "automatic codemaps are now off" in out
    maps = call.ok("manage_selection", {"op": "get", "view": "codemaps"})
    assert "### app/models.py" in maps and "### app/registry.py" in maps
    content = call.ok("manage_selection", {"op": "get", "view": "content"})
    assert "(no full or slices files selected)" in content
    summary = call.ok("manage_selection", {"op": "get", "view": "summary"})
    assert "6 codemaps" in summary and "auto codemaps off" in summary


def test_codemap_only_refuses_a_file_without_codemap_language(call, project, runtime):
    call.err("manage_selection", {"op": "add", "paths": ["docs/guide.md"], "mode": "codemap_only"}, code="unsupported")
    assert selected(runtime) == {}


def test_remove_file_and_folder_and_refuse_unselected(call, project, runtime):
    call.ok("manage_selection", {"op": "add", "paths": ["."]})
    call.ok("manage_selection", {"op": "remove", "paths": ["docs/guide.md"]})
    assert "docs/guide.md" not in selected(runtime)
    call.ok("manage_selection", {"op": "remove", "paths": ["app"]})
    assert not any(p.startswith("app/") for p in selected(runtime))
    before = selected(runtime)
    call.err("manage_selection", {"op": "remove", "paths": ["app/models.py"]}, code="not_found")
    assert selected(runtime) == before


def test_set_replaces_and_clear_empties(call, project, runtime):
    call.ok("manage_selection", {"op": "add", "paths": ["app/models.py", "app/util.py"]})
    out = call.ok("manage_selection", {"op": "set", "paths": ["docs/guide.md"]})
    assert selected(runtime) == {"docs/guide.md": ("full", False)}
    assert "removed 2" in out
    out = call.ok("manage_selection", {"op": "clear"})
    assert selected(runtime) == {}
    assert "(nothing selected" in out


def test_preview_reports_without_saving(call, project, runtime):
    call.ok("manage_selection", {"op": "add", "paths": ["app/util.py"]})
    out = call.ok("manage_selection", {"op": "preview", "paths": ["app/models.py"]})
    assert out.startswith("Would change: added 1: app/models.py")
    assert "nothing was saved" in out
    before, after = out.split("tokens: ", 1)[1].split(" (", 1)[0].split(" → ")
    assert int(after.replace(",", "")) > int(before.replace(",", ""))
    assert set(selected(runtime)) == {"app/util.py"}


def test_promote_and_demote_switch_auto_management_off(call, project, runtime):
    call.ok("manage_selection", {"op": "add", "paths": ["app/main.py", "docs/guide.md"]})
    assert selection_service(runtime).snapshot().auto_codemaps
    out = call.ok("manage_selection", {"op": "demote", "paths": ["app/main.py", "docs/guide.md"]})
    got = selected(runtime)
    assert got["app/main.py"] == ("codemap", False)
    assert got["docs/guide.md"] == ("full", False)  # no codemap language: left as it is
    assert "no codemap language" in out
    assert not selection_service(runtime).snapshot().auto_codemaps
    call.ok("manage_selection", {"op": "promote", "paths": ["app"]})
    assert selected(runtime)["app/main.py"] == ("full", False)
    call.err("manage_selection", {"op": "promote", "paths": ["app/main.py"]}, code="not_found")
    call.ok("manage_selection", {"op": "add", "paths": ["app/util.py"], "auto_codemaps": True})
    assert selection_service(runtime).snapshot().auto_codemaps


def test_clear_turns_auto_management_back_on(call, project, runtime):
    call.ok("manage_selection", {"op": "add", "paths": ["app/models.py"], "mode": "codemap_only"})
    assert not selection_service(runtime).snapshot().auto_codemaps
    call.ok("manage_selection", {"op": "clear"})
    assert selection_service(runtime).snapshot().auto_codemaps


def test_bad_input_is_refused_naming_the_field_and_changes_nothing(call, project, runtime):
    call.ok("manage_selection", {"op": "add", "paths": ["app/util.py"]})
    before = selected(runtime)
    for args, field in (
        ({"op": "add"}, "paths"),
        ({"op": "add", "paths": ["app/x.py"], "mode": "slices"}, "slices"),
        ({"op": "add", "slices": [{"path": "app/util.py", "ranges": [{"start_line": 3, "end_line": 2}]}]}, "end_line"),
        ({"op": "add", "slices": [{"path": "app/util.py", "ranges": [{"start_line": 0}]}]}, "start_line"),
        ({"op": "get", "paths": ["app"]}, "paths"),
        ({"op": "get", "bogus": 1}, "bogus"),
        ({"op": "promote"}, "paths"),
    ):
        res = call.err("manage_selection", args, code="invalid_arguments")
        assert field in res.text, (args, res.text)
    call.err("manage_selection", {"op": "add", "paths": ["/etc/passwd"]}, code="outside_roots")
    call.err("manage_selection", {"op": "add", "paths": ["app/nope.py"]}, code="not_found")
    call.err(
        "manage_selection",
        {"op": "add", "slices": [{"path": "app", "ranges": [{"start_line": 1}]}]},
        code="invalid_arguments",
    )
    assert selected(runtime) == before


def test_a_single_path_string_is_accepted(call, project, runtime):
    call.ok("manage_selection", {"op": "add", "paths": "app/util.py"})
    assert set(selected(runtime)) == {"app/util.py"}


def test_file_tree_marks_selected_files(call, project):
    call.ok("manage_selection", {"op": "add", "paths": ["app/util.py"]})
    tree = call.ok("get_file_tree", {"mode": "full"})
    assert "util.py *" in tree
    assert "models.py *" not in tree
    only = call.ok("get_file_tree", {"mode": "selected"})
    assert "util.py" in only and "models.py" not in only


def test_missing_file_is_reported_not_fatal(call, project, runtime):
    call.ok("manage_selection", {"op": "add", "paths": ["app/util.py", "app/models.py"]})
    (project / "app/util.py").unlink()
    out = call.ok("manage_selection", {"op": "get", "view": "files"})
    assert "app/util.py  full  " in out and "[missing" in out
    call.ok("manage_selection", {"op": "remove", "paths": ["app/util.py"]})
    assert set(selected(runtime)) == {"app/models.py"}


def test_package_fence_survives_backticks_in_content(project: Path, runtime):
    (project / "docs/fences.md").write_text("```python\nx = 1\n```\n")
    svc = selection_service(runtime)
    svc.set_prompt("")
    from tooldeck.selection.service import Item

    svc.add([Item("docs/fences.md")])
    pkg, _ = svc.package()
    assert isinstance(pkg, Package)
    assert "````markdown\n```python\nx = 1\n```\n````" in pkg.text()


def test_get_code_structure_scope_selected_reads_the_selection(call, project):
    assert "Nothing is selected" in call.ok("get_code_structure", {"scope": "selected"})
    call.ok("manage_selection", {"op": "add", "paths": ["app/models.py"], "mode": "codemap_only"})
    out = call.ok("get_code_structure", {"scope": "selected"})
    assert "class User" in out and "slugify" not in out


def test_null_and_single_object_arguments_are_accepted(call, project, runtime):
    call.ok(
        "manage_selection",
        {"op": "add", "paths": None, "slices": {"path": "app/util.py", "ranges": [{"start_line": 1}]}},
    )
    assert selected(runtime) == {"app/util.py": ("slices", False)}
