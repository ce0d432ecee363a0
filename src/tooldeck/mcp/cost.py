"""The token cost of advertised tool schemas (what every MCP client pays per
request): the name, description and input schema of each tool as the client
passes them to the model, in compact JSON (annotations and titles stay with
the client and are not counted)."""

from __future__ import annotations

import json

from tooldeck.core.toolbox import Toolbox
from tooldeck.tokens import count_tokens


def schema_costs(toolbox: Toolbox) -> list[tuple[str, int]]:
    # lazy: `tooldeck tools` imports this module: the SDK (~300 modules) only with --cost
    from tooldeck.mcp.server import to_mcp_tool

    rows = []
    for t in toolbox:
        wire = to_mcp_tool(t).model_dump(mode="json", by_alias=True, exclude_none=True)
        seen = {k: wire[k] for k in ("name", "description", "inputSchema") if k in wire}
        rows.append((t.name, count_tokens(json.dumps(seen, ensure_ascii=False, separators=(",", ":")))))
    return rows
