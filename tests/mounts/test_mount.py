"""MCP client mounts against real servers: tooldeck's own (stdio and HTTP) and
a small SDK server whose catalog changes (tests/mcp/servers/changing_server.py).
No client object is mocked: every call crosses a real transport."""

from __future__ import annotations

import asyncio
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from tests.mcp.mcp_e2e import free_port, run_http, serve_command, wait_listening
from tooldeck.core import Toolbox
from tooldeck.core.invocation import Invocation, Progress, Replace
from tooldeck.core.output import ImagePart
from tooldeck.mounts.client import Mount, mount
from tooldeck.mounts.spec import MountError

pytestmark = pytest.mark.timeout(120)

CHANGING = Path(__file__).parents[1] / "mcp" / "servers" / "changing_server.py"


def changing_spec() -> str:
    return f"stdio:{sys.executable} {CHANGING}"


def wait_for(predicate, timeout: float = 60.0) -> None:  # type: ignore[no-untyped-def]
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if predicate():
            return
        time.sleep(0.02)
    raise AssertionError("condition not reached in time")


@pytest.fixture
def changing() -> Mount:
    m = mount(changing_spec())
    yield m
    m.close()


def test_tooldeck_over_stdio_keeps_schema_annotations_and_errors(served: tuple[Path, Path]) -> None:
    root, state = served
    m = mount("stdio:" + " ".join(serve_command(root, state)), include="read_file, file_actions,get_file_tree")
    try:
        assert [t.name for t in m] == ["read_file", "get_file_tree", "file_actions"]
        rf = next(t for t in m if t.name == "read_file")
        assert rf.annotations.read_only and rf.annotations.idempotent and not rf.annotations.destructive
        assert rf.parameters["properties"]["root"]["enum"] == ["root"]
        assert str(root.resolve()) in rf.description
        assert next(t for t in m if t.name == "file_actions").annotations.destructive
        assert rf.strict is False
        box = Toolbox(m.tools)
        ok = box.call_sync("read_file", {"path": "hello.txt", "start_line": 2})
        assert ok.error is None and ok.text.startswith("hello.txt:2-2 [total_lines=2]")
        missing = box.call_sync("read_file", '{"path": "nope.txt"}')
        assert missing.error is not None and missing.error.code == "not_found"  # the remote code survives
        bad = box.call_sync("read_file", "{not json")
        assert bad.error is not None and bad.error.code == "invalid_arguments"
        # the remote's progress keeps its channel and its replace/append kind
        seen: list[Progress] = []
        tree = box.call_sync("get_file_tree", {}, invocation=Invocation.create(seen.append))
        assert tree.error is None and "hello.txt" in tree.text
        walking = [p for p in seen if p.update.text.startswith("walk")]
        assert walking and all(p.channel == "activity" and isinstance(p.update, Replace) for p in walking)
    finally:
        m.close()
    assert not m.server.connected


def test_tooldeck_over_http_with_credentials_in_the_url(served: tuple[Path, Path]) -> None:
    root, state = served
    port = free_port()
    with run_http(root, state, f"127.0.0.1:{port}") as srv:
        env = {**os.environ, "MY_ID": "abc", "MY_SECRET": "s3cr&t"}
        m = mount(
            srv.url,
            name="read_file",
            include="ignored_when_name_is_given",
            strict=True,
            client_id_env="MY_ID",
            client_secret_env="MY_SECRET",
            env=env,
        )
        try:
            assert "client_id=abc" in m.server.target.url and "client_secret=s3cr%26t" in m.server.target.url
            assert "s3cr" not in m.server.label  # errors never show the secret
            assert [t.name for t in m] == ["read_file"] and m.tools[0].strict is True
            out = asyncio.run(m.tools[0].run({"path": "src/app.py"}))
            assert "def main():" in out.as_text()
        finally:
            m.close()


