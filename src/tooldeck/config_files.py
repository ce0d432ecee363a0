"""The configuration files' names and bytes: where the person's file is, the
project file's name, the keys only the person's file may set, and reading a
file without blocking on a FIFO (through
:func:`tooldeck.workspace.person_files.read_named`, as every file the person
names). Standard library and that module only; both the loader
(:mod:`tooldeck.config`) and a project file's authority check
(:mod:`tooldeck.config_authority`) build on it, so neither imports the other
back."""

from __future__ import annotations

import os
from pathlib import Path

from tooldeck.workspace.person_files import read_named

PROJECT_FILE = ".tooldeck.toml"
# set by the person's own file only, approved project file or not (config_authority)
USER_ONLY: dict[str, str] = {
    "allow_roots": "`allow_roots` (folders a model may open)",
    "web": "`[web]` (which hosts and networks webpage_to_markdown may reach)",
    "index": "`[index]` (where code is sent to be embedded)",
}
USER_ONLY_KEYS = frozenset(USER_ONLY)
MAX_BYTES = 1 << 20


def user_config_path() -> Path:
    """``$TOOLDECK_CONFIG``, else ``$XDG_CONFIG_HOME/tooldeck/config.toml``."""
    explicit = os.environ.get("TOOLDECK_CONFIG")
    if explicit:
        return Path(explicit).expanduser()
    base = os.environ.get("XDG_CONFIG_HOME") or str(Path.home() / ".config")
    return Path(base) / "tooldeck" / "config.toml"


def read_bytes(path: Path, limit: int = MAX_BYTES) -> bytes | None:
    """A config file's bytes (links followed), None when absent. A FIFO, a
    device or a directory raises OSError instead of blocking start-up."""
    try:
        return read_named(path, limit)
    except FileNotFoundError:
        return None
