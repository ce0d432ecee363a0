"""Which endpoint, key and model a conversation uses.

Precedence, most specific first (the one table: docs/configuration.md): the
environment (``OPENAI_BASE_URL``, ``OPENAI_API_KEY``: SPEC §7, environment
overrides), then a preset named by ``<config model="...">``
(``[models.presets.<id>]`` in the config), then the ``[models]`` table of the
config files, then the stored settings (``models.base_url``/``models.api_key``,
which only the person sets, with ``tooldeck settings set``;
``models.default_model``, which ``app_settings`` may also set). The last two
are the registry's own order (:func:`tooldeck.settings.setting`: env, files,
stored, default); this module adds the conversation and the preset above them.
A preset may name its key by variable (``api_key_env``) so the key itself
never sits in a file. A project's ``.tooldeck.toml``
sets ``base_url``, ``api_key`` and ``api_key_env`` only when the person
approved it (:mod:`tooldeck.config_authority`): an endpoint receives the key.
Config values are typed: ``stream = "1"`` is an error naming the key.

The endpoint and the key are authority (SPEC §3: an endpoint that receives
credentials): no model-facing tool can set either, and the key is kept out
of :class:`ModelConfig`'s ``repr`` so no log line or error that prints one
carries it.
"""

from __future__ import annotations

import os
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Literal

from tooldeck.config import Config
from tooldeck.llm.errors import ModelError
from tooldeck.settings import setting

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
        return setting(rt, key)
    except Exception:  # an unreadable store must not stop a run that has env/config values
        return None


def _api(value: Any) -> Api:
    if value in (None, ""):
        return "chat"
    if value not in ("chat", "responses"):
        raise ModelError("config", f"api must be 'chat' or 'responses', not {value!r}")
    return value  # type: ignore[no-any-return]


def _is_number(v: Any) -> bool:
    return isinstance(v, int | float) and not isinstance(v, bool)


_CHECKS: dict[str, tuple[Any, str]] = {
    "model": (lambda v: isinstance(v, str), "a string"),
    "base_url": (lambda v: isinstance(v, str), "a string (a URL)"),
    "api_key": (lambda v: isinstance(v, str), "a string"),
    "api_key_env": (lambda v: isinstance(v, str), "a string (a variable name)"),
    "api": (lambda v: isinstance(v, str), "'chat' or 'responses'"),
    "stream": (lambda v: isinstance(v, bool), "true or false (a TOML boolean, not a string)"),
    "max_tokens": (lambda v: isinstance(v, int) and not isinstance(v, bool) and v > 0, "a positive integer"),
    "temperature": (_is_number, "a number"),
    "reasoning_effort": (lambda v: isinstance(v, str), "a string"),
    "max_retries": (lambda v: isinstance(v, int) and not isinstance(v, bool) and v >= 0, "an integer >= 0"),
    "backoff_seconds": (lambda v: _is_number(v) and v >= 0, "a number of seconds"),
    "timeout": (lambda v: _is_number(v) and v > 0, "a positive number of seconds"),
}


def _first(name: str, *candidates: tuple[str, Any]) -> Any:
    """The first given value among ``(where, value)`` candidates, checked for
    its type: a config value of the wrong type (``stream = "1"``) is an error
    naming the key, never a truthy guess."""
    check, expected = _CHECKS[name]
    for where, value in candidates:
        if value is None or value == "":
            continue
        if not check(value):
            raise ModelError("config", f"{where}: expected {expected}, got {value!r}")
        return value
    return None


def default_model(config: Config | None, rt: Runtime | None = None) -> str | None:
    """The default model: ``$TOOLDECK_MODEL``, else ``default_model`` under
    ``[models]`` in ``config``, else the stored setting (the registry's
    order, :func:`tooldeck.settings.setting`)."""
    models = config.section("models") if config is not None else {}
    return _first(  # type: ignore[no-any-return]
        "model",
        ("TOOLDECK_MODEL", os.environ.get("TOOLDECK_MODEL")),
        ("models.default_model", models.get("default_model")),
        ("stored setting models.default_model", _stored(rt, "models.default_model")),
    )


def resolve_model(
    config: Config | None, model: str | None = None, *, rt: Runtime | None = None, **overrides: Any
) -> ModelConfig:
    """The ModelConfig for ``model`` (a preset id or a model name; None: the default).

    ``overrides`` (``api``, ``stream``, ``max_tokens``...) come from the
    conversation (``<config>``) and win over the preset. Raises ModelError
    (kind ``config``) when no model is named anywhere, or a value has the wrong type."""
    models = config.section("models") if config is not None else {}
    presets = models.get("presets") if isinstance(models.get("presets"), dict) else {}
    name = _first("model", ("the model name", model)) or default_model(config, rt)
    if name is None:
        raise ModelError(
            "config",
            'no model named: add <config model="..."/> to the file, or default_model under [models] in the config',
        )
    preset: dict[str, Any] = presets.get(name, {}) if isinstance(presets.get(name), dict) else {}
    o = {k: v for k, v in overrides.items() if v is not None}

    def pick(key: str, *, over: bool = False, top: bool = True, stored: bool = False) -> Any:
        candidates = [(f"<config {key}>", o.get(key))] if over else []
        candidates.append((f"models.presets.{name}.{key}", preset.get(key)))
        if top:
            candidates.append((f"models.{key}", models.get(key)))
        if stored:
            candidates.append((f"stored setting models.{key}", _stored(rt, f"models.{key}")))
        return _first(key, *candidates)

    key_env = pick("api_key_env", top=False)
    backoff = models.get("backoff_seconds")
    return ModelConfig(
        model=str(pick("model", top=False) or name),
        base_url=os.environ.get("OPENAI_BASE_URL") or pick("base_url", stored=True),
        api_key=(os.environ.get(key_env) if key_env else None) or os.environ.get("OPENAI_API_KEY")
        or pick("api_key", stored=True),
        api=_api(pick("api", over=True)),
        stream=_default(pick("stream", over=True), True),
        max_tokens=pick("max_tokens", over=True, top=False),
        temperature=pick("temperature", over=True, top=False),
        reasoning_effort=pick("reasoning_effort", over=True, top=False),
        max_retries=int(_default(pick("max_retries"), 4)),
        backoff_seconds=float(_default(_first("backoff_seconds", ("models.backoff_seconds", backoff)), 0.5)),
        timeout=float(_default(pick("timeout"), 600.0)),
    )


def _default(value: Any, default: Any) -> Any:
    return default if value is None else value
