"""app_settings: list/get/set/options over the allowlist; types validated;
secrets never readable."""

from __future__ import annotations

import json

from tooldeck.catalog import build_toolbox
from tooldeck.runtime import Runtime
from tooldeck.settings import GROUPS, REGISTRY, setting, settings_service

SECRET = "sk-test-0123456789abcdef-never-shown"


def test_list_covers_every_group_and_key(call):
    out = call.ok("app_settings", {"op": "list"})
    for group in GROUPS:
        assert f"[{group}]" in out
    for key in REGISTRY:
        assert f"  {key} = " in out


def test_list_by_group_and_get_variants(call):
    out = call.ok("app_settings", {"op": "list", "group": "code_maps"})
    assert "code_maps.enabled = true" in out and "output." not in out
    assert "output.budget_tokens = 20000" in call.ok("app_settings", {"op": "get", "key": "output.budget_tokens"})
    both = call.ok("app_settings", {"op": "get", "keys": ["tree.default_mode", "tokens.encoding"]})
    assert 'tree.default_mode = "auto"' in both and 'tokens.encoding = "o200k_base"' in both
    assert "editing.verbose" in call.ok("app_settings", {"op": "get", "group": "editing"})
    call.err("app_settings", {"op": "get", "key": "ui.appearance_mode"}, code="not_found")
    call.err("app_settings", {"op": "get", "key": "tree.default_mode", "keys": ["x"]}, code="invalid_arguments")
    call.err("app_settings", {"op": "list", "key": "tree.default_mode"}, code="invalid_arguments")
    call.err("app_settings", {"op": "list", "group": "secrets"}, code="invalid_arguments")


def test_set_validates_types_and_bounds_and_changes_nothing_on_error(call, runtime):
    for key, value in (
        ("output.budget_tokens", "12000"),  # a string is not an integer
        ("output.budget_tokens", 12000.5),
        ("output.budget_tokens", 10),  # below the minimum
        ("output.budget_tokens", True),
        ("code_maps.enabled", "false"),
        ("code_maps.enabled", 0),
        ("tree.default_mode", "sideways"),
        ("editing.fuzzy_threshold", 2),
        ("models.default_model", 5),
    ):
        res = call.err("app_settings", {"op": "set", "key": key, "value": value}, code="invalid_arguments")
        assert "field `value`" in res.text and key in res.text
    assert setting(runtime, "output.budget_tokens") == 20_000
    assert setting(runtime, "code_maps.enabled") is True
    call.err("app_settings", {"op": "set", "key": "output.budget_tokens"}, code="invalid_arguments")
    call.err("app_settings", {"op": "set", "key": "nope.key", "value": 1}, code="not_found")
    call.err("app_settings", {"op": "get", "key": "tree.default_mode", "value": 1}, code="invalid_arguments")


def test_set_get_and_restore_default(call, runtime):
    call.ok("app_settings", {"op": "set", "key": "tree.default_mode", "value": "folders"})
    call.ok("app_settings", {"op": "set", "key": "editing.fuzzy_threshold", "value": 0.75})
    call.ok("app_settings", {"op": "set", "key": "code_maps.auto_max_files", "value": 4.0})
    assert setting(runtime, "tree.default_mode") == "folders"
    assert setting(runtime, "editing.fuzzy_threshold") == 0.75
    assert setting(runtime, "code_maps.auto_max_files") == 4
    out = call.ok("app_settings", {"op": "get", "key": "tree.default_mode"})
    assert 'tree.default_mode = "folders"' in out and "from stored" in out
    call.ok("app_settings", {"op": "set", "key": "models.default_model", "value": "gpt-5-mini"})
    out = call.ok("app_settings", {"op": "set", "key": "models.default_model", "value": None})
    assert "restored to its default" in out
    assert setting(runtime, "models.default_model") is None
    call.ok("app_settings", {"op": "set", "key": "tree.default_mode", "value": None})
    assert setting(runtime, "tree.default_mode") == "auto"


def test_options(call):
    out = call.ok("app_settings", {"op": "options", "key": "tree.default_mode"})
    assert out.splitlines()[1:] == ['  "auto"', '  "full"', '  "folders"', '  "selected"']
    assert len(call.ok("app_settings", {"op": "options", "key": "tree.default_mode", "limit": 2}).splitlines()) == 3
    assert "from 1000 to 200000" in call.ok("app_settings", {"op": "options", "key": "output.budget_tokens"})
    detailed = call.ok("app_settings", {"op": "options", "key": "code_maps.enabled", "detailed": True})
    assert "Build codemaps" in detailed and "true" in detailed
    call.err("app_settings", {"op": "options"}, code="invalid_arguments")


def test_secret_is_write_only(call, box, runtime, monkeypatch):
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    assert "<secret: not set>" in call.ok("app_settings", {"op": "get", "key": "models.api_key"})
    settings_service(runtime).set("models.api_key", SECRET, by="person")  # `tooldeck settings set`
    assert setting(runtime, "models.api_key") == SECRET  # code can use it
    for args in (
        {"op": "list"},
        {"op": "list", "group": "models"},
        {"op": "get", "key": "models.api_key"},
        {"op": "get", "keys": ["models.api_key"]},
        {"op": "options", "key": "models.api_key", "detailed": True},
        {"op": "set", "key": "models.api_key", "value": "sk-other-key-0000"},
        {"op": "set", "key": "models.api_key", "value": 12345678},
    ):
        res = box.call_sync("app_settings", json.dumps(args))
        assert SECRET not in res.text and "12345678" not in res.text  # not even a rejected value is echoed
        assert SECRET not in json.dumps(res.output.structured or {} if res.output else {})
    assert "<secret: set>" in call.ok("app_settings", {"op": "get", "key": "models.api_key"})
    assert setting(runtime, "models.api_key") == SECRET


def test_environment_overrides_and_is_reported(call, runtime, monkeypatch):
    monkeypatch.setenv("TOOLDECK_MODEL", "env-model")
    out = call.ok("app_settings", {"op": "set", "key": "models.default_model", "value": "stored-model"})
    assert "TOOLDECK_MODEL is set and takes precedence" in out
    assert setting(runtime, "models.default_model") == "env-model"
    assert "from env" in call.ok("app_settings", {"op": "get", "key": "models.default_model"})
    monkeypatch.setenv("OPENAI_BASE_URL", "http://127.0.0.1:9/v1")
    assert "from env" in call.ok("app_settings", {"op": "get", "key": "models.base_url"})


def test_settings_persist_and_budget_applies_at_next_start(call, root, state_dir):
    budget = 12_000
    call.ok("app_settings", {"op": "set", "key": "output.budget_tokens", "value": budget})
    call.ok("app_settings", {"op": "set", "key": "code_maps.enabled", "value": False})
    again = Runtime.for_dirs([root], state_dir=state_dir).start()
    box = build_toolbox(again)
    assert box.budget_tokens == budget
    assert setting(again, "code_maps.enabled") is False
