"""The early front (tooldeck.mcp.early) through the real surface: `tooldeck serve`
spawned over pipes. Its answers must be the SDK's own (the reference is the same
server with TOOLDECK_EARLY_FRONT=0, where the SDK answers everything), cold (no
cache), warm and after the SDK took the stream over; calls arriving while the
stream is handed over, cancelled or malformed in the early phase, and the end of
input before the SDK loaded are each answered (or not) as the SDK path would."""

from __future__ import annotations

import asyncio
import json
import os
import subprocess
import threading
import time
from pathlib import Path
from typing import Any

import pytest
from mcp import ClientSession, StdioServerParameters, stdio_client
from mcp_types.version import HANDSHAKE_PROTOCOL_VERSIONS, LATEST_HANDSHAKE_VERSION

from tests.mcp.mcp_e2e import serve_command
from tests.support.jsonrpc import INITIALIZED
from tooldeck.mcp import wire
from tooldeck.mcp.early_steps import prompts_served
from tooldeck.mcp.prompts import resolve_prompts_dir

pytestmark = [pytest.mark.timeout(180)]

LISTS = ["tools/list", "resources/list", "resources/templates/list", "prompts/list"]


def _env(state: Path, **extra: str) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if k not in ("TOOLDECK_HANDSHAKE_CACHE", "TOOLDECK_EARLY_FRONT")}
    return {**env, "TOOLDECK_STATE_DIR": str(state), **extra}


def _req(ident: Any, method: str, params: dict[str, Any] | None = None) -> dict[str, Any]:
    msg: dict[str, Any] = {"jsonrpc": "2.0", "id": ident, "method": method}
    return msg if params is None else {**msg, "params": params}


def _init(version: str) -> dict[str, Any]:
    return _req(
        0, "initialize", {"protocolVersion": version, "capabilities": {}, "clientInfo": {"name": "t", "version": "1"}}
    )


def _call(ident: Any, name: str, args: dict[str, Any]) -> dict[str, Any]:
    return _req(ident, "tools/call", {"name": name, "arguments": args})




def _run(root: Path, state: Path, lines: list[Any], **env: str) -> tuple[list[str], int]:
    """Send every line at once, close stdin; the raw answer lines and the exit status."""
    data = "".join((m if isinstance(m, str) else json.dumps(m)) + "\n" for m in lines).encode()
    proc = subprocess.run(
        serve_command(root, state), input=data, capture_output=True, timeout=90, env=_env(state, **env)
    )
    return [x for x in proc.stdout.decode().splitlines() if x.strip()], proc.returncode


def _by_id(raw: list[str]) -> dict[Any, dict[str, Any]]:
    out: dict[Any, dict[str, Any]] = {}
    for line in raw:
        msg = json.loads(line)
        if "id" in msg:
            assert msg["id"] not in out, f"answered twice: {msg['id']}: {out[msg['id']]} then {msg}"
            out[msg["id"]] = msg
    return out


def _front_wrote(line: str) -> bool:
    """The front writes with json.dumps' default separators, the SDK compactly."""
    return line.startswith('{"jsonrpc": "2.0"')


@pytest.fixture
def served(tmp_path: Path) -> tuple[Path, Path]:
    root, state = tmp_path / "root", tmp_path / "state"
    root.mkdir()
    (root / "hello.txt").write_text("hello\n")
    (root / "app.py").write_text("def main():\n    return 1\n")
    (root / "data.bin").write_bytes(b"\x00\x01")
    return root, state


def test_the_fronts_versions_are_the_sdks() -> None:
    assert wire.HANDSHAKE_VERSIONS == HANDSHAKE_PROTOCOL_VERSIONS and wire.LATEST_HANDSHAKE == LATEST_HANDSHAKE_VERSION
    assert set(wire.BUILT_VERSIONS) <= set(HANDSHAKE_PROTOCOL_VERSIONS)


