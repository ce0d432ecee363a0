"""Seed parity and first-use rough edges over MCP: a spawned ``tooldeck serve``
spoken to with the official SDK client (stdio and streamable HTTP)."""

from __future__ import annotations

import contextlib
import os
import socket
import subprocess
import sys
import time
from collections.abc import AsyncIterator, Iterator
from pathlib import Path
from typing import Any

import anyio
import httpx2
import pytest
from mcp import ClientSession, StdioServerParameters, stdio_client

from tests.mcp.mcp_e2e import free_port, http_session, serve_command

pytestmark = pytest.mark.timeout(120)


def text_of(result: Any) -> str:
    return "\n".join(c.text for c in result.content if getattr(c, "type", "") == "text")


def env_for(state: Path, config: Path | None = None) -> dict[str, str]:
    env = {**os.environ, "TOOLDECK_STATE_DIR": str(state), "TOOLDECK_CONFIG": str(config or os.devnull)}
    env.pop("MCP_PROMPTS_DIR", None)
    return env


@contextlib.asynccontextmanager
async def stdio(root: Path, state: Path, *extra: str, config: Path | None = None) -> AsyncIterator[ClientSession]:
    cmd = serve_command(root, state, *extra)
    params = StdioServerParameters(command=cmd[0], args=cmd[1:], env=env_for(state, config), cwd=str(root))
    async with stdio_client(params) as (read, write), ClientSession(read, write) as session:
        await session.initialize()
        yield session


@contextlib.contextmanager
def http_server(root: Path, state: Path, host: str) -> Iterator[tuple[str, subprocess.Popen[bytes], Path]]:
    """``serve --http host:port`` started in ``root`` (no ./prompts there); (base URL, process, stderr file)."""
    port = free_port()
    err = state / "http.stderr"
    with open(err, "wb") as fh:
        proc = subprocess.Popen(
            serve_command(root, state, "--http", f"{host}:{port}"),
            cwd=root, stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=fh, env=env_for(state),
        )  # fmt: skip
    try:
        deadline = time.monotonic() + 30
        while True:
            assert proc.poll() is None, err.read_text()
            with socket.socket() as s:
                if s.connect_ex((host, port)) == 0:
                    break
            assert time.monotonic() < deadline, "the server never listened"
            time.sleep(0.05)
        yield f"http://{host}:{port}", proc, err
    finally:
        proc.terminate()
        try:
            proc.wait(10)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()


# a JSON array sent as a string ---------------------------------------------------------------
def test_an_array_sent_as_a_string_is_accepted(served: tuple[Path, Path]) -> None:
    root, state = served

    async def scenario() -> None:
        async with stdio(root, state) as s:
            # what `mcp-inspector --cli --tool-arg 'paths=["src/app.py"]'` sends
            res = await s.call_tool("get_code_structure", {"scope": "paths", "paths": '["src/app.py"]'})
            assert not res.is_error, text_of(res)
            assert "def main" in text_of(res) or "main()" in text_of(res)
            # a string that is no array stays an error that names the field
            bad = await s.call_tool("get_code_structure", {"scope": "paths", "paths": "src/app.py"})
            assert bad.is_error and "paths" in text_of(bad)

    anyio.run(scenario)


# prompts/list without a prompts folder ----------------------------------------------------------
def test_prompts_list_without_a_prompts_folder_is_an_empty_list_over_http(served: tuple[Path, Path]) -> None:
    root, state = served
    assert not (root / "prompts").exists()
    with http_server(root, state, "127.0.0.1") as (base, _proc, _err):

        async def scenario() -> None:
            async with http_session(base + "/mcp") as s:
                listed = await s.list_prompts()
                assert listed.prompts == []

        anyio.run(scenario)


# the dashboard on another loopback address -------------------------------------------------------
def test_the_dashboard_answers_on_the_loopback_address_it_was_bound_to(served: tuple[Path, Path]) -> None:
    root, state = served
    with http_server(root, state, "127.0.0.2") as (base, _proc, err):
        deadline = time.monotonic() + 10
        while "dashboard at" not in err.read_text() and time.monotonic() < deadline:
            time.sleep(0.05)
        assert f"dashboard at {base}/" in err.read_text()
        page = httpx2.get(base + "/", timeout=30)
        assert page.status_code == 200, page.text
        # a name that is not loopback is still refused (DNS rebinding)
        forged = httpx2.get(base + "/", headers={"Host": "attacker.example"}, timeout=30)
        assert forged.status_code == 403


