"""The prompt library and the prompt-backed agent tools, in process.

The agent factory here is the test's own small tool builder (the real one,
``tooldeck.chatmd.agents.agent_tool``, belongs to the ChatMD host): what is
tested is the server's wiring — agent tools listed beside the catalog,
callable, and announced with tools/list_changed when the directory changes."""

from __future__ import annotations

import asyncio
import contextlib
import time
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import mcp_types as types
import pytest
from anyio import fail_after as anyio_fail_after
from mcp import ClientSession
from mcp.client._memory import InMemoryTransport

from tooldeck.core import Toolbox, tool
from tooldeck.core.tool import Tool
from tooldeck.mcp.prompts import PromptLibrary, agent_tools
from tooldeck.mcp.server import create_server
from tooldeck.mcp.server_extras import ServerExtras
from tooldeck.runtime import Runtime

pytestmark = pytest.mark.timeout(60)


@contextlib.asynccontextmanager
async def connected(server: Any, on_message: Any = None) -> AsyncIterator[ClientSession]:
    """An initialized client session on ``server`` in memory (``on_message``: its notifications)."""
    async with InMemoryTransport(server) as (read, write), ClientSession(read, write, message_handler=on_message) as s:
        await s.initialize()
        yield s


def prompt_echo_factory(
    path: Path, rt: Any, *, name: str, description: str | None = None, read_outside: bool = False
) -> Tool:
    def run(input: str) -> str:
        return f"{name} got {input!r} from {path.name}"

    return tool(run, name=name, description=description or name)


def test_library_scan_reports_changes_only(tmp_path: Path) -> None:
    lib = PromptLibrary(tmp_path)
    fired: list[int] = []
    lib.on_change(lambda: fired.append(lib.version))
    assert lib.scan() is False  # empty stays empty
    (tmp_path / "a.chatmd").write_text("<user>{{x}}</user>")
    (tmp_path / "bad.chatmd").write_bytes(b"<user>\xff</user>")
    assert lib.scan() is True and lib.scan() is False
    assert sorted(lib.prompts) == ["a", "bad"] and fired == [1]
    (tmp_path / "a.chatmd").unlink()
    assert lib.scan() is True and sorted(lib.prompts) == ["bad"]


def test_without_an_agent_factory_prompts_are_not_tools(tmp_path: Path) -> None:
    (tmp_path / "a.chatmd").write_text("<user>x</user>")
    lib = PromptLibrary(tmp_path)
    lib.scan()
    assert sorted(lib.prompts) == ["a"] and agent_tools(lib, None, None) == []
    rt = Runtime.for_dirs([tmp_path], state_dir=tmp_path / "state")
    assert ServerExtras(rt, tmp_path, resources=False).tools() is None  # a library caller hands in no ChatMD


def test_agent_tools_are_listed_called_and_announced(tmp_path: Path) -> None:
    root = tmp_path / "root"
    prompts = tmp_path / "prompts"
    root.mkdir()
    prompts.mkdir()
    (prompts / "triage.chatmd").write_text("<!-- Sort issues. --><user>{{input}}</user>")
    rt = Runtime.for_dirs([root], state_dir=tmp_path / "state")
    extras = ServerExtras(rt, prompts, agent_factory=prompt_echo_factory, poll_seconds=0.1)

    @tool
    def ping() -> str:
        "Answer pong."
        return "pong"

    server = create_server(Toolbox([ping]), extras=extras)
    seen: list[str] = []

    async def on_message(message: Any) -> None:
        if isinstance(message, types.ToolListChangedNotification):
            seen.append("tools")
        elif isinstance(message, types.PromptListChangedNotification):
            seen.append("prompts")

    async def scenario() -> None:
        async with connected(server, on_message) as s:
            tools = {t.name: t for t in (await s.list_tools()).tools}
            assert set(tools) == {"ping", "triage"} and tools["triage"].description == "Sort issues."
            result = await s.call_tool("triage", {"input": "crash"})
            assert result.content[0].text == "triage got 'crash' from triage.chatmd"  # type: ignore[union-attr]
            assert (await s.call_tool("ping", {})).content[0].text == "pong"  # type: ignore[union-attr]
            (prompts / "summarise.chatmd").write_text("<user>{{input}}</user>")
            deadline = time.monotonic() + 60
            while "tools" not in seen and time.monotonic() < deadline:
                await asyncio.sleep(0.05)
            assert "tools" in seen and "prompts" in seen
            assert {t.name for t in (await s.list_tools()).tools} == {"ping", "triage", "summarise"}
            # an edit that changes no tool name or description: prompts change, tools do not
            seen.clear()
            (prompts / "summarise.chatmd").write_text("<user>Summarise: {{input}}</user>\n")
            while "prompts" not in seen and time.monotonic() < deadline + 10:
                await asyncio.sleep(0.05)
            await asyncio.sleep(0.3)
            assert seen == ["prompts"]

    asyncio.run(scenario())


