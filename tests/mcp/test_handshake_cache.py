"""The stdio handshake front and its cache (docs/mcp.md, "Start-up"), through
the real surface: `python -m tooldeck serve` spawned, spoken to with the SDK
client, and with raw JSON-RPC lines where the first line matters."""

from __future__ import annotations

import asyncio
import json
import os
import subprocess
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import mcp_types as types
import pytest
from mcp import ClientSession, StdioServerParameters, stdio_client

from tests.mcp.mcp_e2e import serve_command
from tests.support.jsonrpc import INIT, INITIALIZED

pytestmark = [pytest.mark.timeout(120), pytest.mark.xdist_group("handshake-cache")]  # one warm cache per module

LIST = {"jsonrpc": "2.0", "id": 2, "method": "tools/list"}
MARK = "instructions from the cache file"


class Seen:
    """tools/list_changed notifications the client received."""

    def __init__(self) -> None:
        self.list_changed = 0

    async def __call__(self, message: Any) -> None:
        if isinstance(message, types.ToolListChangedNotification):
            self.list_changed += 1


def _env(state: Path, **extra: str) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if k != "TOOLDECK_HANDSHAKE_CACHE"}
    return {**env, "TOOLDECK_STATE_DIR": str(state), **extra}


async def _session(
    root: Path, state: Path, seen: Seen | None = None, sdk: bool = True, **env: str
) -> tuple[Any, list[str], int]:
    """initialize + tools/list (+ a request only the SDK answers); returns
    (initialize result, tool names, list_changed count)."""
    cmd = serve_command(root, state)
    params = StdioServerParameters(command=cmd[0], args=cmd[1:], env=_env(state, **env))
    seen = seen or Seen()
    async with stdio_client(params) as (r, w), ClientSession(r, w, message_handler=seen) as s:
        init = await s.initialize()
        names = [t.name for t in (await s.list_tools()).tools]
        res = await s.call_tool("read_file", {"path": "hello.txt"})  # the real server is up behind the front
        assert not res.is_error and "hello" in res.content[0].text  # type: ignore[union-attr]
        await s.send_ping()  # answered by the front as by the SDK
        if sdk:  # a list with a cursor is the SDK's: it loads, and its Tap checks the cache
            await s.list_tools(params=types.PaginatedRequestParams(cursor="next"))
        deadline = time.monotonic() + 60
        while seen.list_changed == 0 and time.monotonic() < deadline and "stale_tool" in names:
            await asyncio.sleep(0.05)
        if seen.list_changed:
            names = [t.name for t in (await s.list_tools()).tools]
        return init, names, seen.list_changed


def _cache_files(state: Path) -> list[Path]:
    return sorted((state / "mcp-handshake").glob("*.json"))


def _edit_cache(state: Path, edit: Any) -> None:
    for path in _cache_files(state):
        data = json.loads(path.read_text())
        edit(data)
        path.write_text(json.dumps(data))


def _mark_instructions(data: dict[str, Any]) -> None:
    for result in data["initialize"].values():
        result["instructions"] = MARK


def test_first_run_records_the_cache_and_the_second_answers_from_it(served: tuple[Path, Path]) -> None:
    root, state = served
    init1, names1, changed1 = asyncio.run(_session(root, state))
    assert "read_file" in names1 and changed1 == 0
    [path] = _cache_files(state)
    data = json.loads(path.read_text())
    assert data["initialize"]["2025-11-25"]["serverInfo"]["name"] == "tooldeck"
    assert [t["name"] for t in data["tools/list"]["2025-11-25"]["tools"]] == names1
    assert "2025-11-25" in data["handshake_versions"]

    init2, names2, changed2 = asyncio.run(_session(root, state))
    assert init2 == init1 and names2 == names1 and changed2 == 0

    _edit_cache(state, _mark_instructions)  # proves who answers: the front sends the cached text
    init3, _, _ = asyncio.run(_session(root, state))
    assert init3.instructions == MARK
    # the real server's answer differed: the cache is corrected for the next start
    init4, _, _ = asyncio.run(_session(root, state))
    assert init4.instructions == init1.instructions


