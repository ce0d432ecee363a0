"""tooldeck's own settings: an allowlisted, typed registry persisted in the store.

Why a registry and not a free-form dict: ``app_settings`` lets a model change
preferences, so every key it can touch is declared here with a type, bounds
and a group, and nothing outside the list is reachable. Secrets (an API key)
are write-only: listing or reading one shows only whether it is set.

Effective value of a key: its environment variable when one is declared and
set, else the stored value, else the default (SPEC §7: environment overrides).
Domains read settings with :func:`setting` (cheap: one indexed SELECT, cached
per process for a second so hot paths do not hammer SQLite).
"""

from __future__ import annotations

import json
import math
import os
import threading
import time
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Literal

from tooldeck.core.errors import ErrorCode, ToolError, invalid_arguments
from tooldeck.store.db import Store

if TYPE_CHECKING:
    from tooldeck.runtime import Runtime

SettingType = Literal["bool", "int", "float", "string", "enum"]

MIGRATIONS = [
    """
    CREATE TABLE settings (
        key TEXT PRIMARY KEY,
        value TEXT NOT NULL,
        updated REAL NOT NULL
    );
    """,
]


@dataclass(frozen=True, slots=True)
class Setting:
    key: str  # "<group>.<name>"
    type: SettingType
    default: Any
    description: str
    choices: tuple[str, ...] = ()
    minimum: float | None = None
    maximum: float | None = None
    nullable: bool = False
    secret: bool = False
    env: str | None = None
    applies: Literal["now", "next start"] = "now"

    @property
    def group(self) -> str:
        return self.key.split(".", 1)[0]


GROUPS: dict[str, str] = {
    "output": "Size of tool results.",
    "tree": "get_file_tree defaults.",
    "code_maps": "Codemaps and the selection's automatic codemaps.",
    "context_builder": "context_builder defaults.",
    "tokens": "Token counting.",
    "editing": "apply_edits / apply_patch defaults.",
    "prompt_packaging": "What the exported context package contains.",
    "models": "Model endpoint and defaults (OpenAI-compatible).",
}

REGISTRY: dict[str, Setting] = {
    s.key: s
    for s in (
        Setting(
            "output.budget_tokens",
            "int",
            20_000,
            "Token budget of one tool result; larger results are paged (MCP clients reject > 25,000).",
            minimum=1_000,
            maximum=200_000,
            applies="next start",
        ),
        Setting(
            "tree.default_mode",
            "enum",
            "auto",
            "Default get_file_tree mode.",
            choices=("auto", "full", "folders", "selected"),
        ),
        Setting("code_maps.enabled", "bool", True, "Build codemaps (get_code_structure, selection codemaps)."),
        Setting(
            "code_maps.auto_codemap",
            "bool",
            True,
            "New selections add the imports and definitions of full/slices files as codemaps.",
        ),
        Setting(
            "code_maps.auto_max_files",
            "int",
            10,
            "At most this many automatic codemap files per selection (ranked by relevance).",
            minimum=0,
            maximum=100,
        ),
        Setting(
            "context_builder.default_budget",
            "int",
            60_000,
            "Token budget context_builder fits the selection into when the call gives none.",
            minimum=1_000,
            maximum=2_000_000,
        ),
        Setting(
            "context_builder.response_type",
            "enum",
            "clarify",
            "Default context_builder response_type.",
            choices=("clarify", "question", "plan", "review"),
        ),
        Setting(
            "tokens.encoding",
            "enum",
            "o200k_base",
            "BPE encoding for token counts and breakdowns (o200k: GPT-4o and later; cl100k: GPT-4/3.5).",
            choices=("o200k_base", "cl100k_base"),
        ),
        Setting("editing.verbose", "bool", False, "apply_edits shows a unified diff unless the call says otherwise."),
        Setting(
            "editing.fuzzy_threshold",
            "float",
            0.9,
            "Similarity a fuzzy apply_edits match needs (1.0 = exact only).",
            minimum=0.5,
            maximum=1.0,
        ),
        Setting("prompt_packaging.include_tree", "bool", True, "Exported context packages include the file tree."),
        Setting("prompt_packaging.include_codemaps", "bool", True, "Exported context packages include codemap files."),
        Setting(
            "prompt_packaging.line_numbers",
            "bool",
            False,
            "Number the lines of full files in context packages (slices are always numbered).",
        ),
        Setting(
            "models.default_model",
            "string",
            None,
            "Default model id for chat and agents (TOOLDECK_MODEL overrides).",
            nullable=True,
            env="TOOLDECK_MODEL",
        ),
        Setting(
            "models.base_url",
            "string",
            None,
            "OpenAI-compatible base URL (OPENAI_BASE_URL overrides).",
            nullable=True,
            env="OPENAI_BASE_URL",
        ),
        Setting(
            "models.api_key",
            "string",
            None,
            "API key for the model endpoint (OPENAI_API_KEY overrides). Write-only: never shown.",
            nullable=True,
            secret=True,
            env="OPENAI_API_KEY",
        ),
    )
}

_CACHE_SECONDS = 1.0


