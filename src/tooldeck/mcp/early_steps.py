"""What the stdio server's start-up hands the early front step by step
(:mod:`tooldeck.mcp.early_serve` makes them, :mod:`tooldeck.mcp.early`
uses them), and whether the front runs at all; imported before anything of
the SDK or the tool model."""

from __future__ import annotations

import os
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

DISABLE_ENV = "TOOLDECK_EARLY_FRONT"  # "0": the SDK answers everything (the reference path)


def enabled() -> bool:
    return os.environ.get(DISABLE_ENV, "1").strip().lower() not in ("0", "false", "no", "off")


IDLE_ENV = "TOOLDECK_SDK_IDLE"  # seconds of quiet after which the SDK loads unasked (default 1)


def sdk_idle(default: float = 1.0) -> float:
    """:data:`IDLE_ENV` read; a value that is not a finite number >= 0 is the default."""
    try:
        value = float(os.environ.get(IDLE_ENV, default))
    except ValueError:
        return default
    return value if 0 <= value < float("inf") else default


def prompts_served(explicit: str | None) -> bool:
    """Whether a prompts folder is served (``listChanged`` for prompts): as
    :func:`tooldeck.mcp.prompts.resolve_prompts_dir`, without importing it."""
    return bool(explicit or os.environ.get("MCP_PROMPTS_DIR") or os.path.isdir("prompts"))


@dataclass
class Started:
    """The runtime is started (its roots restored): what a call the front
    runs needs, before the server extras and the whole catalog."""

    domain: Callable[[str, str], Any]  # domain module, tool -> a Toolbox with that tool (built alone if it can be)
    activity: Any  # tooldeck.mcp.host.Activity
    worker: Callable[[], Any] = lambda: None  # starts the token worker (once)


@dataclass
class Ready:
    """The server extras are made and the catalog is being built."""

    extras: Any  # ServerExtras
    catalog: Any  # tooldeck.mcp.host.Catalog