def test_a_stale_tool_list_is_corrected_with_list_changed(served: tuple[Path, Path]) -> None:
    root, state = served
    _, names, _ = asyncio.run(_session(root, state))

    def stale(data: dict[str, Any]) -> None:
        for result in data["tools/list"].values():
            result["tools"] = [*result["tools"][:3], {**result["tools"][0], "name": "stale_tool"}]

    _edit_cache(state, stale)
    _, corrected, changed = asyncio.run(_session(root, state))
    assert changed == 1 and corrected == names  # listed again after the notification: the real tools
    [path] = _cache_files(state)
    cached = json.loads(path.read_text())["tools/list"]["2025-11-25"]["tools"]
    assert [t["name"] for t in cached] == names


def test_a_stale_tool_list_is_corrected_in_a_session_that_never_loads_the_sdk(served: tuple[Path, Path]) -> None:
    """Nothing for the SDK and no idle hand-over (TOOLDECK_SDK_IDLE): the front itself
    checks its cached answers against the built catalog."""
    root, state = served
    _, names, _ = asyncio.run(_session(root, state, TOOLDECK_SDK_IDLE="600"))  # the same env: the same cache

    def stale(data: dict[str, Any]) -> None:
        for result in data["tools/list"].values():
            result["tools"] = [*result["tools"][:3], {**result["tools"][0], "name": "stale_tool"}]
        for result in data["initialize"].values():
            result["instructions"] = MARK

    _edit_cache(state, stale)
    init, corrected, changed = asyncio.run(_session(root, state, sdk=False, TOOLDECK_SDK_IDLE="600"))
    assert init.instructions == MARK and changed == 1 and corrected == names
    [path] = _cache_files(state)
    data = json.loads(path.read_text())
    assert [t["name"] for t in data["tools/list"]["2025-11-25"]["tools"]] == names
    assert data["initialize"]["2025-11-25"]["instructions"] != MARK  # corrected for the next start too


def test_a_changed_config_or_root_is_a_different_cache(served: tuple[Path, Path], tmp_path: Path) -> None:
    root, state = served
    asyncio.run(_session(root, state))
    _edit_cache(state, _mark_instructions)
    (root / ".tooldeck.toml").write_text("[output]\nbudget_tokens = 12000\n")
    init, _, _ = asyncio.run(_session(root, state))
    assert init.instructions != MARK  # the project file changed: the old answers are not used
    assert len(_cache_files(state)) == 2

    other = tmp_path / "other"
    other.mkdir()
    (other / "hello.txt").write_text("hello\n")
    _edit_cache(state, _mark_instructions)
    init, _, _ = asyncio.run(_session(other, state))
    assert init.instructions != MARK
    config = tmp_path / "config.toml"
    config.write_text("")
    init, _, _ = asyncio.run(_session(root, state, TOOLDECK_CONFIG=str(config)))
    assert init.instructions != MARK


def _exchange(root: Path, state: Path, lines: list[str], **env: str) -> list[dict[str, Any]]:
    proc = subprocess.run(
        serve_command(root, state),
        input="".join(line + "\n" for line in lines).encode(),
        capture_output=True,
        timeout=60,
        env=_env(state, **env),
    )
    return [json.loads(line) for line in proc.stdout.decode().splitlines() if line.strip()]


def _warm(root: Path, state: Path) -> None:
    replies = _exchange(root, state, [json.dumps(m) for m in (INIT, INITIALIZED, LIST)])
    assert [r["id"] for r in replies] == [1, 2]
    assert _cache_files(state)


@pytest.fixture(scope="module")
def warm_server(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Path]:
    """One workspace whose handshake cache is recorded once for the module (the
    cache's key holds the root and state paths, so they are shared, not copied)."""
    base = tmp_path_factory.mktemp("handshake-warm")
    root, state = base / "root", base / "state"
    root.mkdir()
    state.mkdir()
    (root / "hello.txt").write_text("hello\nworld\n")
    _warm(root, state)
    return root, state


@pytest.fixture
def warmed(warm_server: tuple[Path, Path]) -> Iterator[tuple[Path, Path]]:
    """The warm workspace; its cache files are put back as they were after each test."""
    root, state = warm_server
    saved = {p: p.read_bytes() for p in _cache_files(state)}
    yield root, state
    for p in _cache_files(state):
        if p not in saved:
            p.unlink()
    for p, data in saved.items():
        p.write_bytes(data)


