"""Workspace services: roots and path rules, ignore rules, walking, safe reads,
atomic writes, the state directory's files and the files the person names.
Knows nothing of tools or hosts.

Import the module you need (``tooldeck.workspace.roots``, ``.atomic``,
``.person_files``...): this package imports none of them, so a light caller
(the token worker, the configuration read on every command's start) pays for
what it uses only.
"""