def test_prompts_served_agrees_with_the_prompt_library(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)
    monkeypatch.delenv("MCP_PROMPTS_DIR", raising=False)
    assert prompts_served(None) is (resolve_prompts_dir(None) is not None) is False
    (tmp_path / "prompts").mkdir()
    assert prompts_served(None) is (resolve_prompts_dir(None) is not None) is True
    assert prompts_served("elsewhere") and resolve_prompts_dir("elsewhere") is not None


@pytest.mark.parametrize("version", wire.BUILT_VERSIONS)
def test_answers_are_the_sdks_cold_warm_and_after_the_handover(served: tuple[Path, Path], version: str) -> None:
    root, state = served
    calls = [
        _call("c1", "read_file", {"path": "hello.txt"}),
        _call("c2", "read_file", {"pathx": "hello.txt"}),  # bad input: invalid_arguments
        # read_file decodes without pydantic (tools/files/read_args.py): the same verdicts either way
        _call("c6", "read_file", {"path": "hello.txt", "offset": -1}),
        _call("c7", "read_file", {"path": "hello.txt", "limit": True}),
        _call("c8", "read_file", {"file": "hello.txt", "path": "app.py"}),
        _call("c9", "read_file", {"path": "app.py", "start_line": "2", "limit": None}),
        _call("c10", "read_file", {"path": "app.py", "offset": 1, "start_line": 2}),
        _call("c3", "get_code_structure", {"paths": ["app.py"]}),
        _call("c4", "no_such_tool", {}),  # unknown: left to the SDK
        _call("c5", "file_search", {"pattern": "hello"}),
    ]
    first = [_init(version), INITIALIZED, *(_req(m, m) for m in LISTS), _req("ping", "ping"), *calls]
    # the same requests again once the SDK answers (a list with a cursor is left to it: it loads)
    paged = _req("paged", "tools/list", {"cursor": "next"})
    again = [paged, *(_req(f"{m}#2", m) for m in [*LISTS, "ping"]), *({**c, "id": f"{c['id']}#2"} for c in calls)]
    reference, rc = _run(root, state, first, TOOLDECK_EARLY_FRONT="0")
    assert rc == 0 and not any(_front_wrote(x) for x in reference)
    ref = _by_id(reference)
    cold, rc_cold = _run(root, state, first, TOOLDECK_HANDSHAKE_CACHE="0")
    _run(root, state, first)  # records the cache
    warm, rc_warm = _run(root, state, [*first, *again])
    assert rc_cold == rc_warm == 0
    for raw in (cold, warm):
        got = _by_id(raw)
        for ident, answer in ref.items():
            assert got[ident] == answer, ident
        assert any(_front_wrote(x) for x in raw)  # the front did answer
    got = _by_id(warm)
    for ident, answer in ref.items():
        if ident != 0:
            assert got[f"{ident}#2"]["result"] == answer["result"], f"{ident} after the handover"
    assert got["c2"]["result"]["isError"] and "invalid_arguments" in got["c2"]["result"]["content"][0]["text"]


def _warm_session(root: Path, state: Path, idle: str) -> subprocess.Popen[bytes]:
    """A server spawned on a warm cache (recorded by a first start with the same
    environment: calls are taken at once) with TOOLDECK_SDK_IDLE=``idle``, initialized."""
    warm = [_init("2025-06-18"), INITIALIZED, _req(1, "tools/list")]
    _run(root, state, warm, TOOLDECK_SDK_IDLE=idle)
    env = _env(state, TOOLDECK_SDK_IDLE=idle)
    proc = subprocess.Popen(serve_command(root, state), stdin=subprocess.PIPE, stdout=subprocess.PIPE, env=env)
    assert proc.stdin is not None
    proc.stdin.write((json.dumps(_init("2025-06-18")) + "\n" + json.dumps(INITIALIZED) + "\n").encode())
    return proc


