"""Selection and prompt: manage_selection, workspace_context, prompt.

Also publishes the ``selected_paths`` capability (root-relative paths of the
current tab's selected files), consumed by get_file_tree's ``*`` marker and
by the ``scope=selected`` options of get_code_structure and git.
"""

from __future__ import annotations

from tooldeck.core.tool import Tool
from tooldeck.runtime import Runtime
from tooldeck.selection.service import selection_service
from tooldeck.tools.selection import context, manage, prompt


def tools(rt: Runtime) -> list[Tool]:
    def selected_paths() -> list[str]:
        return selection_service(rt).selected_paths()

    rt.provide("selected_paths", selected_paths)
    return [manage.build(rt), context.build(rt), prompt.build(rt)]