# single tools switched on and off ------------------------------------------------------------------
def test_serve_tools_and_exclude_tools(served: tuple[Path, Path]) -> None:
    root, state = served

    async def scenario() -> None:
        async with stdio(root, state, "--tools", "read_file,file_search,shell", "--exclude-tools", "shell") as s:
            names = sorted(t.name for t in (await s.list_tools()).tools)
            assert names == ["file_search", "read_file"]
            gone = await s.call_tool("apply_edits", {"path": "hello.txt", "search": "hello", "replace": "bye"})
            assert gone.is_error
        async with stdio(root, state, "--profile", "core", "--tools", "git") as s:
            names = {t.name for t in (await s.list_tools()).tools}
            assert "git" in names and "read_file" in names and "shell" not in names

    anyio.run(scenario)
    assert (root / "hello.txt").read_text() == "hello\nworld\n"


def test_an_unknown_tool_name_is_a_usage_error_naming_the_nearest(served: tuple[Path, Path]) -> None:
    root, state = served
    done = subprocess.run(
        serve_command(root, state, "--tools", "read_fil"), stdin=subprocess.DEVNULL, capture_output=True,
        text=True, timeout=60, env=env_for(state),
    )  # fmt: skip
    assert done.returncode == 2 and "read_fil" in done.stderr and "read_file" in done.stderr


def test_config_switches_user_file_and_a_project_file_that_may_only_disable(
    served: tuple[Path, Path], tmp_path: Path
) -> None:
    root, state = served
    user = tmp_path / "user.toml"
    user.write_text('[tools]\nenabled = ["read_file", "git", "shell", "file_search"]\ndisabled = ["shell"]\n')
    # a project file (the model can write it) tries to switch shell back on and serve apply_edits
    (root / ".tooldeck.toml").write_text('[tools]\nenabled = ["apply_edits", "shell"]\ndisabled = ["git"]\n')

    async def scenario() -> None:
        async with stdio(root, state, config=user) as s:
            names = sorted(t.name for t in (await s.list_tools()).tools)
            assert names == ["file_search", "read_file"]

    anyio.run(scenario)
    cost = subprocess.run(
        [sys.executable, "-m", "tooldeck", "tools", "--cost", "--state-dir", str(state)],
        cwd=root, capture_output=True, text=True, timeout=60, env=env_for(state, user),
    )  # fmt: skip
    assert cost.returncode == 0, cost.stderr
    rows = [line.split()[0] for line in cost.stdout.splitlines()]
    assert rows[:3] == ["read_file", "file_search", "total"] and rows[3:] == ["core"]  # core: --profile core beside


# context_builder builds into a fresh tab ------------------------------------------------------------
def test_context_builder_builds_into_a_fresh_tab_and_leaves_the_current_one(served: tuple[Path, Path]) -> None:
    root, state = served

    async def scenario() -> None:
        async with stdio(root, state) as s:
            await s.call_tool("manage_selection", {"op": "set", "paths": ["hello.txt"]})
            await s.call_tool("prompt", {"op": "set", "text": "my own words"})
            built = await s.call_tool("context_builder", {"instructions": "what does main in app.py return"})
            assert not built.is_error, text_of(built)
            tab_id = (built.structured_content or {})["tab_id"]
            assert tab_id in text_of(built)
            # the connection now works on the built tab
            ctx = text_of(await s.call_tool("workspace_context", {"include": ["prompt", "selection"]}))
            assert "what does main in app.py return" in ctx and "app.py" in ctx
            tabs = text_of(await s.call_tool("manage_workspaces", {"action": "list_tabs"}))
            assert tab_id in tabs and "Context: what does main" in tabs
            # the tab worked in before is as it was
            first = tabs.splitlines()[1].split("[id ")[1].split("]")[0]
            assert first != tab_id
            await s.call_tool("manage_workspaces", {"action": "select_tab", "tab": first})
            assert "my own words" in text_of(await s.call_tool("prompt", {"op": "get"}))
            sel = text_of(await s.call_tool("manage_selection", {"op": "get", "view": "files"}))
            assert "hello.txt" in sel and "app.py" not in sel
            # a named tab is built into (made when missing)
            again = await s.call_tool("context_builder", {"instructions": "hello world", "tab": "review"})
            assert not again.is_error and (again.structured_content or {})["tab"] == "review"

    anyio.run(scenario)


# app_settings: every example of seed 004 works or says what exists --------------------------------
SEED_SETTINGS_EXAMPLES: list[dict[str, Any]] = [
    {"op": "list"},
    {"op": "list", "group": "ui"},
    {"op": "get", "keys": ["ui.appearance_mode", "mcp.auto_start"]},
    {"op": "set", "key": "ui.show_tooltips", "value": False},
    {"op": "set", "key": "models.planning_model", "value": None},
    {"op": "set", "key": "context_builder.agent", "value": "codexExec"},
    {"op": "options", "key": "models.planning_model", "agent": "codexExec"},
]


