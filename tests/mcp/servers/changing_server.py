"""A small real MCP server (the SDK's low-level Server over stdio or HTTP) whose
tool list changes, for the client-mount tests.

Tools:
* ``echo {text}``: returns the text (read-only, idempotent);
* ``pid``: the process id (so a test can kill the server);
* ``grow {name}``: adds a tool named ``name`` and sends
  ``notifications/tools/list_changed`` *during* the call, before its result;
* ``grow_later {name}``: adds the tool and notifies 0.2 s *after* returning;
* ``shrink {name}``: removes a tool silently (no notification);
* ``stats``: how many ``tools/list`` requests were answered;
* ``progress``: three progress notifications, then ``done``;
* ``picture``: one text and one PNG image part, plus structured content;
* ``fail``: an ``isError`` result;
* ``sleep``: waits 30 s; ``cancelled``: how many sleeps were cancelled;
* ``die``: the process exits in the middle of the call.

``LATE_TOOL=name`` in the environment: a tool of that name appears from the
second ``tools/list`` on (without any notification).
Usage: ``python changing_server.py`` (stdio) or ``python changing_server.py --http PORT``.
"""

from __future__ import annotations

import asyncio
import os
import sys
from typing import Any

import anyio
import mcp_types as types
from mcp.server.lowlevel import NotificationOptions, Server

PNG = "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNk+M9QDwADhgGAWjR9awAAAABJRU5ErkJggg=="
TEXT_SCHEMA = {"type": "object", "properties": {"text": {"type": "string"}}, "required": ["text"]}
NAME_SCHEMA = {"type": "object", "properties": {"name": {"type": "string"}}, "required": ["name"]}
EMPTY = {"type": "object", "properties": {}}

extra: list[str] = []
removed: set[str] = set()
lists = 0
cancelled = 0
background: set[asyncio.Task[None]] = set()


def catalog() -> list[types.Tool]:
    ro = types.ToolAnnotations(read_only_hint=True, idempotent_hint=True, destructive_hint=False)
    tools = [
        types.Tool(name="echo", description="Echo the text back.", input_schema=TEXT_SCHEMA, annotations=ro),
        types.Tool(name="pid", description="The server's process id.", input_schema=EMPTY, annotations=ro),
        types.Tool(name="grow", description="Add a tool; notify during the call.", input_schema=NAME_SCHEMA),
        types.Tool(name="grow_later", description="Add a tool; notify after the call.", input_schema=NAME_SCHEMA),
        types.Tool(name="shrink", description="Remove a tool silently.", input_schema=NAME_SCHEMA),
        types.Tool(name="stats", description="tools/list count.", input_schema=EMPTY),
        types.Tool(name="progress", description="Report progress.", input_schema=EMPTY),
        types.Tool(name="picture", description="Text, image, structured.", input_schema=EMPTY),
        types.Tool(name="fail", description="Always fails.", input_schema=EMPTY),
        types.Tool(name="sleep", description="Sleep 30 s.", input_schema=EMPTY),
        types.Tool(name="cancelled", description="Cancelled sleeps.", input_schema=EMPTY),
        types.Tool(name="die", description="Exit during the call.", input_schema=EMPTY),
    ]
    tools += [types.Tool(name=n, description=f"Dynamic tool {n}.", input_schema=EMPTY) for n in extra]
    late = os.environ.get("LATE_TOOL")
    if late and lists > 1:
        tools.append(types.Tool(name=late, description="Appeared late.", input_schema=EMPTY))
    return [t for t in tools if t.name not in removed]


async def list_tools(ctx: Any, params: Any) -> types.ListToolsResult:
    global lists
    lists += 1
    return types.ListToolsResult(tools=catalog())


def text(value: str, **kw: Any) -> types.CallToolResult:
    return types.CallToolResult(content=[types.TextContent(type="text", text=value)], **kw)


async def call_tool(ctx: Any, params: types.CallToolRequestParams) -> types.CallToolResult:
    args = params.arguments or {}
    name = params.name
    if name == "echo":
        return text(str(args.get("text", "")))
    if name == "pid":
        return text(str(os.getpid()))
    if name == "grow":
        extra.append(args["name"])
        await ctx.session.send_tool_list_changed()
        await asyncio.sleep(0.05)
        return text(f"added {args['name']}")
    if name == "grow_later":
        session = ctx.session

        async def later() -> None:
            await asyncio.sleep(0.2)
            extra.append(args["name"])
            await session.send_tool_list_changed()

        task = asyncio.get_running_loop().create_task(later())
        background.add(task)
        return text("scheduled")
    if name == "shrink":
        removed.add(args["name"])
        return text(f"removed {args['name']}")
    if name == "stats":
        return text(str(lists))
    if name == "progress":
        for i in range(1, 4):
            await ctx.session.report_progress(i, 3, f"step {i}")
            await asyncio.sleep(0.01)
        return text("done")
    if name == "picture":
        return types.CallToolResult(
            content=[
                types.TextContent(type="text", text="a pixel"),
                types.ImageContent(type="image", data=PNG, mime_type="image/png"),
            ],
            structured_content={"width": 1, "height": 1},
        )
    if name == "sleep":
        global cancelled
        try:
            await asyncio.sleep(30)
        except asyncio.CancelledError:
            cancelled += 1
            raise
        return text("slept")
    if name == "die":
        print("dying on purpose", file=sys.stderr, flush=True)
        os._exit(3)
    if name == "cancelled":
        return text(str(cancelled))
    if name == "fail":
        return text("the disk is on fire", is_error=True)
    if name in extra or name == os.environ.get("LATE_TOOL"):
        return text(f"{name} ran")
    return text(f"unknown tool {name}", is_error=True)


server = Server("changing", version="1.0", on_list_tools=list_tools, on_call_tool=call_tool)


async def run_stdio() -> None:
    from mcp.server.stdio import stdio_server

    async with stdio_server() as (read, write):
        await server.run(read, write, server.create_initialization_options(NotificationOptions(tools_changed=True)))


def run_http(port: int) -> None:
    import uvicorn

    app = server.streamable_http_app(host="127.0.0.1")
    uvicorn.run(app, host="127.0.0.1", port=port, log_level="warning")


if __name__ == "__main__":
    if len(sys.argv) > 2 and sys.argv[1] == "--http":
        run_http(int(sys.argv[2]))
    else:
        anyio.run(run_stdio)
