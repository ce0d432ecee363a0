"""tooldeck: a tool host for LLM agents that work on codebases.

Layers (an arrow only points down): hosts (``mcp``, ``cli``) → ``tools`` →
services (``workspace``, ``store``, ``codemap``, ...) → ``core``.
Importing ``tooldeck`` is cheap; import what you need from its subpackages.
"""

__version__ = "0.1.0"
