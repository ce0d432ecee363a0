"""Persistent state, one home: every table's schema (its migrations) and
queries. Workspaces, tabs, selections, prompts and token counts
(:mod:`.tables`, and which workspace and tab this process uses:
:mod:`.workspaces`), chats, agent sessions, approvals, CLI pages, stored
settings (:mod:`.settings_table`), the index registry, the codemap cache
(:mod:`.codemaps`) and the term index (:mod:`.terms`). Built on the SQLite
store (:mod:`tooldeck.store.db`); services call these modules and hold no SQL.
"""