def lookup(key: str) -> Setting:
    spec = REGISTRY.get(key)
    if spec is None:
        close = [k for k in REGISTRY if k.split(".", 1)[-1] == key or k.startswith(key)]
        hint = f"; did you mean {', '.join(close[:3])}?" if close else "; list them with app_settings op=list"
        raise ToolError(ErrorCode.NOT_FOUND, f"unknown setting {key!r}{hint}", {"field": "key"})
    return spec


def validate(spec: Setting, value: Any) -> Any:
    """``value`` checked against ``spec`` (JSON types, no coercion from strings),
    or invalid_arguments naming the field ``value``."""

    def bad(expected: str) -> ToolError:
        got = "a value of another kind" if spec.secret else json.dumps(value)[:60]  # never echo a secret
        return invalid_arguments(f"field `value`: {spec.key} takes {expected}, got {got}", field="value")

    if spec.type == "bool":
        if not isinstance(value, bool):
            raise bad("true or false")
        return value
    if spec.type in ("int", "float"):
        if isinstance(value, bool) or not isinstance(value, (int, float)):
            raise bad("a number" if spec.type == "float" else "an integer")
        if spec.type == "int":
            if isinstance(value, float):
                if not value.is_integer():
                    raise bad("an integer")
                value = int(value)
        else:
            value = float(value)
            if not math.isfinite(value):
                raise bad("a finite number")
        too_low = spec.minimum is not None and value < spec.minimum
        if too_low or (spec.maximum is not None and value > spec.maximum):
            raise bad(f"a number in [{_num(spec.minimum)}, {_num(spec.maximum)}]")
        return value
    if spec.type == "enum":
        if value not in spec.choices:
            raise bad("one of " + ", ".join(spec.choices))
        return value
    if not isinstance(value, str):
        raise bad("a string")
    if "\x00" in value or len(value) > 4096:
        raise bad("a string without NUL bytes, at most 4096 characters")
    return value


def _num(x: float | None) -> str:
    if x is None:
        return "?"
    return str(int(x)) if float(x).is_integer() else str(x)


class Settings:
    """Reads and writes the registry's values in the store."""

    def __init__(self, store: Store) -> None:
        self.store = store
        store.migrate("settings", MIGRATIONS)
        self._cache: dict[str, Any] = {}
        self._cache_at = 0.0
        self._lock = threading.Lock()

    def _stored(self) -> dict[str, Any]:
        now = time.monotonic()
        with self._lock:
            if now - self._cache_at < _CACHE_SECONDS:
                return self._cache
        rows = self.store.execute("SELECT key, value FROM settings").fetchall()
        data = {r["key"]: json.loads(r["value"]) for r in rows if r["key"] in REGISTRY}
        with self._lock:
            self._cache, self._cache_at = data, now
        return data

    def source(self, key: str) -> Literal["env", "stored", "default"]:
        spec = lookup(key)
        if spec.env and os.environ.get(spec.env):
            return "env"
        return "stored" if key in self._stored() else "default"

    def get(self, key: str) -> Any:
        """The effective value (secrets included: for code, never for models)."""
        spec = lookup(key)
        if spec.env and os.environ.get(spec.env):
            return os.environ[spec.env]
        stored = self._stored()
        return stored.get(key, spec.default)

    def set(self, key: str, value: Any) -> Any:
        """Store ``value`` (validated); ``None`` restores the default."""
        spec = lookup(key)
        if value is None:
            with self.store.transaction() as db:
                db.execute("DELETE FROM settings WHERE key=?", (key,))
        else:
            value = validate(spec, value)
            with self.store.transaction() as db:
                db.execute(
                    "INSERT INTO settings(key, value, updated) VALUES(?, ?, ?) "
                    "ON CONFLICT(key) DO UPDATE SET value=excluded.value, updated=excluded.updated",
                    (key, json.dumps(value), time.time()),
                )
        with self._lock:
            self._cache_at = 0.0
        return value

    def describe(self, key: str, *, detailed: bool = True) -> dict[str, Any]:
        """What a model may see of one setting: secrets show only ``is_set``."""
        spec = lookup(key)
        out: dict[str, Any] = {"key": key, "type": spec.type}
        value = self.get(key)
        if spec.secret:
            out["is_set"] = value is not None and value != ""
        else:
            out["value"] = value
        out["source"] = self.source(key)
        if detailed:
            if not spec.secret:
                out["default"] = spec.default
            if spec.choices:
                out["choices"] = list(spec.choices)
            if spec.minimum is not None or spec.maximum is not None:
                out["range"] = [spec.minimum, spec.maximum]
            if spec.nullable:
                out["nullable"] = True
            if spec.secret:
                out["secret"] = True
            if spec.env:
                out["env"] = spec.env
            if spec.applies != "now":
                out["applies"] = spec.applies
            out["description"] = spec.description
        return out


def settings_service(rt: Runtime) -> Settings:
    return rt.service("settings", lambda r: Settings(r.store))


def setting(rt: Runtime, key: str) -> Any:
    """The effective value of ``key`` for code (not for showing to a model)."""
    return settings_service(rt).get(key)
