"""Prompts, resources and prompt-backed agent tools, installed on the server.

:func:`tooldeck.mcp.server.create_server` adapts the tool catalog; this module
adds the rest of SPEC §6 to the same low-level ``Server``:

* ``prompts/list`` / ``prompts/get`` from a :class:`PromptLibrary` (rescanned
  on each request and every second in the background); without a prompts
  folder, an empty list (clients list prompts whatever the capabilities say);
* ``resources/list`` (paged), ``resources/templates/list`` and
  ``resources/read`` from a :class:`ResourceProvider`;
* the prompt-backed agent tools, listed after the catalog's own tools;
* ``notifications/prompts/list_changed`` (and ``tools/list_changed`` when the
  agent tools changed) to every connected client when the directory changes.
  Clients are remembered from their ``notifications/initialized``; this is the
  handshake-era channel (protocol 2025-11-25 and older, what the SDK's
  ``ClientSession`` speaks). Protocol 2026-07-28 clients get the same events
  on the ``subscriptions/listen`` streams they open (the server's ``bus``).
"""

from __future__ import annotations

import asyncio
import functools
import logging
import weakref
from pathlib import Path
from typing import TYPE_CHECKING, Any

from tooldeck.core.errors import ToolError
from tooldeck.core.toolbox import Toolbox
from tooldeck.mcp.prompts import AgentFactory, NoticesFn, PromptArgumentsError, PromptLibrary, agent_tools
from tooldeck.mcp.resources import ResourceProvider

if TYPE_CHECKING:  # the SDK is imported by the methods that serve through it (the early front must not)
    import mcp_types as types
    from mcp.server.lowlevel import Server
    from mcp.server.subscriptions import SubscriptionBus
    from mcp.shared.exceptions import MCPError

log = logging.getLogger("tooldeck.mcp")

RESOURCE_NOT_FOUND = -32002


INVALID_PARAMS = -32602


def _mcp_error(exc: ToolError) -> MCPError:
    from mcp.shared.exceptions import MCPError

    code = RESOURCE_NOT_FOUND if exc.code == "not_found" else INVALID_PARAMS
    return MCPError(code, f"error [{exc.code}]: {exc.message}")


