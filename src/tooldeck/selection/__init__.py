"""The selection: which files of the current tab go into the packed context, and how.

:mod:`.service` (change and read a tab's selection, token breakdowns),
:mod:`.model` (selected files and line ranges), :mod:`.types` (items,
changes, breakdowns), :mod:`.expand` (folders to files), :mod:`.related` and
:mod:`.imports` (automatic codemaps of what the selected files use),
:mod:`.package` (the Markdown context package). Persistence is in
:mod:`tooldeck.state.tables`.
"""
