"""MCP host: serves a Toolbox over stdio or streamable HTTP (official SDK)."""
