"""Units of the handshake front: it decides exactly as the SDK does."""

from __future__ import annotations

import json
import os
import time
from pathlib import Path
from types import SimpleNamespace
from typing import Any

import pytest
from mcp.server.runner import ServerRunner
from mcp_types.version import HANDSHAKE_PROTOCOL_VERSIONS, KNOWN_PROTOCOL_VERSIONS, LATEST_HANDSHAKE_VERSION
from pydantic import ValidationError

from tooldeck import tool_manifest
from tooldeck.mcp.handshake_cache import HandshakeCache, cache_key, cache_path, prune, state_dir
from tooldeck.mcp.handshake_front import Tap, plain_initialize
from tooldeck.store.db import default_state_dir

BASE: dict[str, Any] = {
    "jsonrpc": "2.0",
    "id": 1,
    "method": "initialize",
    "params": {"protocolVersion": "2025-06-18", "capabilities": {}, "clientInfo": {"name": "c", "version": "1"}},
}


def _cache(tmp_path: Path) -> HandshakeCache:
    cache = HandshakeCache(str(tmp_path / "c.json"), {"k": 1})
    cache.set_versions(list(HANDSHAKE_PROTOCOL_VERSIONS), LATEST_HANDSHAKE_VERSION)
    return cache


@pytest.mark.parametrize("requested", [*KNOWN_PROTOCOL_VERSIONS, "1999-01-01", "zzz", ""])
def test_negotiation_is_the_sdks(tmp_path: Path, requested: str) -> None:
    params = {**BASE["params"], "protocolVersion": requested}
    _, sdk = ServerRunner._negotiate_initialize(params)
    assert _cache(tmp_path).negotiate(requested) == sdk


def test_no_versions_cached_means_no_answer(tmp_path: Path) -> None:
    assert HandshakeCache(str(tmp_path / "c.json"), {}).negotiate("2025-11-25") is None


@pytest.mark.parametrize(
    ("change", "front_takes"),
    [
        ({}, True),
        ({"capabilities": {"roots": {"listChanged": True}, "sampling": {}, "elicitation": {"form": {}}}}, True),
        ({"_meta": {"progressToken": 1}}, True),
        # unusual shapes go to the SDK, which accepts these two ...
        ({"capabilities": {"roots": {"listChanged": "yes"}}}, False),
        ({"capabilities": {"weird": {}}}, False),
        # ... and refuses these
        ({"clientInfo": {"name": "c"}}, False),
        ({"clientInfo": {"name": "c", "version": 1}}, False),
        ({"clientInfo": {"name": "c", "version": "1", "icons": [{"src": 3}]}}, False),
        ({"protocolVersion": 20250618}, False),
    ],
)
def test_the_front_only_takes_what_the_sdk_accepts(change: dict[str, Any], front_takes: bool) -> None:
    """The front answers the plain shapes itself (the point of it: no SDK start-up
    on the common path) and passes everything else on; what it answers, the SDK
    accepts, and whatever the SDK refuses, the front never answers."""
    message = {**BASE, "params": {**BASE["params"], **change}}
    taken = plain_initialize(message)
    assert (taken is not None) == front_takes, taken
    try:
        ServerRunner._negotiate_initialize(message["params"])
    except ValidationError:
        assert taken is None, "the front answered an initialize the SDK refuses"
    else:
        assert taken is None or taken == message["params"]


