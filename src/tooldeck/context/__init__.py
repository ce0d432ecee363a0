"""Compose state: workspaces and tabs, each tab's selection and prompt, token
breakdowns, and the Markdown context package.

Services (no tool imports): :mod:`.workspaces` (which workspace/tab this
process uses), :mod:`.selection` (the selection service other domains such as
``context_builder`` drive), :mod:`.package` (rendering), :mod:`.tokens`
(cached counts), :mod:`.related` / :mod:`.imports` (automatic codemaps),
:mod:`.db` (persistence in the store, domain ``context``).
"""

from tooldeck.context.model import LineRange, Mode, SelectedFile, Selection
from tooldeck.context.selection import Breakdown, Change, FileTokens, Item, SelectionService, selection_service
from tooldeck.context.workspaces import WorkspaceService, workspace_service

__all__ = [
    "Breakdown",
    "Change",
    "FileTokens",
    "Item",
    "LineRange",
    "Mode",
    "SelectedFile",
    "Selection",
    "SelectionService",
    "WorkspaceService",
    "selection_service",
    "workspace_service",
]
