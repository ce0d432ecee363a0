"""Configuration files (SPEC §7): the user's TOML file and a project's ``.tooldeck.toml``.

Why two files with different trust: the user's file is written by the person
who runs tooldeck, so it may widen authority (``allow_roots``, model keys,
permissive shell runtimes); a project file arrives with a checkout, so it may
only add project conveniences (model presets, shell runtimes that the
sandbox still confines, tool profiles) and can never widen the roots. The
split is enforced here: :data:`USER_ONLY_KEYS` found in a project file are
ignored and reported.

Layout (every section optional)::

    allow_roots = ["~/src"]              # user file only: parents a model may open
    [models.presets.fast]                # model presets (list_models, ChatMD <config model>)
    model = "gpt-4.1-mini"
    [shell.runtimes.dev]                 # shell runtimes (see docs/shell.md)
    extends = "builtin:workspace-development@1"
    [output]
    budget_tokens = 20000

Environment variables override files where a setting declares one
(``OPENAI_BASE_URL``...); that is resolved by the consumers, not here.
"""

from __future__ import annotations

import os
import tomllib
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

PROJECT_FILE = ".tooldeck.toml"
USER_ONLY_KEYS = frozenset({"allow_roots"})


class ConfigError(ValueError):
    """A configuration file that cannot be read or parsed (names the file)."""


def user_config_path() -> Path:
    """``$TOOLDECK_CONFIG``, else ``$XDG_CONFIG_HOME/tooldeck/config.toml``."""
    explicit = os.environ.get("TOOLDECK_CONFIG")
    if explicit:
        return Path(explicit).expanduser()
    base = os.environ.get("XDG_CONFIG_HOME") or str(Path.home() / ".config")
    return Path(base) / "tooldeck" / "config.toml"


def _read_toml(path: Path) -> dict[str, Any]:
    if str(path) == os.devnull:  # the usual way to say "no user config"
        return {}
    if path.exists() and not path.is_file():  # a FIFO would block start-up forever
        raise ConfigError(f"{path}: not a regular file")
    try:
        with path.open("rb") as fh:
            return tomllib.load(fh)
    except FileNotFoundError:
        return {}
    except tomllib.TOMLDecodeError as exc:
        raise ConfigError(f"{path}: {exc}") from exc
    except OSError as exc:
        raise ConfigError(f"{path}: cannot read ({exc.strerror})") from exc


def _merge(base: dict[str, Any], over: dict[str, Any]) -> dict[str, Any]:
    """Deep merge: tables merge key by key, anything else in ``over`` wins."""
    out = dict(base)
    for key, value in over.items():
        if isinstance(value, dict) and isinstance(out.get(key), dict):
            out[key] = _merge(out[key], value)
        else:
            out[key] = value
    return out


@dataclass(frozen=True)
class Config:
    """The merged configuration plus where each part came from."""

    data: dict[str, Any] = field(default_factory=dict)
    user_path: Path | None = None
    project_path: Path | None = None
    ignored: tuple[str, ...] = ()  # user-only keys a project file tried to set

    def section(self, *names: str) -> dict[str, Any]:
        """The table at ``names`` (``section("shell", "runtimes")``), or {}."""
        node: Any = self.data
        for name in names:
            node = node.get(name) if isinstance(node, dict) else None
        return node if isinstance(node, dict) else {}

    def get(self, key: str, default: Any = None) -> Any:
        return self.data.get(key, default)

    @property
    def allow_roots(self) -> list[Path]:
        """Parents the person allows model-facing tools to open (user file only)."""
        raw = self.data.get("allow_roots") or []
        if isinstance(raw, str):
            raw = [raw]
        return [Path(str(p)).expanduser() for p in raw if str(p).strip()]


def load_config(project_dir: str | os.PathLike[str] | None = None, *, user_path: Path | None = None) -> Config:
    """The user's file merged under the project's ``.tooldeck.toml`` (project wins).

    ``project_dir`` is usually the first root; None reads the user file only.
    Raises :class:`ConfigError` naming the file when one is malformed."""
    upath = user_path if user_path is not None else user_config_path()
    user = _read_toml(upath)
    ppath = Path(project_dir) / PROJECT_FILE if project_dir is not None else None
    project = _read_toml(ppath) if ppath is not None else {}
    ignored = tuple(sorted(k for k in project if k in USER_ONLY_KEYS))
    project = {k: v for k, v in project.items() if k not in USER_ONLY_KEYS}
    return Config(
        data=_merge(user, project),
        user_path=upath if user else None,
        project_path=ppath if project or ignored else None,
        ignored=ignored,
    )