def test_calls_arriving_during_the_handover_are_each_answered_once(served: tuple[Path, Path]) -> None:
    """A client that keeps calling from spawn on, with a request only the SDK
    answers (a list with a cursor) after the tenth call: the front answers the
    calls before it, the SDK the later ones; none is lost, none answered
    twice. The idle hand-over is put off (TOOLDECK_SDK_IDLE) so that only that
    request brings it."""
    proc = _warm_session(*served, idle="600")
    assert proc.stdin is not None and proc.stdout is not None
    raw: list[str] = []
    reader = threading.Thread(target=lambda: raw.extend(x.decode() for x in proc.stdout if x.strip()), daemon=True)
    reader.start()

    def sdk_answered_a_call() -> bool:
        return any(not _front_wrote(x) and '"content"' in x for x in list(raw))

    sent, after = 0, None
    deadline = time.monotonic() + 90  # the SDK's load, however long a loaded machine makes it
    while time.monotonic() < deadline and (after is None or sent < after):
        proc.stdin.write((json.dumps(_call(100 + sent, "read_file", {"path": "hello.txt"})) + "\n").encode())
        sent += 1
        if sent == 10:
            proc.stdin.write((json.dumps(_req("p", "tools/list", {"cursor": "next"})) + "\n").encode())
        proc.stdin.flush()
        if after is None and sdk_answered_a_call():
            after = sent + 5  # a few more once the SDK answers: calls on both sides of the handover
        time.sleep(0.02)
    proc.stdin.close()
    assert proc.wait(timeout=60) == 0
    reader.join(timeout=30)
    raw = [x.rstrip("\n") for x in raw]
    got = _by_id(raw)
    assert "tools" in got.pop("p")["result"]
    assert sorted(k for k in got if k != 0) == list(range(100, 100 + sent))
    assert all("hello" in got[i]["result"]["content"][0]["text"] for i in range(100, 100 + sent))
    by_front = {json.loads(x)["id"] for x in raw if _front_wrote(x) and '"result": {"content"' in x}
    assert set(range(100, 110)) <= by_front and len(by_front) < sent  # the handover came with that request


def test_a_session_of_reads_hands_over_to_the_sdk_once_idle(served: tuple[Path, Path]) -> None:
    """Nothing in a session of reads needs the SDK: it loads once the session
    is quiet for TOOLDECK_SDK_IDLE, and answers the calls after that; the
    ones before were the front's."""
    proc = _warm_session(*served, idle="0.3")
    assert proc.stdin is not None and proc.stdout is not None
    writers: list[bool] = []
    deadline = time.monotonic() + 90
    while time.monotonic() < deadline and (not writers or writers[-1]):
        proc.stdin.write((json.dumps(_call(len(writers) + 1, "read_file", {"path": "hello.txt"})) + "\n").encode())
        proc.stdin.flush()
        line = proc.stdout.readline().decode()
        while '"id": 0' in line or '"id":0' in line:
            line = proc.stdout.readline().decode()
        assert "hello" in json.loads(line)["result"]["content"][0]["text"]
        writers.append(_front_wrote(line))
        time.sleep(1.0)  # quiet for longer than the idle time
    proc.stdin.close()
    assert proc.wait(timeout=60) == 0
    assert writers[0] and not writers[-1]  # the front answered first, the SDK once the session was idle


def test_a_call_cancelled_in_the_early_phase_gets_no_answer_and_the_server_goes_on(served: tuple[Path, Path]) -> None:
    root, state = served
    cancel = {"jsonrpc": "2.0", "method": "notifications/cancelled", "params": {"requestId": "x"}}
    lines = [
        _init("2025-06-18"),
        INITIALIZED,
        _call("x", "read_file", {"path": "hello.txt"}),
        cancel,  # arrives with the call, long before the catalog is built
        _call("y", "read_file", {"path": "hello.txt"}),
        "this is not JSON",
        '{"jsonrpc": "2.0", "id": "deep", "method": "ping", "params": ' + "[" * 300 + "]" * 300 + "}",
    ]
    raw, rc = _run(root, state, lines, TOOLDECK_HANDSHAKE_CACHE="0")
    got = _by_id(raw)
    assert rc == 0 and "x" not in got
    assert "hello" in got["y"]["result"]["content"][0]["text"]
    errors = [json.loads(x) for x in raw if '"error"' in x]
    assert any(e["error"]["code"] == -32700 and e["id"] is None for e in errors)  # the non-JSON line
    reference, _ = _run(root, state, lines, TOOLDECK_EARLY_FRONT="0")
    assert {k: v for k, v in got.items() if k != 0} == {k: v for k, v in _by_id(reference).items() if k != 0}


