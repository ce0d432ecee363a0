"""`tooldeck serve --prompts DIR`: *.chatmd files as MCP prompts, kept current
while the server runs, with list_changed notifications (stdio and HTTP)."""

from __future__ import annotations

import asyncio
import contextlib
import os
import time
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import httpx2
import mcp_types as types
import pytest
from mcp import ClientSession, StdioServerParameters, stdio_client
from mcp.client.streamable_http import streamable_http_client
from mcp.shared.exceptions import MCPError

from tests.mcp.mcp_e2e import free_port, serve_command, wait_listening

pytestmark = pytest.mark.timeout(120)

REVIEW = """<!-- Review one file for bugs. -->
<config model="gpt-5"/>
<tool name="read_file"/>
<system>You review code. Focus: {{ focus | correctness }}.</system>
<user>
Review {{path}}. RAW|<b>{{path}}</b>|RAW
</user>
"""


class Changes:
    """Notifications seen by the client's message handler."""

    def __init__(self) -> None:
        self.methods: list[str] = []

    async def __call__(self, message: Any) -> None:
        if isinstance(message, types.PromptListChangedNotification):
            self.methods.append("prompts")
        elif isinstance(message, types.ToolListChangedNotification):
            self.methods.append("tools")

    async def wait(self, what: str, count: int, timeout: float = 60.0) -> None:
        deadline = time.monotonic() + timeout
        while self.methods.count(what) < count:
            if time.monotonic() > deadline:
                raise AssertionError(f"no {what} list_changed #{count} (seen {self.methods})")
            await asyncio.sleep(0.05)


@contextlib.asynccontextmanager
async def stdio_prompts(root: Path, state: Path, prompts: Path, changes: Changes) -> AsyncIterator[ClientSession]:
    cmd = serve_command(root, state, "--prompts", str(prompts))
    params = StdioServerParameters(command=cmd[0], args=cmd[1:], env=dict(os.environ))
    async with stdio_client(params) as (read, write), ClientSession(read, write, message_handler=changes) as s:
        await s.initialize()
        yield s


def text(result: types.GetPromptResult) -> list[tuple[str, str]]:
    return [(m.role, m.content.text) for m in result.messages]  # type: ignore[union-attr]


def write(path: Path, content: str) -> None:
    path.write_text(content)
    os.utime(path, ns=(time.time_ns(), time.time_ns() + 2_000_000))  # a distinct mtime even on coarse clocks


def test_prompts_over_stdio_follow_the_directory(served: tuple[Path, Path], tmp_path: Path) -> None:
    root, state = served
    prompts = tmp_path / "prompts"
    prompts.mkdir()
    write(prompts / "review.chatmd", REVIEW)
    (prompts / "notes.txt").write_text("not a prompt")
    changes = Changes()

    async def scenario() -> None:
        async with stdio_prompts(root, state, prompts, changes) as s:
            caps = s.server_capabilities
            assert caps is not None and caps.prompts is not None and caps.prompts.list_changed
            listed = (await s.list_prompts()).prompts
            assert [p.name for p in listed] == ["review"]
            tools = {t.name: t for t in (await s.list_tools()).tools}
            assert "review" in tools and tools["review"].description == "Review one file for bugs."  # agent tool
            assert list(tools["review"].input_schema["properties"]) == ["input"]
            assert listed[0].description == "Review one file for bugs."
            args = {a.name: a.required for a in listed[0].arguments or []}
            assert args == {"focus": False, "path": True}

            got = await s.get_prompt("review", {"path": "src/app.py"})
            assert text(got) == [
                ("user", "[system]\nYou review code. Focus: correctness."),
                ("user", "Review src/app.py. <b>src/app.py</b>"),
            ]
            focused = await s.get_prompt("review", {"path": "a", "focus": "speed"})
            assert "Focus: speed." in text(focused)[0][1]
            with pytest.raises(MCPError, match=r"missing required argument.*path"):
                await s.get_prompt("review", {})
            with pytest.raises(MCPError, match=r"unknown prompt 'nope'.*review"):
                await s.get_prompt("nope", {})

            # added while serving: seen by the background check, announced
            write(prompts / "explain.chatmd", "<user>Explain {{topic}}</user>\n<assistant>Sure.</assistant>\n")
            await changes.wait("prompts", 1)
            await changes.wait("tools", 1)  # a new agent tool too
            assert sorted(p.name for p in (await s.list_prompts()).prompts) == ["explain", "review"]
            assert "explain" in {t.name for t in (await s.list_tools()).tools}
            explained = await s.get_prompt("explain", {"topic": "MCP"})
            assert text(explained) == [("user", "Explain MCP"), ("assistant", "Sure.")]

            # edited
            write(prompts / "explain.chatmd", "<developer>Be brief.</developer><user>Explain {{thing}}</user>")
            await changes.wait("prompts", 2)
            edited = await s.get_prompt("explain", {"thing": "roots"})
            assert text(edited) == [("user", "[developer]\nBe brief."), ("user", "Explain roots")]

            # deleted
            (prompts / "explain.chatmd").unlink()
            await changes.wait("prompts", 3)
            assert [p.name for p in (await s.list_prompts()).prompts] == ["review"]
            await changes.wait("tools", 2)
            names = {t.name for t in (await s.list_tools()).tools}
            assert "explain" not in names and "review" in names and "read_file" in names

    asyncio.run(scenario())


