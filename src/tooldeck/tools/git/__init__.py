"""Git: the ``git`` tool (status, diff, log, show, blame) over the service in
:mod:`tooldeck.git`."""

from __future__ import annotations

from tooldeck.core.tool import Tool
from tooldeck.runtime import Runtime
from tooldeck.tools.git import tool


def tools(rt: Runtime) -> list[Tool]:
    return [tool.build(rt)]