def test_raw_pipelined_handshake_is_answered_once_per_request(warmed: tuple[Path, Path]) -> None:
    root, state = warmed
    ping = {"jsonrpc": "2.0", "id": 3, "method": "ping"}
    lines = [json.dumps(m) for m in (INIT, INITIALIZED, LIST, ping)]
    fast = _exchange(root, state, lines)
    slow = _exchange(root, state, lines, TOOLDECK_HANDSHAKE_CACHE="0")
    assert sorted(r["id"] for r in fast) == [1, 2, 3]  # the SDK's own answers to 1 and 2 were swallowed
    assert {r["id"]: r for r in fast} == {r["id"]: r for r in slow}


def test_another_first_request_gets_the_sdks_own_answer(warmed: tuple[Path, Path]) -> None:
    root, state = warmed
    lines = [json.dumps(LIST), json.dumps({**INIT, "id": 9}), json.dumps({**LIST, "id": 10})]
    fast = _exchange(root, state, lines)
    slow = _exchange(root, state, lines, TOOLDECK_HANDSHAKE_CACHE="0")
    assert fast == slow
    assert fast[0]["id"] == 2 and "error" in fast[0]  # tools/list before initialize: the SDK refuses it


def test_a_malformed_first_line_gets_a_parse_error(warmed: tuple[Path, Path]) -> None:
    root, state = warmed
    replies = _exchange(
        root, state, ["{not json", json.dumps(INIT), json.dumps({"jsonrpc": "2.0", "id": 4, "method": "ping"})]
    )
    assert replies[0]["error"]["code"] == -32700 and replies[0]["id"] is None
    by_id = {r["id"]: r for r in replies[1:]}
    assert "result" in by_id[1] and by_id[4]["result"] == {}


def test_an_unusual_initialize_is_left_to_the_sdk(warmed: tuple[Path, Path]) -> None:
    root, state = warmed
    odd = {**INIT, "params": {**INIT["params"], "clientInfo": {"name": "raw"}}}  # no version: invalid
    lines = [json.dumps(odd), json.dumps({"jsonrpc": "2.0", "id": 4, "method": "ping"})]
    assert _exchange(root, state, lines) == _exchange(root, state, lines, TOOLDECK_HANDSHAKE_CACHE="0")


def test_the_lists_a_client_sends_after_initialize_come_from_the_cache_too(warmed: tuple[Path, Path]) -> None:
    """Claude Code sends tools/list, resources/list, resources/templates/list and prompts/list together
    after initialize; the two that are a function of the cache key are answered from it (recorded at the
    first start), resources/list (the files of the roots) is built live by the early front. Every answer
    equals the SDK's own, and the SDK's corrects the cache once it runs."""
    root, state = warmed
    methods = ["tools/list", "resources/list", "resources/templates/list", "prompts/list"]
    lists = [{"jsonrpc": "2.0", "id": i, "method": m} for i, m in enumerate(methods, 10)]
    lines = [json.dumps(m) for m in (INIT, INITIALIZED, *lists)]
    _exchange(root, state, lines)  # records the answers the module's warm-up did not ask for
    [path] = _cache_files(state)
    data = json.loads(path.read_text())
    assert {"resources/templates/list", "prompts/list"} <= set(data) and "resources/list" not in data
    _edit_cache(state, lambda d: d["prompts/list"]["2025-11-25"].update(nextCursor="from-the-cache"))
    fast = _exchange(root, state, lines)
    slow = _exchange(root, state, lines, TOOLDECK_HANDSHAKE_CACHE="0")
    assert sorted(r["id"] for r in fast) == [1, 10, 11, 12, 13]  # once each: the SDK's duplicates swallowed
    answered = {r["id"]: r for r in fast}
    assert answered[13]["result"]["nextCursor"] == "from-the-cache"  # who answered: the front
    answered[13]["result"].pop("nextCursor")
    assert answered == {r["id"]: r for r in slow}
    paged = {"jsonrpc": "2.0", "id": 99, "method": "tools/list", "params": {"cursor": "next"}}
    _exchange(root, state, [*lines, json.dumps(paged)])  # a cursor is the SDK's: it runs and checks
    healed = json.loads(path.read_text())["prompts/list"]["2025-11-25"]  # the SDK's answer replaced the edit
    assert "nextCursor" not in healed