def test_a_prompt_written_by_a_tool_is_listed_without_waiting_for_the_poll(tmp_path: Path) -> None:
    """The folder is polled once a minute here: only the rescan after a call
    that may write can list the new prompt. A read-only tool's call does not
    rescan (its file, written behind the server's back, waits for the poll)."""
    root, prompts = tmp_path / "root", tmp_path / "prompts"
    root.mkdir()
    prompts.mkdir()
    rt = Runtime.for_dirs([root], state_dir=tmp_path / "state")
    extras = ServerExtras(rt, prompts, agent_factory=prompt_echo_factory, poll_seconds=60)

    @tool(read_only=True)
    def peek(name: str) -> str:
        "Write a prompt file but declare it reads only (the rescan trusts the declaration)."
        (prompts / f"{name}.chatmd").write_text("<user>{{input}}</user>")
        return "peeked"

    @tool
    def write_prompt(name: str) -> str:
        "Write a prompt file."
        (prompts / f"{name}.chatmd").write_text("<user>{{input}}</user>")
        return "written"

    server = create_server(Toolbox([peek, write_prompt]), extras=extras)
    seen: list[str] = []

    async def on_message(message: Any) -> None:
        if isinstance(message, types.ToolListChangedNotification):
            seen.append("tools")

    async def scenario() -> None:
        async with connected(server, on_message) as s:
            assert {t.name for t in (await s.list_tools()).tools} == {"peek", "write_prompt"}
            await s.call_tool("peek", {"name": "hidden"})
            assert {t.name for t in (await s.list_tools()).tools} == {"peek", "write_prompt"}
            await s.call_tool("write_prompt", {"name": "triage"})
            assert {t.name for t in (await s.list_tools()).tools} == {"peek", "write_prompt", "hidden", "triage"}
            with anyio_fail_after(30):
                while "tools" not in seen:
                    await asyncio.sleep(0.02)

    asyncio.run(scenario())


def test_sessions_that_ended_are_not_kept(tmp_path: Path) -> None:
    """Every request a session makes (initialized, prompts/list) registers it
    for list_changed. Once it has ended, nothing of it stays alive: counted
    among the interpreter's live objects (its dispatcher), not through the
    extras' own view. (The per-request ServerSession kept to notify held its
    dispatcher: 256 of them stayed for the server's life.)"""
    import gc

    from mcp.shared.jsonrpc_dispatcher import JSONRPCDispatcher

    root, prompts = tmp_path / "root", tmp_path / "prompts"
    root.mkdir()
    prompts.mkdir()
    (prompts / "triage.chatmd").write_text("<user>{{input}}</user>")
    rt = Runtime.for_dirs([root], state_dir=tmp_path / "state")
    extras = ServerExtras(rt, prompts, poll_seconds=60)
    server = create_server(Toolbox([]), extras=extras)

    def dispatchers() -> int:
        gc.collect()
        return sum(1 for o in gc.get_objects() if isinstance(o, JSONRPCDispatcher))

    async def one_session() -> None:
        async with connected(server) as s:
            for _ in range(3):
                assert [p.name for p in (await s.list_prompts()).prompts] == ["triage"]

    async def scenario() -> tuple[int, int]:
        await one_session()  # what the first session warms up
        before = dispatchers()
        for _ in range(6):
            await one_session()
        return before, dispatchers()

    before, after = asyncio.run(scenario())
    assert after <= before, (before, after)


def test_a_prompts_list_in_flight_holds_the_end_of_input(tmp_path: Path) -> None:
    """Every request the SDK runs counts as activity, which the end of input waits
    for before the SDK cancels what still runs: a prompts/list still in its worker
    thread was cancelled and answered `Connection closed` (the handshake cache then
    dropped its entry)."""
    import threading

    from tooldeck.mcp.host import Activity

    root = tmp_path / "root"
    root.mkdir()
    rt = Runtime.for_dirs([root], state_dir=tmp_path / "state")
    extras = ServerExtras(rt, None, resources=False)
    entered, release = threading.Event(), threading.Event()
    listed = extras.prompts_wire

    def held() -> dict[str, Any]:
        entered.set()
        release.wait(30)
        return listed()

    extras.prompts_wire = held  # type: ignore[method-assign]
    activity = Activity()
    server = create_server(Toolbox([]), activity=activity, extras=extras)

    async def scenario() -> None:
        async with connected(server) as s:
            pending = asyncio.ensure_future(s.list_prompts())
            try:
                while not entered.is_set():
                    await asyncio.sleep(0.01)
                assert activity.busy == 1
            finally:
                release.set()
            assert (await pending).prompts == []
            assert activity.busy == 0

    asyncio.run(scenario())
