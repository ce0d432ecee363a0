"""Automatic codemaps: a full/slices file brings in what it imports and the
files defining the names it uses; changing codemaps by hand stops that."""

from __future__ import annotations

from tooldeck.runtime import Runtime
from tooldeck.selection.service import Item, selection_service
from tooldeck.settings import settings_service


def entries(rt: Runtime) -> dict[str, tuple[str, bool]]:
    sel = selection_service(rt).snapshot()
    root = rt.workspace.primary
    return {root.relative(p): (f.mode, f.auto) for p, f in sel.files.items()}


def test_full_file_adds_its_imports_and_definers_as_auto_codemaps(call, project, runtime):
    out = call.ok("manage_selection", {"op": "add", "paths": ["app/main.py"]})
    got = entries(runtime)
    assert got["app/main.py"] == ("full", False)
    assert got["app/models.py"] == ("codemap", True)  # from app.models import User
    assert got["app/util.py"] == ("codemap", True)  # from .util import slugify
    assert got["app/registry.py"] == ("codemap", True)  # defines Registry, register, keys (no import)
    assert "app/unrelated.py" not in got
    assert "app/__init__.py" not in got
    assert "auto codemaps added 3" in out
    maps = call.ok("manage_selection", {"op": "get", "view": "codemaps"})
    assert "class User" in maps and "4 slugify(text:str)->str" in maps
    assert "return re.sub" not in maps  # signatures, never bodies


def test_imports_rank_before_name_matches(runtime, project):
    settings_service(runtime).set("code_maps.auto_max_files", 2)
    selection_service(runtime).add([Item("app/main.py")])
    got = entries(runtime)
    autos = {p for p, (_m, auto) in got.items() if auto}
    assert autos == {"app/models.py", "app/util.py"}


def test_slices_also_bring_auto_codemaps(call, project, runtime):
    call.ok(
        "manage_selection",
        {"op": "add", "slices": [{"path": "app/main.py", "ranges": [{"start_line": 1, "end_line": 3}]}]},
    )
    assert entries(runtime)["app/models.py"] == ("codemap", True)


def test_removing_the_full_file_drops_its_auto_codemaps(call, project, runtime):
    call.ok("manage_selection", {"op": "add", "paths": ["app/main.py"]})
    out = call.ok("manage_selection", {"op": "remove", "paths": ["app/main.py"]})
    assert entries(runtime) == {}
    assert "auto codemaps dropped 3" in out


def test_auto_codemaps_never_override_a_manual_entry(call, project, runtime):
    call.ok("manage_selection", {"op": "add", "paths": ["app/models.py"]})
    call.ok("manage_selection", {"op": "add", "paths": ["app/main.py"]})
    got = entries(runtime)
    assert got["app/models.py"] == ("full", False)
    assert got["app/util.py"] == ("codemap", True)


def test_manual_codemap_op_turns_auto_off_and_keeps_what_it_added(call, project, runtime):
    call.ok("manage_selection", {"op": "add", "paths": ["app/main.py"]})
    call.ok("manage_selection", {"op": "add", "paths": ["app/unrelated.py"], "mode": "codemap_only"})
    got = entries(runtime)
    assert got["app/models.py"] == ("codemap", False)  # kept, now manual
    assert got["app/unrelated.py"] == ("codemap", False)
    # auto is off: a new full file brings nothing, removing main drops nothing
    call.ok("manage_selection", {"op": "add", "paths": ["app/registry.py"]})
    call.ok("manage_selection", {"op": "remove", "paths": ["app/main.py"]})
    got = entries(runtime)
    assert got["app/util.py"] == ("codemap", False)
    assert not any(auto for _m, auto in got.values())


def test_removing_an_auto_codemap_by_hand_turns_auto_off(call, project, runtime):
    call.ok("manage_selection", {"op": "add", "paths": ["app/main.py"]})
    out = call.ok("manage_selection", {"op": "remove", "paths": ["app/registry.py"]})
    assert "automatic codemaps are now off" in out
    got = entries(runtime)
    assert "app/registry.py" not in got
    assert got["app/models.py"] == ("codemap", False)


def test_promote_turns_auto_off_and_auto_codemaps_true_resumes(call, project, runtime):
    call.ok("manage_selection", {"op": "add", "paths": ["app/main.py"]})
    call.ok("manage_selection", {"op": "promote", "paths": ["app/util.py"]})
    got = entries(runtime)
    assert got["app/util.py"] == ("full", False)
    assert got["app/models.py"] == ("codemap", False)
    assert not selection_service(runtime).snapshot().auto_codemaps
    call.ok("manage_selection", {"op": "clear", "auto_codemaps": True})
    call.ok("manage_selection", {"op": "add", "paths": ["app/main.py"]})
    assert entries(runtime)["app/registry.py"] == ("codemap", True)


def test_codemaps_disabled_means_no_auto_codemaps(call, project, runtime):
    call.ok("app_settings", {"op": "set", "key": "code_maps.enabled", "value": False})
    call.ok("manage_selection", {"op": "add", "paths": ["app/main.py"]})
    assert entries(runtime) == {"app/main.py": ("full", False)}


def test_a_changed_file_is_looked_up_again_not_served_from_the_last_change(call, project, runtime):
    # name-signal contributions are kept per file while its content and the index are
    # unchanged: editing the selected file to use other names must move its definers
    (project / "app" / "alpha.py").write_text("def frobnicate_alpha(x):\n    return x\n")
    (project / "app" / "beta.py").write_text("def frobnicate_beta(x):\n    return x\n")
    (project / "app" / "user.py").write_text("def go():\n    return frobnicate_alpha(1)\n")
    call.ok("manage_selection", {"op": "add", "paths": ["app/user.py"]})
    got = entries(runtime)
    assert got.get("app/alpha.py") == ("codemap", True) and "app/beta.py" not in got
    (project / "app" / "user.py").write_text("def go():\n    return frobnicate_beta(2)\n")
    call.ok("manage_selection", {"op": "add", "paths": ["app/models.py"]})  # any change recomputes the autos
    got = entries(runtime)
    assert got.get("app/beta.py") == ("codemap", True) and "app/alpha.py" not in got
