"""The mounts' end-to-end tests mount tooldeck's own server: the workspace
fixture of the MCP tests is theirs too."""

from tests.mcp.conftest import served  # noqa: F401  (pytest finds fixtures by name)
