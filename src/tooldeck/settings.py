"""tooldeck's own settings: an allowlisted, typed registry persisted in the store.

Why a registry and not a free-form dict: ``app_settings`` lets a model change
preferences, so every key it can touch is declared here with a type, bounds
and a group, and nothing outside the list is reachable. Secrets (an API key)
are write-only: listing or reading one shows only whether it is set.

Who may set a key (SPEC §3, authority): every setting states ``person_only``,
either None (a preference a model may change through ``app_settings``) or
the reason only the person may set it: it names an endpoint that receives
credentials, a secret, a command or a path outside the roots. Such a key is
written only with ``by="person"`` (``tooldeck settings set``, :mod:`tooldeck.cli_settings`);
a tool gets ``denied``. Each stored row records who wrote it, and a
person-only value a tool stored (before the rule existed) is ignored.

Effective value of a key, the one precedence (docs/configuration.md): its
environment variable when one is declared and set; else ``<name> = ...``
under ``[<group>]`` in the configuration files (the person's own file, and a
project's ``.tooldeck.toml`` only as far as :mod:`tooldeck.config_authority`
lets it: its safe subset, or all of it once the person approved its bytes;
a value of the wrong type there is skipped); else the stored value; else the
default (SPEC §7: environment overrides). Domains read settings with
:func:`setting` (cheap: the files and the table are read at most once a
second per process, so hot paths do not hammer the disk or SQLite).
"""

from __future__ import annotations

import difflib
import json
import logging
import math
import os
import re
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Literal

from tooldeck.config import Config, ConfigError, load_config
from tooldeck.core.errors import ErrorCode, ToolError, invalid_arguments
from tooldeck.state.settings_table import SettingsTable
from tooldeck.store.db import Store

if TYPE_CHECKING:
    from tooldeck.runtime_view import RuntimeView

log = logging.getLogger("tooldeck.settings")
Source = Literal["env", "config", "stored", "default"]
SettingType = Literal["bool", "int", "float", "string", "enum"]
Writer = Literal["person", "tool"]

ENDPOINT = "it names the endpoint that receives the API key and every prompt"
SECRET = "it is a secret: the API key sent to the model endpoint"
USER_CONFIG = "~/.config/tooldeck/config.toml, or $TOOLDECK_CONFIG"


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
    format: Literal["url"] | None = None  # a string that must be an http(s) URL
    # why only the person may set it (None: a model may, through app_settings); no default, so
    # every new setting has to answer the question
    person_only: str | None = field(kw_only=True)

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
            person_only=None,
        ),
        Setting(
            "tree.default_mode",
            "enum",
            "auto",
            "Default get_file_tree mode.",
            choices=("auto", "full", "folders", "selected"),
            person_only=None,
        ),
        Setting(
            "code_maps.enabled",
            "bool",
            True,
            "Build codemaps (get_code_structure, selection codemaps).",
            person_only=None,
        ),
        Setting(
            "code_maps.auto_codemap",
            "bool",
            True,
            "New selections add the imports and definitions of full/slices files as codemaps.",
            person_only=None,
        ),
        Setting(
            "code_maps.auto_max_files",
            "int",
            10,
            "At most this many automatic codemap files per selection (ranked by relevance).",
            minimum=0,
            maximum=100,
            person_only=None,
        ),
        Setting(
            "context_builder.default_budget",
            "int",
            60_000,
            "Token budget context_builder fits the selection into when the call gives none.",
            minimum=1_000,
            maximum=2_000_000,
            person_only=None,
        ),
        Setting(
            "context_builder.response_type",
            "enum",
            "clarify",
            "Default context_builder response_type.",
            choices=("clarify", "question", "plan", "review"),
            person_only=None,
        ),
        Setting(
            "tokens.encoding",
            "enum",
            "o200k_base",
            "BPE encoding for token counts and breakdowns (o200k: GPT-4o and later; cl100k: GPT-4/3.5).",
            choices=("o200k_base", "cl100k_base"),
            person_only=None,
        ),
        Setting(
            "editing.verbose",
            "bool",
            False,
            "apply_edits shows a unified diff unless the call says otherwise.",
            person_only=None,
        ),
        Setting(
            "editing.fuzzy_threshold",
            "float",
            0.9,
            "Similarity a fuzzy apply_edits match needs (1.0 = exact only).",
            minimum=0.5,
            maximum=1.0,
            person_only=None,
        ),
        Setting(
            "prompt_packaging.include_tree",
            "bool",
            True,
            "Exported context packages include the file tree.",
            person_only=None,
        ),
        Setting(
            "prompt_packaging.include_codemaps",
            "bool",
            True,
            "Exported context packages include codemap files.",
            person_only=None,
        ),
        Setting(
            "prompt_packaging.line_numbers",
            "bool",
            False,
            "Number the lines of full files in context packages (slices are always numbered).",
            person_only=None,
        ),
        Setting(
            "models.default_model",
            "string",
            None,
            "Default model id for chat and agents (TOOLDECK_MODEL overrides).",
            nullable=True,
            env="TOOLDECK_MODEL",
            # a model name or preset id: it picks among the endpoints the person configured, never names one
            person_only=None,
        ),
        Setting(
            "models.base_url",
            "string",
            None,
            "OpenAI-compatible base URL (OPENAI_BASE_URL overrides). Set by the person only.",
            nullable=True,
            env="OPENAI_BASE_URL",
            format="url",
            person_only=ENDPOINT,
        ),
        Setting(
            "models.api_key",
            "string",
            None,
            "API key for the model endpoint (OPENAI_API_KEY overrides). Write-only: never shown. "
            "Set by the person only.",
            nullable=True,
            secret=True,
            env="OPENAI_API_KEY",
            person_only=SECRET,
        ),
    )
}
_CACHE_SECONDS = 1.0