def test_the_end_of_input_in_the_early_phase_exits_cleanly(served: tuple[Path, Path]) -> None:
    """Everything read is answered, the exit status is 0, and the SDK is never
    loaded for a session that did not need it (the exit comes well before it)."""
    root, state = served
    lines = [_init("2025-11-25"), INITIALIZED, _req(1, "resources/list"), _call(2, "read_file", {"path": "hello.txt"})]
    start = time.monotonic()
    raw, rc = _run(root, state, lines, TOOLDECK_HANDSHAKE_CACHE="0")
    took = time.monotonic() - start
    got = _by_id(raw)
    assert rc == 0 and set(got) == {0, 1, 2} and all(_front_wrote(x) for x in raw)
    assert [r["name"] for r in got[1]["result"]["resources"]] == ["app.py", "data.bin", "hello.txt"]
    assert took < 60
    proc = subprocess.Popen(serve_command(root, state), stdin=subprocess.PIPE, stdout=subprocess.PIPE, env=_env(state))
    assert proc.stdin is not None
    proc.stdin.close()  # no request at all
    assert proc.wait(timeout=30) == 0


def test_an_sdk_client_sees_the_same_server_cold_and_warm(served: tuple[Path, Path]) -> None:
    root, state = served

    async def session(**env: str) -> tuple[Any, ...]:
        cmd = serve_command(root, state)
        params = StdioServerParameters(command=cmd[0], args=cmd[1:], env=_env(state, **env))
        async with stdio_client(params) as (r, w), ClientSession(r, w) as s:
            init = await s.initialize()
            tools = await s.list_tools()
            resources = await s.list_resources()
            templates = await s.list_resource_templates()
            prompts = await s.list_prompts()
            call = await s.call_tool("read_file", {"path": "hello.txt"})
            await s.send_ping()
            after = await s.call_tool("read_file", {"path": "hello.txt"})
            return init, tools, resources, templates, prompts, call, after

    reference = asyncio.run(session(TOOLDECK_EARLY_FRONT="0"))
    cold = asyncio.run(session(TOOLDECK_HANDSHAKE_CACHE="0"))
    asyncio.run(session())
    warm = asyncio.run(session())
    assert cold == reference and warm == reference
    assert reference[5] == reference[6]


def test_the_end_of_input_after_early_answers_exits_cleanly_and_warms_the_cache(served: tuple[Path, Path]) -> None:
    """A short session: answered by the front, stdin closed once the answers are in
    (the runtime is up, the SDK perhaps not): exit 0, and the next start is warm."""
    root, state = served
    proc = subprocess.Popen(serve_command(root, state), stdin=subprocess.PIPE, stdout=subprocess.PIPE, env=_env(state))
    assert proc.stdin is not None and proc.stdout is not None
    for message in (
        _init("2025-11-25"),
        INITIALIZED,
        _req(1, "tools/list"),
        _call(2, "read_file", {"path": "hello.txt"}),
    ):
        proc.stdin.write((json.dumps(message) + "\n").encode())
    proc.stdin.flush()
    got = {}
    while len(got) < 3:
        msg = json.loads(proc.stdout.readline())
        got[msg["id"]] = msg
    proc.stdin.close()
    assert proc.wait(timeout=30) == 0
    assert "hello" in got[2]["result"]["content"][0]["text"]
    [cache] = (state / "mcp-handshake").glob("*.json")
    data = json.loads(cache.read_text())
    assert data["tools/list"]["2025-11-25"] == got[1]["result"] and data["tool_domains"]["read_file"]


