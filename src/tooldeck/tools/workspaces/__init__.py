"""Workspaces and settings: manage_workspaces, app_settings.

Stored workspace state (the launch workspace's extra folders, a stored
output budget) is restored by :meth:`tooldeck.runtime.Runtime.start`, which
hosts call before building the catalog; building these tools changes nothing.
"""

from __future__ import annotations

from tooldeck.core.tool import Tool
from tooldeck.runtime import Runtime
from tooldeck.tools.workspaces import app_settings, manage


def tools(rt: Runtime) -> list[Tool]:
    return [manage.build(rt), app_settings.build(rt)]