def nearest(word: str, names: list[str] | tuple[str, ...]) -> str | None:
    """The name most like ``word`` (whole, or its last dotted part), if any is close."""
    by_tail = {n.split(".", 1)[-1]: n for n in names}
    hit = difflib.get_close_matches(word, names, n=1, cutoff=0.5)
    if hit:
        return hit[0]
    tail = difflib.get_close_matches(word.split(".", 1)[-1], list(by_tail), n=1, cutoff=0.6)
    return by_tail[tail[0]] if tail else None


def lookup(key: str) -> Setting:
    """The setting ``key``; an unknown key is ``not_found`` listing every key
    there is and the nearest one (RepoPrompt's keys, ``ui.*`` or
    ``models.planning_model``, get the closest tooldeck has, if any)."""
    spec = REGISTRY.get(key)
    if spec is None:
        keys = sorted(REGISTRY)
        near = nearest(key, keys)
        hint = f"; nearest: {near}" if near else ""
        raise ToolError(
            ErrorCode.NOT_FOUND,
            f"unknown setting {key!r}{hint}. The settings are: {', '.join(keys)}",
            {"field": "key", "nearest": near, "keys": keys},
        )
    return spec


def validate(spec: Setting, value: Any) -> Any:
    """``value`` checked against ``spec`` (JSON types, no coercion from strings),
    or invalid_arguments naming the field ``value``."""

    def bad(expected: str) -> ToolError:
        # never echo a secret, nor a URL (it may carry user:password@)
        got = "a value of another kind" if spec.secret else "that value" if spec.format else json.dumps(value)[:60]
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
    if (spec.secret or spec.format) and _CONTROL.search(value):
        raise bad("a single line without control characters")
    if spec.format == "url" and not _is_url(value):
        raise bad("an http:// or https:// URL with a host and no user:password@ (the key goes in models.api_key)")
    return value


_CONTROL = re.compile(r"[\x00-\x1f\x7f]")


def _is_url(value: str) -> bool:
    from urllib.parse import urlsplit

    try:
        parts = urlsplit(value)
        parts.port  # noqa: B018 - raises ValueError for a port that is not a number
    except ValueError:
        return False
    no_space = not any(c.isspace() for c in value)
    return parts.scheme in ("http", "https") and bool(parts.hostname) and "@" not in parts.netloc and no_space


def parse_text(spec: Setting, text: str) -> Any:
    """A value the person typed (``tooldeck settings set KEY VALUE``), read
    strictly by the key's type: ``true``/``false`` only for a boolean (never
    ``1`` or ``yes``), digits for an integer, a decimal number for a float;
    strings as given. Then :func:`validate`."""

    def bad(expected: str) -> ToolError:
        got = "another value" if spec.secret or spec.format else json.dumps(text)[:60]
        return invalid_arguments(f"{spec.key} takes {expected}, got {got}", field="value")

    value: Any = text
    if spec.type == "bool":
        if text not in ("true", "false"):
            raise bad("true or false")
        value = text == "true"
    elif spec.type == "int":
        if not re.fullmatch(r"[+-]?[0-9]+", text):
            raise bad("an integer (digits only)")
        value = int(text)
    elif spec.type == "float":
        if not re.fullmatch(r"[+-]?(?:[0-9]+(?:\.[0-9]*)?|\.[0-9]+)(?:[eE][+-]?[0-9]+)?", text):
            raise bad("a decimal number")
        value = float(text)
    return validate(spec, value)