def test_calls_that_may_ask_the_person_wait_for_the_sdk(served: tuple[Path, Path]) -> None:
    """The shell may ask the person (elicitation needs the SDK session); a tool
    that changes files is not the front's either: both are answered by the SDK."""
    root, state = served
    _run(root, state, [_init("2025-11-25"), INITIALIZED, _req(1, "tools/list")])  # warm
    lines = [
        _init("2025-11-25"),
        INITIALIZED,
        _call("sh", "shell", {"program": "ls", "arguments": []}),
        _call("fa", "file_actions", {"action": "create", "path": "new.txt", "content": "x"}),
        _call("rf", "read_file", {"path": "hello.txt"}),
    ]
    raw, rc = _run(root, state, lines)
    by_writer = {json.loads(x)["id"]: _front_wrote(x) for x in raw}
    assert rc == 0 and by_writer == {0: True, "sh": False, "fa": False, "rf": True}


def test_the_file_lists_do_not_wait_for_the_tool_catalog(served: tuple[Path, Path]) -> None:
    """``resources/list`` and ``resources/templates/list`` need only the
    started runtime (its roots): cold, they are answered before ``tools/list``,
    which needs the whole catalog, and they are what the SDK-only server says."""
    root, state = served
    lines = [_init("2025-11-25"), INITIALIZED, _req(1, "tools/list"), _req(2, "resources/list")]
    lines.append(_req(3, "resources/templates/list"))
    raw, rc = _run(root, state, lines, TOOLDECK_HANDSHAKE_CACHE="0")
    order = [json.loads(x).get("id") for x in raw]
    assert rc == 0 and order.index(2) < order.index(1) and order.index(3) < order.index(1), order
    sdk, rc_sdk = _run(root, state, lines, TOOLDECK_HANDSHAKE_CACHE="0", TOOLDECK_EARLY_FRONT="0")
    early, ref = _by_id(raw), _by_id(sdk)
    assert rc_sdk == 0 and early[2]["result"] == ref[2]["result"] and early[3]["result"] == ref[3]["result"]


def test_cold_calls_run_early_by_the_declared_list_and_a_switched_off_tool_never_does(
    served: tuple[Path, Path],
) -> None:
    """Without the cache the front knows the tools served from the shipped
    declarations: a read-only call runs early (its tool built alone), one that
    changes files or may ask the person waits for the SDK, and a tool the person
    switched off is answered by the SDK as unknown, never run by the front."""
    root, state = served
    lines = [
        _init("2025-11-25"),
        INITIALIZED,
        _call("rf", "read_file", {"path": "hello.txt"}),
        _call("rd", "read_directory", {}),
        _call("fa", "file_actions", {"action": "create", "path": "new.txt", "content": "x"}),
        _call("sh", "shell", {"program": "ls", "arguments": []}),
    ]
    data = "".join(json.dumps(m) + "\n" for m in lines).encode()
    cmd = serve_command(root, state, "--exclude-tools", "read_directory")
    env = _env(state, TOOLDECK_HANDSHAKE_CACHE="0")
    proc = subprocess.run(cmd, input=data, capture_output=True, timeout=90, env=env)
    raw = [x for x in proc.stdout.decode().splitlines() if x.strip()]
    by_writer = {json.loads(x)["id"]: _front_wrote(x) for x in raw}
    assert proc.returncode == 0 and by_writer == {0: True, "rf": True, "rd": False, "fa": False, "sh": False}
    got = _by_id(raw)
    assert "hello" in got["rf"]["result"]["content"][0]["text"]
    assert got["rd"]["result"]["isError"] and "read_directory" in got["rd"]["result"]["content"][0]["text"]
    assert (root / "new.txt").read_text() == "x"  # the SDK ran it
