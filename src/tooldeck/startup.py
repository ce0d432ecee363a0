"""What every entry does at start (``serve`` in launch.py, the CLI's verbs):
the parents the person allows beyond the launch roots, and the authority
notices on stderr. Below the entries, so the CLI and the fast ``serve`` path
share it without importing each other."""

from __future__ import annotations

import os
import sys

from tooldeck import authority
from tooldeck.config import ConfigError, load_config


def allowed_parents(extra: list[str]) -> list[str]:
    """The parents the person allows beyond the launch roots: ``allow_roots``
    of the user's config file (never a project file) plus ``--allow-root``.
    Raises ValueError (ConfigError) for a malformed config file."""
    return [*(str(p) for p in load_config(None).allow_roots), *extra]


_announcing = False


def announce_authority(project_dir: str | os.PathLike[str] | None, state_dir: str | os.PathLike[str] | None) -> None:
    """From now on, name once on stderr (never stdout: a stdio MCP server speaks
    there) every declaration ignored for want of authority, with the command
    that allows it; starting with what ``project_dir``'s ``.tooldeck.toml``
    asks (SPEC §3). A broken user config is left to the code that reads it."""
    global _announcing

    if not _announcing:
        _announcing = True
        authority.announce_to(lambda notice: print(f"tooldeck: {notice.text()}", file=sys.stderr, flush=True))
    if project_dir is not None:
        try:
            load_config(project_dir, state_dir=state_dir)
        except ConfigError:
            pass