def denial(spec: Setting) -> ToolError:
    """The ``denied`` a tool gets for a person-only key: why, and how the person sets it."""
    how = (
        f"`tooldeck settings set {spec.key} -` (reads the value from stdin)"
        if spec.secret
        else (f"`tooldeck settings set {spec.key} VALUE`")
    )
    group, name = spec.key.split(".", 1)
    env = f", or the {spec.env} environment variable" if spec.env else ""
    return ToolError(
        ErrorCode.DENIED,
        f"{spec.key} is set by the person only ({spec.person_only}); a tool cannot set or reset it. "
        f"Ask the person to run {how}, or to put `{name} = ...` under [{group}] in their user config "
        f"({USER_CONFIG}){env}.",
        {"field": "key", "person_only": True},
    )


def _num(x: float | None) -> str:
    if x is None:
        return "?"
    return str(int(x)) if float(x).is_integer() else str(x)


class Settings:
    """The effective value of each registry key (env, files, stored, default)
    and the stored values' writes. ``files`` gives the merged configuration
    files (None: no files, the stored table only)."""

    def __init__(self, store: Store, files: Callable[[], Config] | None = None) -> None:
        self.store = store
        self.table = SettingsTable(store)
        self._files = files
        self._cache: tuple[dict[str, Any], dict[str, Any]] = ({}, {})
        self._cache_at = 0.0
        self._lock = threading.Lock()

    def _layers(self) -> tuple[dict[str, Any], dict[str, Any]]:
        """(from the config files, stored), each key → value, re-read at most once a second."""
        now = time.monotonic()
        with self._lock:
            if now - self._cache_at < _CACHE_SECONDS:
                return self._cache
        stored = {key: value for key, value, by in self.table.rows() if _honoured(key, by)}
        layers = (self._from_files(), stored)
        with self._lock:
            self._cache, self._cache_at = layers, now
        return layers

    def _from_files(self) -> dict[str, Any]:
        if self._files is None:
            return {}
        try:
            cfg = self._files()
        except ConfigError as exc:  # the person's broken file: its readers say so; settings fall through
            log.warning("tooldeck: settings ignore the config files: %s", exc)
            return {}
        found: dict[str, Any] = {}
        for key, spec in REGISTRY.items():
            group, name = key.split(".", 1)
            value = cfg.section(group).get(name)
            if value is None:
                continue
            try:
                found[key] = validate(spec, value)
            except ToolError as exc:
                log.warning("tooldeck: [%s] %s in the config is ignored: %s", group, name, exc.message)
        return found

    def source(self, key: str) -> Source:
        spec = lookup(key)
        if spec.env and os.environ.get(spec.env):
            return "env"
        files, stored = self._layers()
        return "config" if key in files else "stored" if key in stored else "default"

    def get(self, key: str) -> Any:
        """The effective value (secrets included: for code, never for models)."""
        spec = lookup(key)
        if spec.env and os.environ.get(spec.env):
            return os.environ[spec.env]
        files, stored = self._layers()
        if key in files:
            return files[key]
        return stored.get(key, spec.default)

    def set(self, key: str, value: Any, *, by: Writer = "tool") -> Any:
        """Store ``value`` (validated); ``None`` restores the default. ``by``
        says who asks: a person-only key refuses ``"tool"`` with ``denied``."""
        spec = lookup(key)
        if spec.person_only and by != "person":
            raise denial(spec)
        if value is None:
            self.table.delete(key)
        else:
            value = validate(spec, value)
            self.table.put(key, value, by)
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
            if spec.person_only:
                out["person_only"] = spec.person_only
            out["description"] = spec.description
        return out


def _honoured(key: str, set_by: str) -> bool:
    """A stored row counts when its key exists and, for a person-only key,
    the person wrote it (a row a tool wrote before the rule is ignored)."""
    spec = REGISTRY.get(key)
    return spec is not None and (not spec.person_only or set_by == "person")


def settings_service(rt: RuntimeView) -> Settings:
    return rt.service("settings", lambda r: Settings(r.store, files=lambda: _files_of(r)))


def _files_of(rt: RuntimeView) -> Config:
    """The configuration files of ``rt``: the person's, and what applies of the first root's project file."""
    return load_config(rt.workspace.primary.path, state_dir=rt.state_dir)


def setting(rt: RuntimeView, key: str) -> Any:
    """The effective value of ``key`` for code (not for showing to a model)."""
    return settings_service(rt).get(key)