def test_prompts_over_http_announce_changes(served: tuple[Path, Path], tmp_path: Path) -> None:
    import subprocess

    root, state = served
    prompts = tmp_path / "prompts"
    prompts.mkdir()
    port = free_port()
    cmd = serve_command(root, state, "--http", f"127.0.0.1:{port}", "--prompts", str(prompts))
    proc = subprocess.Popen(cmd, stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    changes = Changes()

    async def scenario() -> None:
        async with (
            httpx2.AsyncClient(timeout=30) as client,
            streamable_http_client(f"http://127.0.0.1:{port}/mcp", http_client=client) as (read, write_),
            ClientSession(read, write_, message_handler=changes) as s,
        ):
            await s.initialize()
            assert (await s.list_prompts()).prompts == []
            write(prompts / "hello.chatmd", "<user>Hello {{name}}</user>")
            await changes.wait("prompts", 1)
            got = await s.get_prompt("hello", {"name": "web"})
            assert text(got) == [("user", "Hello web")]

    try:
        wait_listening(port, proc)
        asyncio.run(scenario())
    finally:
        proc.terminate()
        proc.wait(10)


def test_prompts_dir_defaults(tmp_path: Path) -> None:
    from tooldeck.mcp.prompts import resolve_prompts_dir

    assert resolve_prompts_dir("x", {"MCP_PROMPTS_DIR": "y"}) == Path("x")
    assert resolve_prompts_dir(None, {"MCP_PROMPTS_DIR": "y"}) == Path("y")
    here = os.getcwd()
    try:
        os.chdir(tmp_path)
        assert resolve_prompts_dir(None, {}) is None
        (tmp_path / "prompts").mkdir()
        assert resolve_prompts_dir(None, {}) == (tmp_path / "prompts").resolve()
    finally:
        os.chdir(here)


def test_env_prompts_dir_is_served(served: tuple[Path, Path], tmp_path: Path) -> None:
    root, state = served
    prompts = tmp_path / "from-env"
    prompts.mkdir()
    write(prompts / "env.chatmd", "<user>from the environment</user>")

    async def scenario() -> None:
        cmd = serve_command(root, state)
        params = StdioServerParameters(
            command=cmd[0], args=cmd[1:], env={**os.environ, "MCP_PROMPTS_DIR": str(prompts)}
        )
        async with stdio_client(params) as (read, write_), ClientSession(read, write_) as s:
            await s.initialize()
            assert [p.name for p in (await s.list_prompts()).prompts] == ["env"]

    asyncio.run(scenario())


def test_modern_protocol_client_reads_prompts_and_resources(served: tuple[Path, Path], tmp_path: Path) -> None:
    from mcp import Client

    root, state = served
    prompts = tmp_path / "prompts"
    prompts.mkdir()
    write(prompts / "review.chatmd", REVIEW)

    async def scenario() -> None:
        cmd = serve_command(root, state, "--prompts", str(prompts))
        params = StdioServerParameters(command=cmd[0], args=cmd[1:], env=dict(os.environ))
        async with Client(params) as client:  # protocol 2026-07-28: every result carries resultType
            assert [p.name for p in (await client.list_prompts()).prompts] == ["review"]
            got = await client.get_prompt("review", {"path": "hello.txt"})
            assert got.messages[1].content.text == "Review hello.txt. <b>hello.txt</b>"  # type: ignore[union-attr]
            hello = (await client.read_resource(f"file://{root.resolve()}/hello.txt")).contents[0]
            assert hello.text == "hello\nworld\n"  # type: ignore[union-attr]

    asyncio.run(scenario())


def test_modern_protocol_client_hears_prompts_changed(served: tuple[Path, Path], tmp_path: Path) -> None:
    from mcp import Client

    root, state = served
    prompts = tmp_path / "prompts"
    prompts.mkdir()
    write(prompts / "review.chatmd", REVIEW)

    async def scenario() -> None:
        cmd = serve_command(root, state, "--prompts", str(prompts))
        params = StdioServerParameters(command=cmd[0], args=cmd[1:], env=dict(os.environ))
        async with Client(params) as client:
            assert [p.name for p in (await client.list_prompts()).prompts] == ["review"]
            async with client.listen(prompts_list_changed=True) as sub:
                write(prompts / "second.chatmd", REVIEW)
                async with asyncio.timeout(15):
                    event = await sub.__aiter__().__anext__()
                assert type(event).__name__ == "PromptsListChanged"
            assert sorted(p.name for p in (await client.list_prompts()).prompts) == ["review", "second"]

    asyncio.run(scenario())
