"""The ChatMD markup, below the hosts: text -> elements with their source position.

``element.py`` (``Element``, ``Position``, ``ChatmdError``) and ``parser.py``
(text -> elements, no I/O) are shared by the hosts and services that read
ChatMD: the ChatMD runner, the MCP server's prompts, the shell's
``<shell_access>`` declarations and MCP mounts (``tooldeck.mounts``).
"""
