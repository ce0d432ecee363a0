"""Workspaces and settings: manage_workspaces, app_settings.

Building this domain also restores persisted state that other domains see:
the launch workspace (its extra folders become roots before other tools
describe their roots) and a stored ``output.budget_tokens``. That is why it
comes first in the catalog's DOMAINS.
"""

from __future__ import annotations

import logging

from tooldeck.core.tool import Tool
from tooldeck.runtime import Runtime

log = logging.getLogger("tooldeck.workspaces")


def restore(rt: Runtime) -> None:
    """Bind the launch workspace and apply stored settings; a broken store
    must not stop a server from starting (the tools then report it)."""
    from tooldeck.settings import settings_service
    from tooldeck.state.workspaces import workspace_service

    try:
        workspace_service(rt)
        settings = settings_service(rt)
        if settings.source("output.budget_tokens") == "stored":
            rt.budget_tokens = int(settings.get("output.budget_tokens"))
    except Exception as exc:  # reported by the tools on first use
        log.warning("tooldeck: could not restore workspace state from %s: %s", rt.state_dir, exc)


def tools(rt: Runtime) -> list[Tool]:
    from tooldeck.tools.workspaces import app_settings, manage

    restore(rt)
    return [manage.build(rt), app_settings.build(rt)]
