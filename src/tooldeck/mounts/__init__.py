"""MCP client mounts: a remote MCP server's tools as tooldeck Tools.

A service below the hosts (it serves no one; it connects out): ``spec.py``
parses a target, ``session.py`` holds one session, ``loop.py`` the event loop
that owns every mount, ``convert.py`` maps remote tools and results,
``client.py`` the mount itself, ``declaration.py`` a ChatMD
``<tool mcp_server=...>`` declaration and its per-runtime registry.
"""
