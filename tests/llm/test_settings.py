"""Which endpoint, key and model a conversation uses: env > preset > [models] > stored."""

from __future__ import annotations

from pathlib import Path

import pytest

from tooldeck.config import load_config
from tooldeck.llm.errors import ModelError
from tooldeck.llm.settings import resolve_model
from tooldeck.runtime import Runtime
from tooldeck.settings import settings_service

CONFIG = """
[models]
default_model = "fast"
base_url = "http://127.0.0.1:1/v1"
api_key = "file-key"

[models.presets.fast]
model = "gpt-4.1-mini"
api = "responses"
temperature = 0.3
api_key_env = "FAST_KEY"

[models.presets.local]
model = "qwen"
base_url = "http://127.0.0.1:2/v1"
stream = false
"""


@pytest.fixture
def cfg(tmp_path: Path, monkeypatch: pytest.MonkeyPatch):  # type: ignore[no-untyped-def]
    for var in ("OPENAI_BASE_URL", "OPENAI_API_KEY", "FAST_KEY"):
        monkeypatch.delenv(var, raising=False)
    user = tmp_path / "config.toml"
    user.write_text(CONFIG)
    return load_config(None, user_path=user)


def test_preset_and_models_table(cfg) -> None:  # type: ignore[no-untyped-def]
    m = resolve_model(cfg)  # default_model names the preset
    assert (m.model, m.api, m.temperature, m.base_url, m.api_key) == (
        "gpt-4.1-mini", "responses", 0.3, "http://127.0.0.1:1/v1", "file-key",
    )  # fmt: skip
    local = resolve_model(cfg, "local")
    assert (local.model, local.base_url, local.stream, local.api) == ("qwen", "http://127.0.0.1:2/v1", False, "chat")
    plain = resolve_model(cfg, "gpt-5")  # not a preset: a model name
    assert plain.model == "gpt-5" and plain.base_url == "http://127.0.0.1:1/v1"


def test_environment_overrides_and_key_variables(cfg, monkeypatch: pytest.MonkeyPatch) -> None:  # type: ignore[no-untyped-def]
    monkeypatch.setenv("OPENAI_BASE_URL", "http://127.0.0.1:3/v1")
    monkeypatch.setenv("OPENAI_API_KEY", "env-key")
    assert resolve_model(cfg, "local").base_url == "http://127.0.0.1:3/v1"
    assert resolve_model(cfg, "local").api_key == "env-key"
    monkeypatch.setenv("FAST_KEY", "fast-key")
    assert resolve_model(cfg, "fast").api_key == "fast-key"


def test_the_default_model_has_one_order(cfg, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:  # type: ignore[no-untyped-def]
    """TOOLDECK_MODEL > [models] default_model > stored, for a model call and for the agents' presets alike."""
    from tooldeck.agents.models import default_model

    rt = Runtime.for_dirs([tmp_path], state_dir=tmp_path / "state")
    assert resolve_model(cfg).model == "gpt-4.1-mini" and default_model(rt, cfg) == "fast"
    monkeypatch.setenv("TOOLDECK_MODEL", "env-model")
    assert resolve_model(cfg).model == "env-model" and default_model(rt, cfg) == "env-model"


def test_conversation_overrides_win_over_the_preset(cfg) -> None:  # type: ignore[no-untyped-def]
    m = resolve_model(cfg, "fast", api="chat", temperature=0.9, max_tokens=50, stream=False)
    assert (m.api, m.temperature, m.max_tokens, m.stream) == ("chat", 0.9, 50, False)


def test_stored_settings_are_the_last_resort(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    for var in ("OPENAI_BASE_URL", "OPENAI_API_KEY"):
        monkeypatch.delenv(var, raising=False)
    rt = Runtime.for_dirs([tmp_path], state_dir=tmp_path / "state")
    with pytest.raises(ModelError, match="no model named"):
        resolve_model(None, rt=rt)
    s = settings_service(rt)
    s.set("models.default_model", "stored-model")
    s.set("models.base_url", "http://127.0.0.1:4/v1", by="person")
    m = resolve_model(None, rt=rt)
    assert (m.model, m.base_url) == ("stored-model", "http://127.0.0.1:4/v1")


def test_bad_api_is_a_config_error(cfg) -> None:  # type: ignore[no-untyped-def]
    with pytest.raises(ModelError, match="api must be"):
        resolve_model(cfg, "fast", api="soap")


@pytest.mark.parametrize(
    ("table", "key"),
    [
        ('[models]\ndefault_model = "m"\nstream = "1"\n', "models.stream"),
        ('[models]\ndefault_model = "m"\n[models.presets.m]\nstream = "false"\n', "models.presets.m.stream"),
        ('[models]\ndefault_model = "m"\n[models.presets.m]\nmax_tokens = "100"\n', "models.presets.m.max_tokens"),
        ('[models]\ndefault_model = "m"\ntimeout = "60"\n', "models.timeout"),
        ('[models]\ndefault_model = ["m"]\n', "models.default_model"),
    ],
)
def test_a_value_of_the_wrong_type_is_an_error_naming_the_key(tmp_path: Path, table: str, key: str) -> None:
    user = tmp_path / "config.toml"
    user.write_text(table)
    with pytest.raises(ModelError) as exc:
        resolve_model(load_config(None, user_path=user))
    assert exc.value.message.startswith(f"{key}: expected"), exc.value.message
