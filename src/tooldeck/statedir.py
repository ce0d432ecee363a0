"""Where tooldeck keeps its state, resolved with the standard library only.

Why a module of its own: the stdio start-up path (:mod:`tooldeck.mcp.handshake_cache`)
needs the state directory before anything heavy is imported, and the store
(:mod:`tooldeck.store.db`) needs the same answer; one function gives both.
"""

from __future__ import annotations

import os


def resolve_state_dir(explicit: str | None = None) -> str:
    """``explicit``, else ``$TOOLDECK_STATE_DIR``, else ``$XDG_STATE_HOME/tooldeck``
    (default ``~/.local/state/tooldeck``)."""
    if explicit:
        return os.path.expanduser(explicit)
    env = os.environ.get("TOOLDECK_STATE_DIR")
    if env:
        return os.path.expanduser(env)
    base = os.environ.get("XDG_STATE_HOME") or os.path.join(os.path.expanduser("~"), ".local", "state")
    return os.path.join(base, "tooldeck")
