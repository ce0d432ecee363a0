"""Model presets and agent roles, from the config files.

A preset is ``[models.presets.<id>]`` (``model``, ``name``, ``description``,
``modes``, ``roles``, plus the endpoint keys :func:`resolve_model` reads).
The four agent roles of seed 004 (``explore``, ``engineer``, ``pair``,
``design``) map to a preset through ``[models.roles]`` or a preset's own
``roles`` list; an unmapped role uses the default model. Why a role layer:
an orchestrating client names *what kind* of agent it wants and the project
decides which model that is.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from tooldeck.config import Config, ConfigError, load_config
from tooldeck.core.errors import ErrorCode, ToolError
from tooldeck.llm.errors import ModelError
from tooldeck.llm.settings import ModelConfig, resolve_model
from tooldeck.llm.settings import default_model as resolve_default

if TYPE_CHECKING:
    from tooldeck.runtime import Runtime

ROLES = ("explore", "engineer", "pair", "design")
MODES = ("chat", "plan", "edit", "review")
ENABLE_HINT = (
    "set a model: `default_model` under [models] in .tooldeck.toml or the user config, "
    "app_settings op=set key=models.default_model, or the TOOLDECK_MODEL environment variable; "
    "the endpoint and key come from the person: OPENAI_BASE_URL / OPENAI_API_KEY, [models] in the user config, "
    "or `tooldeck settings set models.base_url|models.api_key` (a tool cannot set them)"
)


@dataclass(frozen=True)
class Preset:
    id: str
    name: str
    description: str
    model: str
    modes: tuple[str, ...] = MODES
    roles: tuple[str, ...] = field(default_factory=tuple)

    def to_dict(self) -> dict[str, Any]:
        return {"id": self.id, "name": self.name, "description": self.description, "model": self.model,
                "modes": list(self.modes), "roles": list(self.roles)}  # fmt: skip


def config_of(rt: Runtime) -> Config:
    try:
        return load_config(rt.workspace.primary.path, state_dir=rt.state_dir)
    except ConfigError as exc:
        raise ToolError(ErrorCode.INVALID_ARGUMENTS, f"config: {exc}") from exc


def default_model(rt: Runtime, cfg: Config | None = None) -> str | None:
    """The default model (:func:`tooldeck.llm.settings.default_model`: env, files, stored)."""
    try:
        return resolve_default(cfg or config_of(rt), rt)
    except ModelError as exc:
        raise ToolError(ErrorCode.INVALID_ARGUMENTS, str(exc)) from exc


def presets(rt: Runtime, cfg: Config | None = None) -> list[Preset]:
    """Configured presets; with none, the default model as preset ``default``."""
    cfg = cfg or config_of(rt)
    models = cfg.section("models")
    table = models.get("presets") if isinstance(models.get("presets"), dict) else {}
    roles_map = models.get("roles") if isinstance(models.get("roles"), dict) else {}
    out: list[Preset] = []
    for pid, spec in table.items():
        if not isinstance(spec, dict):
            continue
        roles = {str(r) for r in _strings(spec, "roles", [], pid) if r in ROLES}
        roles |= {r for r, target in roles_map.items() if target == pid and r in ROLES}
        modes = tuple(m for m in _strings(spec, "modes", MODES, pid) if m in MODES) or MODES
        name, desc = str(spec.get("name") or pid), str(spec.get("description") or "")
        out.append(Preset(str(pid), name, desc, str(spec.get("model") or pid), modes, tuple(sorted(roles))))
    if not out:
        name = default_model(rt, cfg)
        if name:
            out.append(Preset("default", name, "The default model (models.default_model).", name, MODES, ROLES))
    return out


def _strings(spec: dict[str, Any], key: str, default: Any, pid: str) -> Any:
    """A list of strings (``modes``, ``roles``): a bare string is an error, not a list of its letters."""
    value = spec.get(key, default)
    if not isinstance(value, list | tuple) or not all(isinstance(v, str) for v in value):
        raise ToolError(ErrorCode.INVALID_ARGUMENTS, f"config: models.presets.{pid}.{key}: expected a list of "
                        f"strings, got {value!r}; fix the configuration file")  # fmt: skip
    return value


def preset_for(rt: Runtime, ref: str | None, cfg: Config | None = None) -> str | None:
    """A role label or a preset id/name → the preset id (or model name) to resolve; None: default."""
    if ref is None:
        return None
    cfg = cfg or config_of(rt)
    all_presets = presets(rt, cfg)
    for p in all_presets:
        if ref in (p.id, p.name):
            return None if p.id == "default" else p.id
    if ref in ROLES:
        for p in all_presets:
            if ref in p.roles:
                return None if p.id == "default" else p.id
        return None
    return ref


def model_config(rt: Runtime, ref: str | None = None, *, field: str = "model") -> ModelConfig:
    """The endpoint and model for ``ref`` (preset id, role, model name, or None).

    ``ref`` comes from a model; it picks among what the person configured and
    never names an endpoint, so a URL is refused rather than sent as a model name."""
    if ref is not None and "://" in ref:
        raise ToolError(
            ErrorCode.INVALID_ARGUMENTS,
            f"field `{field}`: name a preset, a role or a model id from list_models, not a URL; the endpoint "
            "is set by the person (OPENAI_BASE_URL or `tooldeck settings set models.base_url`)",
            {"fields": [field]},
        )
    cfg = config_of(rt)
    name = preset_for(rt, ref, cfg) or default_model(rt, cfg)
    try:
        return resolve_model(cfg, name, rt=rt)
    except ModelError as exc:
        raise ToolError(ErrorCode.MODEL_ERROR, f"no model configured ({exc.message}); {ENABLE_HINT}",
                        {"fields": [field]}) from exc  # fmt: skip


def model_available(rt: Runtime) -> bool:
    try:
        model_config(rt)
    except ToolError:
        return False
    return True