class ServerExtras:
    def __init__(
        self,
        rt: Any,
        prompts_dir: Path | None = None,
        *,
        agent_factory: AgentFactory | None = None,
        notices: NoticesFn | None = None,
        poll_seconds: float = 1.0,
        resources: bool = True,
    ) -> None:
        self.rt = rt
        self.library: PromptLibrary | None = None
        if prompts_dir is not None:
            roots = (lambda: rt.workspace) if hasattr(rt, "workspace") else None
            self.library = PromptLibrary(prompts_dir, roots, getattr(rt, "state_dir", None), notices)
        self.resources = ResourceProvider(lambda: rt.workspace) if resources else None
        self.poll_seconds = poll_seconds
        self._factory = agent_factory
        self._agent_box: Toolbox | None = None
        self._agent_signature: tuple[tuple[str, str], ...] = ()
        # each client's Connection, held weakly: forgotten when its session ends. (The
        # ServerSession a handler gets is made per request and holds that request's
        # dispatcher: up to 256 of them were kept, with the state of every session
        # that had ended, for the server's life.)
        self._clients: weakref.WeakSet[Any] = weakref.WeakSet()
        self._bus: SubscriptionBus | None = None
        self._loop: asyncio.AbstractEventLoop | None = None
        self._watcher: asyncio.Task[None] | None = None
        if self.library is not None:
            self.library.scan()
            self.library.on_change(self._changed)
            self._rebuild_agents()

    # agent tools ----------------------------------------------------------------
    def _rebuild_agents(self) -> bool:
        """Rebuild the agent tools; True when their names or descriptions changed."""
        if self.library is None:
            return False
        factory = functools.partial(self._factory, read_outside=self.library.outside) if self._factory else None
        tools = agent_tools(self.library, self.rt, factory)
        signature = tuple((t.name, t.description) for t in tools)
        self._agent_box = Toolbox(tools, budget_tokens=getattr(self.rt, "budget_tokens", 20_000)) if tools else None
        changed, self._agent_signature = signature != self._agent_signature, signature
        return changed

    def tools(self) -> Toolbox | None:
        """The prompt-backed agent tools (None when there are none)."""
        return self._agent_box

    # change notifications -----------------------------------------------------
    def _changed(self) -> None:
        tools_changed = self._rebuild_agents()
        loop = self._loop
        if loop is None or loop.is_closed():
            return
        loop.call_soon_threadsafe(lambda: loop.create_task(self._broadcast(tools_changed)))

    async def _broadcast(self, tools_changed: bool) -> None:
        import mcp_types as types
        from mcp.server.subscriptions import PromptsListChanged, ToolsListChanged

        if self._bus is not None:
            await self._bus.publish(PromptsListChanged())
            if tools_changed:
                await self._bus.publish(ToolsListChanged())
        notes = [types.PromptListChangedNotification()]
        if tools_changed:
            notes.append(types.ToolListChangedNotification())
        for client in list(self._clients):
            for note in notes:
                data = note.model_dump(by_alias=True, mode="json", exclude_none=True)
                try:
                    await client.notify(data["method"], data.get("params"))  # best effort: never raises
                except Exception:
                    log.debug("list_changed not delivered", exc_info=True)

    def _attach(self, ctx: Any) -> None:
        if self._loop is None:
            self._loop = asyncio.get_running_loop()
        client = getattr(ctx.session, "_connection", None)  # the SDK's Connection: one per client session
        if client is not None:
            self._clients.add(client)
        if self.library is not None and (self._watcher is None or self._watcher.done()):
            self._watcher = self._loop.create_task(self.library.watch(self.poll_seconds))

    async def rescan(self) -> None:
        """Re-read the prompts folder now, after a call that may have written
        to it: a prompt a tool just wrote is listed before that call's answer
        and ``list_changed`` goes out with it, not at the next poll (a second)."""
        if self.library is not None:
            await self.library.rescan()

    # handlers -----------------------------------------------------------------
    async def _initialized(self, ctx: Any, params: Any) -> None:
        self._attach(ctx)

    def prompts_wire(self) -> dict[str, Any]:
        """``prompts/list`` in wire form (the early front sends it as it is;
        the SDK's handler validates it into its model). Rescans the folder:
        call it off the event loop."""
        if self.library is None:  # no prompts folder: an empty list (clients list prompts unconditionally)
            return {"prompts": []}
        self.library.scan()
        prompts = []
        for p in self.library.sorted():
            args = []
            for a in p.arguments:
                arg: dict[str, Any] = {"name": a.name, "required": a.required}
                if not a.required:
                    arg["description"] = f"optional; default: {a.default}"
                args.append(arg)
            entry: dict[str, Any] = {"name": p.name}
            if p.description is not None:
                entry["description"] = p.description
            prompts.append({**entry, "arguments": args})
        return {"prompts": prompts}

    async def _list_prompts(self, ctx: Any, params: Any) -> types.ListPromptsResult:
        import mcp_types as types

        self._attach(ctx)
        return types.ListPromptsResult.model_validate(await asyncio.to_thread(self.prompts_wire))

    async def _get_prompt(self, ctx: Any, params: types.GetPromptRequestParams) -> types.GetPromptResult:
        import mcp_types as types
        from mcp.shared.exceptions import MCPError

        self._attach(ctx)
        if self.library is None:
            raise MCPError(
                types.INVALID_PARAMS,
                f"unknown prompt {params.name!r}; this server has no prompts folder (the person starts it with "
                "--prompts DIR, $MCP_PROMPTS_DIR, or a ./prompts folder)",
            )
        await asyncio.to_thread(self.library.scan)
        prompt = self.library.prompts.get(params.name)
        if prompt is None:
            why = self.library.broken.get(params.name)
            known = ", ".join(sorted(self.library.prompts)) or "(none)"
            detail = f"it cannot be read: {why}" if why else f"available prompts: {known}"
            raise MCPError(types.INVALID_PARAMS, f"unknown prompt {params.name!r}; {detail}")
        try:
            messages = prompt.render(params.arguments)
        except PromptArgumentsError as exc:
            raise MCPError(types.INVALID_PARAMS, str(exc)) from exc
        return types.GetPromptResult(
            description=prompt.description,
            messages=[
                types.PromptMessage(
                    role="assistant" if m.role == "assistant" else "user",
                    content=types.TextContent(
                        type="text", text=m.text if m.role in ("user", "assistant") else f"[{m.role}]\n{m.text}"
                    ),
                )
                for m in messages
            ],
        )

    async def _list_resources(self, ctx: Any, params: Any) -> types.ListResourcesResult:
        import mcp_types as types

        assert self.resources is not None
        cursor = getattr(params, "cursor", None) if params is not None else None
        try:
            return types.ListResourcesResult.model_validate(await asyncio.to_thread(self.resources.list, cursor))
        except ToolError as exc:
            raise _mcp_error(exc) from exc

    async def _list_templates(self, ctx: Any, params: Any) -> types.ListResourceTemplatesResult:
        import mcp_types as types

        assert self.resources is not None
        return types.ListResourceTemplatesResult.model_validate(self.resources.templates())

    async def _read_resource(self, ctx: Any, params: types.ReadResourceRequestParams) -> types.ReadResourceResult:
        import mcp_types as types
        from mcp.shared.exceptions import MCPError

        assert self.resources is not None
        try:
            return await asyncio.to_thread(self.resources.read, str(params.uri))
        except ToolError as exc:
            raise _mcp_error(exc) from exc
        except OSError as exc:
            raise MCPError(types.INTERNAL_ERROR, f"error [io_error]: {exc.strerror or exc}") from exc

    def install(self, server: Server) -> None:
        """Register the handlers and advertise ``listChanged`` for prompts and tools."""
        import mcp_types as types
        from mcp.server.lowlevel import NotificationOptions

        self._bus = getattr(server, "bus", None)
        server.add_notification_handler("notifications/initialized", types.NotificationParams, self._initialized)
        # answered with or without a prompts folder: clients list prompts unconditionally
        server.add_request_handler("prompts/list", types.PaginatedRequestParams, self._list_prompts)
        server.add_request_handler("prompts/get", types.GetPromptRequestParams, self._get_prompt)
        if self.resources is not None:
            server.add_request_handler("resources/list", types.PaginatedRequestParams, self._list_resources)
            server.add_request_handler("resources/templates/list", types.PaginatedRequestParams, self._list_templates)
            server.add_request_handler("resources/read", types.ReadResourceRequestParams, self._read_resource)
        # tools change anyway (manage_workspaces rebuilds the root-describing tools)
        flags = NotificationOptions(prompts_changed=self.library is not None, tools_changed=True)
        # the HTTP session manager calls create_initialization_options() without
        # arguments: bind the flags to this server instance
        server.create_initialization_options = functools.partial(  # type: ignore[method-assign]
            server.create_initialization_options, flags
        )
