"""The token cost of advertised tool schemas (what every MCP client pays per
conversation): name + description + input schema as the client sees them."""

from __future__ import annotations

import json

from tooldeck.core.toolbox import Toolbox
from tooldeck.workspace.tokens import count_tokens


def schema_costs(toolbox: Toolbox) -> list[tuple[str, int]]:
    from tooldeck.mcp.server import to_mcp_tool

    rows = []
    for t in toolbox:
        wire = to_mcp_tool(t).model_dump(mode="json", by_alias=True, exclude_none=True)
        rows.append((t.name, count_tokens(json.dumps(wire, ensure_ascii=False))))
    return rows