def test_app_settings_seed_examples_work_or_list_the_keys_and_the_nearest(served: tuple[Path, Path]) -> None:
    root, state = served

    async def scenario() -> None:
        async with stdio(root, state) as s:
            for args in SEED_SETTINGS_EXAMPLES:
                res = await s.call_tool("app_settings", args)
                text = text_of(res)
                assert "unknown field" not in text, (args, text)
                if not res.is_error:
                    continue
                if "group" in args:
                    assert "output, tree, code_maps" in text, (args, text)
                else:  # every key there is, and the nearest one when one is near
                    assert "output.budget_tokens" in text and "models.default_model" in text, (args, text)
            res = await s.call_tool("app_settings", {"op": "set", "key": "models.planning_model", "value": None})
            assert "nearest: models.default_model" in text_of(res)
            res = await s.call_tool("app_settings", {"op": "options", "key": "tree.default_mode", "agent": "x"})
            assert not res.is_error and "auto" in text_of(res)
            # person-only keys stay denied to the tool
            res = await s.call_tool("app_settings", {"op": "set", "key": "models.base_url", "value": "http://x.test/"})
            assert res.is_error and "denied" in text_of(res)

    anyio.run(scenario)


def test_window_id_and_open_in_new_window_map_onto_workspaces(served: tuple[Path, Path], tmp_path: Path) -> None:
    root, state = served
    other = root / "other"
    other.mkdir()

    async def scenario() -> None:
        async with stdio(root, state) as s:
            made = await s.call_tool(
                "manage_workspaces",
                {"action": "create", "name": "second", "folder_path": str(other), "open_in_new_window": True},
            )
            assert not made.is_error, text_of(made)
            window = text_of(made).split("window_id ")[1].split(")")[0]
            listed = text_of(await s.call_tool("manage_workspaces", {"action": "list_tabs", "window_id": window}))
            assert "second" in listed
            back = await s.call_tool("manage_workspaces", {"action": "switch", "window_id": "root"})
            assert not back.is_error and "window_id" in text_of(back), text_of(back)
            tab = await s.call_tool("manage_workspaces", {"action": "create_tab", "name": "t2", "window_id": window})
            assert not tab.is_error and "switched to workspace 'second'" in text_of(tab), text_of(tab)
            missing = await s.call_tool("manage_workspaces", {"action": "list_tabs", "window_id": "nope"})
            assert missing.is_error and "no workspace 'nope'" in text_of(missing)

    anyio.run(scenario)


# serve started in a terminal --------------------------------------------------------------------------
def _stderr_of_serve_in_a_terminal(root: Path, state: Path) -> str:
    import pty
    import select

    leader, follower = pty.openpty()
    proc = subprocess.Popen(
        serve_command(root, state), stdin=follower, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE,
        env=env_for(state),
    )  # fmt: skip
    os.close(follower)
    seen = b""
    try:
        assert proc.stderr is not None
        deadline = time.monotonic() + 60
        while b"--http" not in seen and time.monotonic() < deadline:
            ready, _, _ = select.select([proc.stderr], [], [], 1.0)
            if ready:
                chunk = os.read(proc.stderr.fileno(), 4096)
                if not chunk:
                    break
                seen += chunk
    finally:
        proc.terminate()
        proc.wait(20)
        os.close(leader)
    return seen.decode()


def test_serve_in_a_terminal_says_what_it_waits_for_and_the_line_to_paste(served: tuple[Path, Path]) -> None:
    import json

    root, state = served
    text = _stderr_of_serve_in_a_terminal(root, state)
    assert "waiting for a client" in text, text
    line = next(ln.strip() for ln in text.splitlines() if ln.strip().startswith('{"mcpServers"'))
    entry = json.loads(line)["mcpServers"]["tooldeck"]
    assert "serve" in entry["args"] and str(root) in entry["args"]

    async def scenario() -> None:  # the pasted line starts a server a client can use
        params = StdioServerParameters(command=entry["command"], args=entry["args"], env=env_for(state))
        async with stdio_client(params) as (read, write), ClientSession(read, write) as session:
            await session.initialize()
            assert "read_file" in {t.name for t in (await session.list_tools()).tools}

    anyio.run(scenario)


def test_serve_started_by_a_client_prints_no_terminal_help(served: tuple[Path, Path]) -> None:
    root, state = served
    done = subprocess.run(serve_command(root, state), input=b"", capture_output=True, timeout=60, env=env_for(state))
    assert b"waiting for a client" not in done.stderr