def test_results_images_structured_errors_and_progress(changing: Mount) -> None:
    box = Toolbox(changing.tools)
    pic = box.call_sync("picture", {})
    assert pic.output is not None and isinstance(pic.output.parts[1], ImagePart)
    assert pic.output.parts[1].mime_type == "image/png" and pic.output.structured == {"width": 1, "height": 1}
    failed = box.call_sync("fail", {})
    assert failed.error is not None and failed.error.code == "remote_error"
    assert "disk is on fire" in failed.error.message
    seen: list[Progress] = []
    done = box.call_sync("progress", {}, invocation=Invocation.create(seen.append))
    assert done.text == "done"
    assert [p.update.text for p in seen] == ["step 1", "step 2", "step 3"]


def test_list_changed_during_a_call_is_not_lost(changing: Mount) -> None:
    server = changing.server
    box = Toolbox(changing.tools)
    fetches = server.fetches
    assert box.call_sync("echo", {"text": "x"}).text == "x"
    assert server.fetches == fetches and not server.stale  # cached: no refetch per call
    # the notification arrives while the call is in flight, before its result
    assert box.call_sync("grow", {"name": "alpha"}).text == "added alpha"
    assert server.stale, "list_changed sent during a call was swallowed"
    names = [t.name for t in asyncio.run(changing.refresh())]
    assert "alpha" in names and server.fetches == fetches + 1
    assert Toolbox(changing.tools).call_sync("alpha", {}).text == "alpha ran"


def test_list_changed_between_calls_invalidates_the_cache(changing: Mount) -> None:
    box = Toolbox(changing.tools)
    assert box.call_sync("grow_later", {"name": "beta"}).text == "scheduled"
    wait_for(lambda: changing.server.stale)
    assert "beta" in [t.name for t in asyncio.run(changing.refresh())]


def test_a_removed_tool_fails_clearly_once_the_cache_is_refreshed(changing: Mount) -> None:
    box = Toolbox(changing.tools)
    assert box.call_sync("shrink", {"name": "echo"}).text == "removed echo"
    changing.server.invalidate()  # as a list_changed would
    gone = box.call_sync("echo", {"text": "x"})
    assert gone.error is not None and gone.error.code == "unavailable" and "no longer offers" in gone.error.message


def test_named_tool_missing_refreshes_once_then_errors() -> None:
    env = {**os.environ, "LATE_TOOL": "latecomer"}
    late = mount(changing_spec(), name="latecomer", env=env)  # absent on the first list, there on the refresh
    try:
        assert [t.name for t in late] == ["latecomer"]
        assert Toolbox(late.tools).call_sync("latecomer", {}).text == "latecomer ran"
        assert late.server.fetches == 2
    finally:
        late.close()
    with pytest.raises(MountError, match=r"no tool named 'nothing_like_it' \(checked again after a refresh\)"):
        mount(changing_spec(), include="echo,nothing_like_it")


def test_cache_expires_after_its_ttl() -> None:
    m = mount(changing_spec(), include="echo", ttl=0.2)
    try:
        box = Toolbox(m.tools)
        box.call_sync("echo", {"text": "a"})
        before = m.server.fetches
        time.sleep(0.3)
        box.call_sync("echo", {"text": "b"})
        assert m.server.fetches == before + 1
    finally:
        m.close()


def test_a_dead_server_is_restarted_once_then_fails_clearly(changing: Mount) -> None:
    box = Toolbox(changing.tools)
    first = int(box.call_sync("pid", {}).text)
    os.kill(first, signal.SIGKILL)
    wait_for(lambda: not changing.server.connected)
    second = box.call_sync("pid", {})
    assert second.error is None, second.text
    assert int(second.text) != first and changing.server.restarts == 1
    os.kill(int(second.text), signal.SIGKILL)
    wait_for(lambda: not changing.server.connected)
    third = box.call_sync("echo", {"text": "x"})
    assert third.error is not None and third.error.code == "unavailable"
    assert "already restarted 1 time" in third.error.message and "stdio:" in third.error.message
    # and it stays that way, without spawning again
    assert box.call_sync("echo", {"text": "x"}).error is not None and changing.server.restarts == 1