def test_state_dir_is_the_stores(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    monkeypatch.delenv("TOOLDECK_STATE_DIR", raising=False)
    monkeypatch.setenv("XDG_STATE_HOME", str(tmp_path / "xdg"))
    assert state_dir(None) == str(default_state_dir())
    monkeypatch.setenv("TOOLDECK_STATE_DIR", str(tmp_path / "s"))
    assert state_dir(None) == str(default_state_dir())
    assert state_dir("/x/y") == "/x/y"


def test_key_follows_environment_roots_and_config(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    monkeypatch.chdir(tmp_path)
    base = cache_key({"roots": []}, [str(tmp_path)], None)
    assert cache_key({"roots": []}, [str(tmp_path)], None) == base
    monkeypatch.setenv("TOOLDECK_SOMETHING", "1")
    assert cache_key({"roots": []}, [str(tmp_path)], None) != base
    monkeypatch.delenv("TOOLDECK_SOMETHING")
    (tmp_path / ".tooldeck.toml").write_text("")
    assert cache_key({"roots": []}, [str(tmp_path)], None) != base
    assert cache_key({"roots": ["x"]}, [str(tmp_path)], None) != cache_key({"roots": []}, [str(tmp_path)], None)
    key = cache_key({}, [], None)
    assert cache_path("/s", key) != cache_path("/s", base)


def test_key_covers_the_shipped_declarations_the_front_serves() -> None:
    """A new manifest (a new version's tools) must not meet an old cached list."""
    code = cache_key({}, [], None)["code"]
    held = [item for item in code if item[0] == str(tool_manifest.MANIFEST)]
    assert held and len(held[0]) == 3  # path, size, mtime: the file is there and followed


def test_cache_round_trip_and_wrong_key(tmp_path: Path) -> None:
    cache = _cache(tmp_path)
    cache.record("initialize", "2025-11-25", {"protocolVersion": "2025-11-25"})
    cache.save()
    assert HandshakeCache.load(cache.path, {"k": 1}).result("initialize", "2025-11-25") is not None
    assert HandshakeCache.load(cache.path, {"k": 2}).result("initialize", "2025-11-25") is None
    Path(cache.path).write_text("{half")
    assert HandshakeCache.load(cache.path, {"k": 1}).result("initialize", "2025-11-25") is None


def test_saving_keeps_only_the_newest_files_and_sweeps_dead_temps(tmp_path: Path) -> None:
    folder = tmp_path / "mcp-handshake"
    folder.mkdir()
    now = time.time()
    for i in range(40):  # older set-ups, oldest first
        old = folder / f"old{i:02d}.json"
        old.write_text("{}")
        os.utime(old, (now - 1000 + i, now - 1000 + i))
    dead = folder / "x.json.1.2.tmp"
    dead.write_text("{half")
    os.utime(dead, (now - 3600, now - 3600))
    live = folder / "y.json.3.4.tmp"  # a writer still at work
    live.write_text("{")
    cache = HandshakeCache(str(folder / "new.json"), {"k": 1})
    cache.save()
    names = sorted(p.name for p in folder.iterdir())
    assert "new.json" in names and "x.json.1.2.tmp" not in names and "y.json.3.4.tmp" in names
    kept = [n for n in names if n.startswith("old")]
    assert kept == [f"old{i:02d}.json" for i in range(9, 40)]  # 31 newest old + new = 32
    assert prune(str(folder)) == []  # already within the bound


def test_tap_swallows_what_the_front_sent_and_corrects_a_stale_list(tmp_path: Path) -> None:
    cache = _cache(tmp_path)
    init_result = {"protocolVersion": "2025-06-18", "capabilities": {}, "serverInfo": {"name": "t", "version": "0"}}
    front = SimpleNamespace(
        version="2025-06-18",
        answered={"1": ("initialize", init_result), '"L"': ("tools/list", {"tools": []})},
    )
    saved: list[int] = []
    tap = Tap(cache, front, lambda: saved.append(1))
    sdk_init = json.dumps({"jsonrpc": "2.0", "id": 1, "result": init_result}, separators=(",", ":")) + "\n"
    assert tap.outgoing(sdk_init) == []  # swallowed: the client already has it
    assert cache.result("initialize", "2025-06-18") == init_result  # the SDK agreed: recorded from its answer
    other = '{"jsonrpc":"2.0","id":"L","result":{"tools":[{"name":"x","inputSchema":{}}]}}\n'
    assert tap.outgoing(other) == ['{"jsonrpc": "2.0", "method": "notifications/tools/list_changed"}\n']
    assert saved and cache.result("tools/list", "2025-06-18") == {"tools": [{"name": "x", "inputSchema": {}}]}
    assert not tap.active or tap.outgoing("x\n") == ["x\n"]


def test_key_follows_the_persons_approvals(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    """`tooldeck trust allow|revoke` changes which runtimes a project file grants, so the
    cached tools/list must not be answered across it; nor across a same-size edit of the file."""
    from tooldeck.state.approvals import Approvals

    monkeypatch.chdir(tmp_path)
    state = tmp_path / "state"
    project = tmp_path / ".tooldeck.toml"
    project.write_text("[shell.tools.a]\n")
    args = {"roots": [], "state_dir": str(state)}
    base = cache_key(args, [str(tmp_path)], None)
    Approvals(state).allow([project])
    approved = cache_key(args, [str(tmp_path)], None)
    assert approved != base
    Approvals(state).revoke([project])
    assert cache_key(args, [str(tmp_path)], None) != approved
    stat = project.stat()
    project.write_text("[shell.tools.b]\n")  # same size, same mtime: another file all the same
    os.utime(project, ns=(stat.st_atime_ns, stat.st_mtime_ns))
    assert cache_key(args, [str(tmp_path)], None)["roots"] != base["roots"]


def test_tap_keeps_the_entry_when_the_sdk_was_cut_short_by_the_end_of_input(tmp_path: Path) -> None:
    """The end of input cancels what the SDK still runs, answering each request
    `Connection closed`: not the server's answer to a list the front sent, so the
    cache keeps it (it once forgot prompts/list so under load, and the next start
    had to build it again)."""
    from mcp_types import CONNECTION_CLOSED

    from tooldeck.mcp import handshake_front

    assert handshake_front.CONNECTION_CLOSED == CONNECTION_CLOSED
    cache = _cache(tmp_path)
    prompts = {"prompts": []}
    cache.record("prompts/list", "2025-11-25", prompts)
    front = SimpleNamespace(version="2025-11-25", answered={"13": ("prompts/list", prompts)})
    saved: list[int] = []
    tap = Tap(cache, front, lambda: saved.append(1))
    closed = {"jsonrpc": "2.0", "id": 13, "error": {"code": CONNECTION_CLOSED, "message": "Connection closed"}}
    assert tap.outgoing(json.dumps(closed, separators=(",", ":")) + "\n") == []  # the client has the front's
    assert cache.result("prompts/list", "2025-11-25") == prompts and not saved
    refused = {"jsonrpc": "2.0", "id": 14, "error": {"code": -32603, "message": "broken"}}
    tap.answered['"x"'] = ("prompts/list", prompts)
    tap.outgoing(json.dumps({**refused, "id": "x"}, separators=(",", ":")) + "\n")
    assert cache.result("prompts/list", "2025-11-25") is None and saved  # the server's own error still counts


def test_of_two_cache_writes_the_newest_stays_whatever_their_order(tmp_path: Path) -> None:
    """The Tap's writes run in worker threads: the one taken first may finish last."""
    cache = _cache(tmp_path)
    cache.record("prompts/list", "2025-11-25", {"prompts": [], "nextCursor": "edited"})
    older = cache.writer()
    cache.record("prompts/list", "2025-11-25", {"prompts": []})
    newer = cache.writer()
    newer()
    older()
    on_disk = json.loads(Path(cache.path).read_text())
    assert on_disk["prompts/list"]["2025-11-25"] == {"prompts": []}
