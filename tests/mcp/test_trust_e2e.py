"""The trust boundary over MCP, end to end: `tooldeck serve` spawned and driven
by the SDK client over stdio. Elicitation asks the person; an allowed change
of roots rebuilds read_file's root enum and sends tools/list_changed; a
stored wider workspace never comes back under explicit roots."""

from __future__ import annotations

import contextlib
import os
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import anyio
import mcp_types as types
import pytest
from mcp import ClientSession, StdioServerParameters, stdio_client

from tests.mcp.mcp_e2e import serve_command
from tooldeck.runtime import Runtime
from tooldeck.state.workspaces import workspace_service

pytestmark = pytest.mark.timeout(120)


def text_of(result: Any) -> str:
    return "\n".join(c.text for c in result.content if getattr(c, "type", "") == "text")


@contextlib.asynccontextmanager
async def session(
    root: Path, state: Path, *extra: str, elicit: Any = None, notes: list[Any] | None = None
) -> AsyncIterator[ClientSession]:
    cmd = serve_command(root, state, *extra)
    env = {**os.environ, "TOOLDECK_STATE_DIR": str(state), "TOOLDECK_CONFIG": str(state / "no-config.toml")}
    params = StdioServerParameters(command=cmd[0], args=cmd[1:], env=env)

    async def on_message(message: Any) -> None:
        if notes is not None:
            notes.append(message)

    kwargs: dict[str, Any] = {"message_handler": on_message}
    if elicit is not None:
        kwargs["elicitation_callback"] = elicit
    async with stdio_client(params) as (read, write), ClientSession(read, write, **kwargs) as s:
        await s.initialize()
        yield s


@pytest.fixture
def outside(tmp_path: Path) -> Path:
    d = tmp_path / "outside"
    d.mkdir()
    (d / "secret.txt").write_text("secret\n")
    return d


def test_allowed_add_folder_rebuilds_the_root_enum_and_notifies(served: tuple[Path, Path], outside: Path) -> None:
    root, state = served
    notes: list[Any] = []

    async def scenario() -> None:
        async with session(root, state, "--allow-root", str(outside), notes=notes) as s:
            init_tools = {t.name: t for t in (await s.list_tools()).tools}
            assert init_tools["read_file"].input_schema["properties"]["root"]["enum"] == ["root"]
            res = await s.call_tool("manage_workspaces", {"action": "add_folder", "folder_path": str(outside)})
            assert not res.is_error, text_of(res)
            with anyio.fail_after(10):
                while not any(isinstance(n, types.ToolListChangedNotification) for n in notes):
                    await anyio.sleep(0.02)
            tools = {t.name: t for t in (await s.list_tools()).tools}
            rf = tools["read_file"]
            assert rf.input_schema["properties"]["root"]["enum"] == ["root", "outside"]
            assert os.path.realpath(outside) in (rf.description or "")
            rd = tools["read_directory"]
            assert rd.input_schema["properties"]["root"]["enum"] == ["root", "outside"]
            ok = await s.call_tool("read_file", {"file": "secret.txt", "root": "outside"})
            assert not ok.is_error and text_of(ok).endswith("secret"), text_of(ok)

    anyio.run(scenario)


def test_outside_folder_is_denied_without_elicitation(served: tuple[Path, Path], outside: Path) -> None:
    root, state = served
    notes: list[Any] = []

    async def scenario() -> None:
        async with session(root, state, notes=notes) as s:
            res = await s.call_tool("manage_workspaces", {"action": "add_folder", "folder_path": "/etc"})
            assert res.is_error and text_of(res).startswith("error [denied]"), text_of(res)
            res = await s.call_tool("read_file", {"path": "/etc/hostname"})
            assert res.is_error and "outside_roots" in text_of(res)
            tools = {t.name: t for t in (await s.list_tools()).tools}
            assert tools["read_file"].input_schema["properties"]["root"]["enum"] == ["root"]
        assert not any(isinstance(n, types.ToolListChangedNotification) for n in notes)

    anyio.run(scenario)


