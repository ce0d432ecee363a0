"""Which endpoint, key and model a conversation uses.

Precedence, most specific first: the environment (``OPENAI_BASE_URL``,
``OPENAI_API_KEY``: SPEC §7, environment overrides), then a preset named by
``<config model="...">`` (``[models.presets.<id>]`` in the config), then the
``[models]`` table of the config files, then the stored settings
(``models.base_url``/``models.api_key``, which only the person sets, with
``tooldeck settings set``; ``models.default_model``, which ``app_settings``
may also set). A preset may name its key by variable (``api_key_env``)
so the key itself never sits in a project file.

The endpoint and the key are authority (SPEC §3: an endpoint that receives
credentials): no model-facing tool can set either, and the key is kept out
of this dataclass's ``repr`` so no log line or error that prints a
ModelConfig carries it.
"""

from __future__ import annotations

import os
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Literal

from tooldeck.config import Config
from tooldeck.llm.errors import ModelError

if TYPE_CHECKING:
    from tooldeck.runtime import Runtime

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
    key_env = preset.get("api_key_env")
    env_url, env_key = os.environ.get("OPENAI_BASE_URL"), os.environ.get("OPENAI_API_KEY")
    o = {k: v for k, v in overrides.items() if v is not None}
    return ModelConfig(
        model=str(_pick(preset.get("model"), name)),
        base_url=_pick(env_url, preset.get("base_url"), models.get("base_url"), _stored(rt, "models.base_url")),
        api_key=_pick(
            os.environ.get(key_env) if key_env else None,
            env_key,
            preset.get("api_key"),
            models.get("api_key"),
            _stored(rt, "models.api_key"),
        ),
        api=_api(_pick(o.get("api"), preset.get("api"), models.get("api"))),
        stream=_bool(_pick(o.get("stream"), preset.get("stream"), models.get("stream")), True),
        max_tokens=_pick(o.get("max_tokens"), preset.get("max_tokens")),
        temperature=_pick(o.get("temperature"), preset.get("temperature")),
        reasoning_effort=_pick(o.get("reasoning_effort"), preset.get("reasoning_effort")),
        max_retries=int(_pick(preset.get("max_retries"), models.get("max_retries"), 4)),
        backoff_seconds=float(_pick(models.get("backoff_seconds"), 0.5)),
        timeout=float(_pick(preset.get("timeout"), models.get("timeout"), 600.0)),
    )