def test_bad_specs_and_unreachable_servers_are_mount_errors(tmp_path: Path) -> None:
    with pytest.raises(MountError, match="stdio:COMMAND"):
        mount("ftp://example")
    with pytest.raises(MountError, match="needs a command"):
        mount("stdio:   ")
    with pytest.raises(MountError, match="cannot connect"):
        mount(f"stdio:{tmp_path}/no-such-program", connect_timeout=10)
    with pytest.raises(MountError, match="cannot connect"):
        mount(f"http://127.0.0.1:{free_port()}/mcp", connect_timeout=10)


def test_parallel_calls_from_two_event_loops(changing: Mount) -> None:
    async def scenario() -> None:
        box = Toolbox(changing.tools)
        results = await asyncio.gather(*(box.call("echo", {"text": str(i)}) for i in range(5)))
        assert [r.text for r in results] == [str(i) for i in range(5)]

    asyncio.run(scenario())
    asyncio.run(scenario())  # a second loop: the mount lives on its own


def test_http_server_changing_catalog_over_http() -> None:
    port = free_port()
    proc = subprocess.Popen([sys.executable, str(CHANGING), "--http", str(port)], stderr=subprocess.DEVNULL)
    try:
        wait_listening(port, proc)
        m = mount(f"http://127.0.0.1:{port}/mcp")
        try:
            box = Toolbox(m.tools)
            assert box.call_sync("grow", {"name": "gamma"}).text == "added gamma"
            wait_for(lambda: m.server.stale)
            assert "gamma" in [t.name for t in asyncio.run(m.refresh())]
        finally:
            m.close()
    finally:
        proc.terminate()
        proc.wait(10)


def test_http_endpoint_that_goes_away_is_reconnected_once() -> None:
    port = free_port()

    def start() -> subprocess.Popen[bytes]:
        proc = subprocess.Popen([sys.executable, str(CHANGING), "--http", str(port)], stderr=subprocess.DEVNULL)
        wait_listening(port, proc)
        return proc

    proc = start()
    m = mount(f"http://127.0.0.1:{port}/mcp", connect_timeout=10)
    try:
        box = Toolbox(m.tools)
        assert box.call_sync("echo", {"text": "a"}).text == "a"
        proc.terminate()
        proc.wait(10)
        lost = box.call_sync("echo", {"text": "b"})
        assert lost.error is not None and lost.error.code == "unavailable"
        assert "reconnected on the next call" in lost.error.message
        proc = start()  # the endpoint is back (a new server: a new session)
        assert box.call_sync("echo", {"text": "c"}).text == "c" and m.server.restarts == 1
        proc.terminate()
        proc.wait(10)
        assert box.call_sync("echo", {"text": "d"}).error is not None
        proc = start()
        final = box.call_sync("echo", {"text": "e"})
        assert final.error is not None and "already reconnected 1 time" in final.error.message
    finally:
        m.close()
        proc.terminate()
        proc.wait(10)


def test_cancelling_the_caller_cancels_the_remote_call(changing: Mount) -> None:
    box = Toolbox(changing.tools)

    async def give_up() -> None:
        with pytest.raises(TimeoutError):
            await asyncio.wait_for(box.call("sleep", {}), 0.5)

    asyncio.run(give_up())
    wait_for(lambda: box.call_sync("cancelled", {}).text == "1")
    assert box.call_sync("echo", {"text": "still fine"}).text == "still fine"


def test_a_server_dying_during_a_call_fails_that_call_then_restarts(changing: Mount) -> None:
    box = Toolbox(changing.tools)
    died = box.call_sync("die", {})
    assert died.error is not None and died.error.code == "unavailable"
    assert "stopped during the call to die" in died.error.message and "retry if the call is safe" in died.error.message
    assert "dying on purpose" in died.error.message  # the child's stderr tail
    assert box.call_sync("echo", {"text": "back"}).text == "back" and changing.server.restarts == 1