@pytest.mark.parametrize("answer", ["accept", "decline", "cancel", "accept-false"])
def test_elicitation_asks_the_person(served: tuple[Path, Path], outside: Path, answer: str) -> None:
    root, state = served
    asked: list[str] = []

    async def elicit(context: Any, params: Any) -> types.ElicitResult:
        asked.append(params.message)
        if answer == "accept":
            return types.ElicitResult(action="accept", content={"allow": True})
        if answer == "accept-false":
            return types.ElicitResult(action="accept", content={"allow": False})
        return types.ElicitResult(action=answer)

    async def scenario() -> None:
        async with session(root, state, elicit=elicit) as s:
            res = await s.call_tool("manage_workspaces", {"action": "add_folder", "folder_path": str(outside)})
            read = await s.call_tool("read_file", {"path": str(outside / "secret.txt")})
            if answer == "accept":
                assert not res.is_error, text_of(res)
                assert not read.is_error and text_of(read).endswith("secret")
            else:
                assert res.is_error and "error [denied]" in text_of(res) and "declined" in text_of(res)
                assert read.is_error and "outside_roots" in text_of(read)

    anyio.run(scenario)
    assert len(asked) == 1 and os.path.realpath(outside) in asked[0]


def test_a_stored_wider_workspace_does_not_come_back_read_only(served: tuple[Path, Path], outside: Path) -> None:
    """Issue 8 item 4: a folder stored by a wider server, then `serve --profile read-only` on the same root."""
    root, state = served
    wide = Runtime.for_dirs([root], state_dir=state, allow_roots=[outside]).start()
    workspace_service(wide).add_folder(str(outside), None)
    assert [r.path for r in wide.workspace.roots] == [os.path.realpath(root), os.path.realpath(outside)]
    wide.store.close()

    async def scenario() -> None:
        async with session(root, state, "--profile", "read-only") as s:
            tools = {t.name: t for t in (await s.list_tools()).tools}
            assert tools["read_file"].input_schema["properties"]["root"]["enum"] == ["root"]
            assert os.path.realpath(outside) not in (tools["read_file"].description or "")
            res = await s.call_tool("read_file", {"path": str(outside / "secret.txt")})
            assert res.is_error and "outside_roots" in text_of(res), text_of(res)

    anyio.run(scenario)


def test_over_http_elicitation_and_list_changed_reach_the_caller(served: tuple[Path, Path], outside: Path) -> None:
    """Over streamable HTTP the question and the notification ride the call's own stream."""
    import httpx2
    from mcp.client.streamable_http import streamable_http_client

    from tests.mcp.mcp_e2e import free_port, run_http

    root, state = served
    notes: list[Any] = []

    async def elicit(context: Any, params: Any) -> types.ElicitResult:
        return types.ElicitResult(action="accept", content={"allow": True})

    async def on_message(message: Any) -> None:
        notes.append(message)

    env = {"TOOLDECK_CONFIG": str(state / "no-config.toml")}
    with run_http(root, state, f"127.0.0.1:{free_port()}", env=env) as server:

        async def scenario() -> None:
            async with (
                httpx2.AsyncClient(timeout=30) as client,
                streamable_http_client(server.url, http_client=client) as (read, write),
                ClientSession(read, write, elicitation_callback=elicit, message_handler=on_message) as s,
            ):
                await s.initialize()
                res = await s.call_tool("manage_workspaces", {"action": "add_folder", "folder_path": str(outside)})
                assert not res.is_error, text_of(res)
                with anyio.fail_after(10):
                    while not any(isinstance(n, types.ToolListChangedNotification) for n in notes):
                        await anyio.sleep(0.02)
                tools = {t.name: t for t in (await s.list_tools()).tools}
                assert tools["read_file"].input_schema["properties"]["root"]["enum"] == ["root", "outside"]

        anyio.run(scenario)
