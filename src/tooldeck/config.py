"""Configuration files (SPEC §7): the user's TOML file and a project's ``.tooldeck.toml``.

Why two files with different trust (SPEC §3, "authority"): the user's file is
written by the person who runs tooldeck, so everything in it applies
(``allow_roots``, model endpoints and keys, permissive shell runtimes). A
project file sits inside a root, where the model can write, so only its
safe subset applies (model presets without endpoint or key, roles,
workflows) unless the person approved its exact bytes with ``tooldeck trust
allow``; see :mod:`tooldeck.config_authority` for the split and the table.
What is ignored is reported (:attr:`Config.notices`), and a project file that
cannot be parsed is ignored whole instead of failing: the model must not be
able to disable tools by writing a broken file. A broken *user* file stays
an error (:class:`ConfigError`): the person can fix it.

Layout (every section optional)::

    allow_roots = ["~/src"]              # user file only: parents a model may open
    [models]                             # model presets (list_models, ChatMD <config model>)
    default_model = "fast"
    [models.presets.fast]
    model = "gpt-4.1-mini"
    [shell.runtimes.dev]                 # shell runtimes (see docs/shell.md): user or approved file
    extends = "builtin:workspace-development@1"

Environment variables override files where a setting declares one
(``OPENAI_BASE_URL``...); that is resolved by the consumers, not here.
"""

from __future__ import annotations

import os
import tomllib
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from tooldeck.config_files import PROJECT_FILE, read_bytes, user_config_path

if TYPE_CHECKING:  # imported when a project file is read: `tooldeck serve` starts without them
    from tooldeck.authority import Notice


class ConfigError(ValueError):
    """A configuration file that cannot be read or parsed (names the file)."""


def _read_toml(path: Path) -> dict[str, Any]:
    """The person's own file: an error here is theirs to fix, so it is raised."""
    if str(path) == os.devnull:  # the usual way to say "no user config"
        return {}
    hint = "fix your config file, or start with TOOLDECK_CONFIG=/dev/null to do without it"
    try:
        raw = read_bytes(path)  # a FIFO would block start-up forever: refused
        return tomllib.loads(raw.decode("utf-8")) if raw else {}
    except RecursionError as exc:
        raise ConfigError(f"your config file {path} is nested too deeply to be a configuration; {hint}") from exc
    except (tomllib.TOMLDecodeError, UnicodeDecodeError) as exc:
        raise ConfigError(f"your config file {path} is not valid TOML ({exc}); {hint}") from exc
    except OSError as exc:
        raise ConfigError(f"your config file {path} cannot be read ({exc.strerror or exc}); {hint}") from exc


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
    notices: tuple[Notice, ...] = ()  # what of the project file was ignored, and why
    project_approved: bool = False  # the project file's bytes are approved: all of it applies

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


def load_config(
    project_dir: str | os.PathLike[str] | None = None,
    *,
    user_path: Path | None = None,
    state_dir: str | os.PathLike[str] | None = None,
) -> Config:
    """The user's file merged under what applies of the project's ``.tooldeck.toml``
    (project wins where it may set a key at all).

    ``project_dir`` is usually the first root; None reads the user file only.
    ``state_dir`` holds the approvals (default: the usual state directory).
    Raises :class:`ConfigError` naming the user's file when it is malformed; a
    malformed project file is ignored and reported in :attr:`Config.notices`."""
    upath = user_path if user_path is not None else user_config_path()
    user = _read_toml(upath)
    if project_dir is None:
        return Config(data=user, user_path=upath if user else None)
    from tooldeck.config_authority import project_layer  # lazy: the CLI's start reads no project file

    layer = project_layer(Path(project_dir) / PROJECT_FILE, user=user, state_dir=state_dir)
    return Config(
        data=_merge(user, layer.data),
        user_path=upath if user else None,
        project_path=layer.path,
        ignored=layer.ignored,
        notices=layer.notices,
        project_approved=layer.approved,
    )
