"""Persistent state, one home: the tables of workspaces, tabs, selections,
prompts and token counts (:mod:`.tables`), and which workspace and tab this
process uses (:mod:`.workspaces`). Built on the SQLite store
(:mod:`tooldeck.store.db`); chats and agent sessions join here.
"""
