"""Which endpoint, key and model a conversation uses.

Precedence, most specific first: the environment (``OPENAI_BASE_URL``,
``OPENAI_API_KEY``: SPEC §7, environment overrides), then a preset named by
``<config model="...">`` (``[models.presets.<id>]`` in the config), then the
``[models]`` table of the config files (for the endpoint and key: the
user's file only), then the stored settings
(``models.base_url``/``models.api_key``, which only the person sets, with
``tooldeck settings set``; ``models.default_model``, which ``app_settings``
may also set). A preset of the user config may name its key by variable
(``api_key_env``) so the key itself never sits in a file.

The endpoint and the key are authority (SPEC §3: an endpoint that receives
credentials): they come from the person only (the environment, the user
config file, ``tooldeck settings set``), never from a project's
``.tooldeck.toml`` (a file the model can write); no model-facing tool can
set either; and the key is kept out of this dataclass's ``repr`` so no log
line or error that prints a ModelConfig carries it.
"""

from __future__ import annotations

import logging
import os
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Literal

from tooldeck.config import Config, ConfigError, load_config
from tooldeck.llm.errors import ModelError

if TYPE_CHECKING:
    from tooldeck.runtime import Runtime

log = logging.getLogger("tooldeck.llm")

Api = Literal["chat", "responses"]


@dataclass(frozen=True)
class ModelConfig:
    model: str
    base_url: str | None = None
    api_key: str | None = field(default=None, repr=False)
    api: Api = "chat"
    stream: bool = True
    max_tokens: int | None = None
    temperature: float | None = None
    reasoning_effort: str | None = None
    max_retries: int = 4
    backoff_seconds: float = 0.5
    timeout: float = 600.0


def _stored(rt: Runtime | None, key: str) -> Any:
    if rt is None:
        return None
    try:
        from tooldeck.settings import setting

        return setting(rt, key)
    except Exception:  # an unreadable store must not stop a run that has env/config values
        return None


def _pick(*values: Any) -> Any:
    for v in values:
        if v is not None and v != "":
            return v
    return None


def _api(value: Any) -> Api:
    if value in (None, ""):
        return "chat"
    if value not in ("chat", "responses"):
        raise ModelError("config", f"api must be 'chat' or 'responses', not {value!r}")
    return value  # type: ignore[no-any-return]


def _bool(value: Any, default: bool) -> bool:
    if value is None:
        return default
    if isinstance(value, bool):
        return value
    return str(value).strip().lower() not in ("0", "false", "no", "off")


ENDPOINT_KEYS = ("base_url", "api_key", "api_key_env")


def _table(data: Any, key: str) -> dict[str, Any]:
    value = data.get(key) if isinstance(data, dict) else None
    return value if isinstance(value, dict) else {}


def _person_models(config: Config | None) -> dict[str, Any]:
    """The ``[models]`` table of the person's own config file: the only file
    whose endpoint keys count. A project's ``.tooldeck.toml`` can be written by
    the model (it sits in a root), so its ``base_url``, ``api_key`` and
    ``api_key_env`` (a variable whose value would be sent as the key) are
    ignored here, whatever the merged config says."""
    if config is None:
        return {}
    if config.project_path is None:
        return config.section("models")
    try:
        person = load_config(None, user_path=config.user_path).section("models")
    except ConfigError:
        person = {}
    merged = config.section("models")
    asked = [k for k in ENDPOINT_KEYS if merged.get(k) is not None and merged.get(k) != person.get(k)]
    for pid, spec in _table(merged, "presets").items():
        mine = _table(_table(person, "presets"), pid)
        asked += [f"presets.{pid}.{k}" for k in ENDPOINT_KEYS if isinstance(spec, dict) and spec.get(k) != mine.get(k)]
    if asked and str(config.project_path) not in _warned:  # once per file and process
        _warned.add(str(config.project_path))
        log.warning(
            "%s: [models] %s ignored: the model endpoint and its key come only from the environment, "
            "the user config (%s) or `tooldeck settings set`",
            config.project_path,
            ", ".join(asked),
            config.user_path or "~/.config/tooldeck/config.toml",
        )
    return person


_warned: set[str] = set()


def _endpoint(config: Config | None, name: str, rt: Runtime | None) -> tuple[str | None, str | None]:
    """(base_url, api_key) for model ``name``, from the person only: the
    environment, the user config (its preset of that name, then its
    ``[models]``), then the stored settings only the person can set."""
    person = _person_models(config)
    preset = _table(_table(person, "presets"), name)
    key_env = preset.get("api_key_env")
    env_url = os.environ.get("OPENAI_BASE_URL")
    base_url = _pick(env_url, preset.get("base_url"), person.get("base_url"), _stored(rt, "models.base_url"))
    api_key = _pick(
        os.environ.get(str(key_env)) if key_env else None,
        os.environ.get("OPENAI_API_KEY"),
        preset.get("api_key"),
        person.get("api_key"),
        _stored(rt, "models.api_key"),
    )
    return base_url, api_key


def resolve_model(
    config: Config | None, model: str | None = None, *, rt: Runtime | None = None, **overrides: Any
) -> ModelConfig:
    """The ModelConfig for ``model`` (a preset id or a model name; None: the default).

    ``overrides`` (``api``, ``stream``, ``max_tokens``...) come from the
    conversation (``<config>``) and win over the preset. Raises ModelError
    (kind ``config``) when no model is named anywhere."""
    models = config.section("models") if config is not None else {}
    presets = models.get("presets") if isinstance(models.get("presets"), dict) else {}
    name = _pick(model, models.get("default_model"), _stored(rt, "models.default_model"))
    if name is None:
        raise ModelError(
            "config",
            'no model named: add <config model="..."/> to the file, or default_model under [models] in the config',
        )
    preset: dict[str, Any] = presets.get(name, {}) if isinstance(presets.get(name), dict) else {}
    base_url, api_key = _endpoint(config, str(name), rt)
    o = {k: v for k, v in overrides.items() if v is not None}
    return ModelConfig(
        model=str(_pick(preset.get("model"), name)),
        base_url=base_url,
        api_key=api_key,
        api=_api(_pick(o.get("api"), preset.get("api"), models.get("api"))),
        stream=_bool(_pick(o.get("stream"), preset.get("stream"), models.get("stream")), True),
        max_tokens=_pick(o.get("max_tokens"), preset.get("max_tokens")),
        temperature=_pick(o.get("temperature"), preset.get("temperature")),
        reasoning_effort=_pick(o.get("reasoning_effort"), preset.get("reasoning_effort")),
        max_retries=int(_pick(preset.get("max_retries"), models.get("max_retries"), 4)),
        backoff_seconds=float(_pick(models.get("backoff_seconds"), 0.5)),
        timeout=float(_pick(preset.get("timeout"), models.get("timeout"), 600.0)),
    )
