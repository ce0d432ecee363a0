"""``tooldeck chat --connect``: the conversation runs as an agent session on a
spawned ``tooldeck serve --http``; the chat follows it, writes the file, and
reattaches after the terminal was closed."""

from __future__ import annotations

import json
import os
import socket
import subprocess
import sys
import threading
import time
import urllib.request
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.support.openai_server import Reply, ScriptedOpenAI, last_user_text
from tests.tui.conftest import (
    SIZE,
    assistant_texts,
    click,
    opened,
    run_async,
    say,
    screen_text,
    tool_blocks,
    turn_done,
    until,
)
from tooldeck.chatmd.conversation import items_of
from tooldeck.chatmd.document import load
from tooldeck.llm.types import FunctionCall, FunctionResult, Message
from tooldeck.tui.app import ChatApp
from tooldeck.tui.remote import RemoteChat

pytestmark = pytest.mark.timeout(300)
TOKEN = "tok-" + "s3cret-never-shown" * 2


class Served:
    def __init__(self, url: str, root: Path, other: Path, model: ScriptedOpenAI, state: Path) -> None:
        self.url, self.root, self.other, self.model, self.state = url, root, other, model, state


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


@pytest.fixture(scope="module")
def served(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Served]:
    """One server for the module: workspace ``main`` (its launch root) and ``other-ws``."""
    base = tmp_path_factory.mktemp("served")
    root, other, state = base / "main", base / "other", base / "state"
    for d in (root, other, state):
        d.mkdir()
    (root / "a.txt").write_text("the server's main a.txt\n")
    (other / "a.txt").write_text("the server's other-ws a.txt\n")
    cfg = base / "config.toml"
    cfg.write_text('[models]\ndefault_model = "server-model"\nmax_retries = 1\nbackoff_seconds = 0.05\n')
    model = ScriptedOpenAI().start()
    env = {**os.environ, "OPENAI_BASE_URL": model.url, "OPENAI_API_KEY": "server-side-key", "TOOLDECK_CONFIG": str(cfg),
           "TOOLDECK_STATE_DIR": str(state), "TOOLDECK_HTTP_TOKEN": TOKEN}  # fmt: skip
    subprocess.run([sys.executable, "-m", "tooldeck", "workspace", "add", "other-ws", str(other)], env=env,
                   check=True, capture_output=True)  # fmt: skip
    port = _free_port()
    proc = subprocess.Popen([sys.executable, "-m", "tooldeck", "serve", str(root), "--http", f"127.0.0.1:{port}"],
                            cwd=base, env=env, stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL,
                            stderr=subprocess.PIPE)  # fmt: skip
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline:
        with socket.socket() as probe:
            if probe.connect_ex(("127.0.0.1", port)) == 0:
                break
        time.sleep(0.1)
    try:
        yield Served(f"http://127.0.0.1:{port}", root, other, model, state)
    finally:
        proc.terminate()
        proc.wait(20)
        model.stop()


@pytest.fixture
def client(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """The person's machine: a folder of its own (its a.txt must never be read) and state."""
    here = tmp_path / "laptop"
    here.mkdir()
    (here / "a.txt").write_text("the client's a.txt\n")
    monkeypatch.chdir(here)
    monkeypatch.delenv("TOOLDECK_HTTP_TOKEN", raising=False)
    monkeypatch.setenv("OPENAI_API_KEY", "client-side-secret")  # must never leave this machine

    return here


def app_for(served: Served, path: Path, client: Path, **kw: object) -> ChatApp:
    def make(emit):  # type: ignore[no-untyped-def]
        kw.setdefault("token", TOKEN)
        return RemoteChat(path, emit, url=served.url, state_dir=client / "state", **kw)  # type: ignore[arg-type]

    return ChatApp(make, str(path))


def test_a_connected_chat_runs_on_the_server_workspace_and_writes_the_file(served: Served, client: Path) -> None:
    f = client / "c.chatmd"
    f.write_text('<tool name="read_file"/>\n<system>Be brief.</system>\n')
    answer, rest = "It is the other one. " * 6, served.model.gate()  # the reply stops half-way until it is seen
    held = Reply(text=answer, holds=((len(answer) // 2, rest),))
    served.model.push(Reply.call(("read_file", {"file": "a.txt"})), held)

    async def go() -> None:
        app = app_for(served, f, client, workspace="other-ws")
        async with app.run_test(size=SIZE) as pilot:
            await opened(pilot, app)
            assert "workspace other-ws" in str(app.status_line.render())
            await say(pilot, app, "what does a.txt say?")
            await until(pilot, lambda: any(b.streaming and b.text for b in _assistant_blocks(app)), what="streaming")
            rest.set()
            await turn_done(pilot, app)
            [tools] = tool_blocks(app)
            assert tools.calls[0].state == "done" and "other-ws a.txt" in tools.calls[0].result
            assert assistant_texts(app)[-1] == answer
            assert TOKEN not in app.export_screenshot()

    run_async(go())
    items = items_of(load(f))
    assert [type(i).__name__ for i in items] == ["Message", "Message", "FunctionCall", "FunctionResult", "Message"]
    assert isinstance(items[3], FunctionResult) and "other-ws a.txt" in items[3].output  # the server's root
    assert "client" not in items[3].output
    first = served.model.bodies()[-2]
    assert sorted(t["function"]["name"] for t in first["tools"]) == ["ask_user", "read_file"]  # only what it declares
    # the model was called by the server, with the server's key; this machine's key went nowhere
    keys = {r["headers"].get("Authorization") or r["headers"].get("authorization") for r in served.model.requests}
    assert keys == {"Bearer server-side-key"}
    assert all(TOKEN not in p.read_text(errors="replace") for p in (client / "state").rglob("*") if p.is_file())


def _assistant_blocks(app):  # type: ignore[no-untyped-def]
    from tooldeck.tui.blocks import MessageBlock

    return [b for b in app.chat_view.blocks if isinstance(b, MessageBlock) and b.role == "assistant"]


def test_closing_the_terminal_leaves_the_session_running_and_reopening_continues_it(
    served: Served, client: Path
) -> None:
    f = client / "long.chatmd"
    f.write_text("<system>Be brief.</system>\n")
    served.model.push(Reply(text="finished while you were away", delay=4,
                            when=lambda b: last_user_text(b) == "take your time"))  # fmt: skip

    async def leave() -> None:
        app = app_for(served, f, client, workspace="other-ws")
        async with app.run_test(size=SIZE) as pilot:
            await opened(pilot, app)
            await say(pilot, app, "take your time")
            await until(pilot, lambda: app.busy, what="the run to start")
            await pilot.press("ctrl+q")  # the terminal goes away mid-run

    run_async(leave())
    sessions = _dashboard_sessions(served)
    mine = [s for s in sessions if s["session"]["name"] == "long.chatmd"]
    assert mine and mine[0]["status"] == "running"  # it goes on without us (and the dashboard shows it)
    served.model.push(Reply.answer("second answer", when=lambda b: last_user_text(b) == "and now?"))

    async def come_back() -> None:
        app = app_for(served, f, client, workspace="other-ws")
        async with app.run_test(size=SIZE) as pilot:
            await opened(pilot, app)
            await until(pilot, lambda: "finished while you were away" in assistant_texts(app), timeout=60,
                        what="the answer given while away")  # fmt: skip
            await turn_done(pilot, app)
            await say(pilot, app, "and now?")
            await until(pilot, lambda: "second answer" in assistant_texts(app), what="the next answer")
            await turn_done(pilot, app)

    run_async(come_back())
    texts = [(i.role, i.text) for i in items_of(load(f)) if isinstance(i, Message)]
    assert texts == [("system", "Be brief."), ("user", "take your time"), ("assistant", "finished while you were away"),
                     ("user", "and now?"), ("assistant", "second answer")]  # fmt: skip
    assert len({s["session_id"] for s in _dashboard_sessions(served) if s["session"]["name"] == "long.chatmd"}) == 1


def _dashboard_sessions(served: Served) -> list[dict]:
    req = urllib.request.Request(f"{served.url}/api/sessions", headers={"Authorization": f"Bearer {TOKEN}"})
    with urllib.request.urlopen(req, timeout=30) as resp:
        return json.loads(resp.read())


def test_a_missing_workspace_is_an_error_listing_the_configured_ones(served: Served, client: Path) -> None:
    async def go() -> None:
        app = app_for(served, client / "x.chatmd", client, workspace="nope")
        async with app.run_test(size=SIZE) as pilot:
            await until(pilot, lambda: app.failed is not None, what="the error")
            assert "nope" in app.failed and "'other-ws'" in app.failed and "'main'" in app.failed
            assert "nope" in screen_text(app)

    run_async(go())
    assert not (client / "x.chatmd").exists()


def test_a_wrong_token_is_refused_without_showing_it(served: Served, client: Path) -> None:
    async def go() -> None:
        app = app_for(served, client / "x.chatmd", client, token="wrong-" + TOKEN)
        async with app.run_test(size=SIZE) as pilot:
            await until(pilot, lambda: app.failed is not None, what="the error")
            assert "401" in app.failed and "TOOLDECK_HTTP_TOKEN" in app.failed
            assert TOKEN not in app.export_screenshot()

    run_async(go())


def test_the_token_reaches_no_proxy(served: Served, client: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Proxy settings in the environment are not followed: the token goes only to the named server."""
    trap = socket.socket()
    trap.bind(("127.0.0.1", 0))
    trap.listen(5)
    trap.settimeout(0.2)
    hits: list[bytes] = []

    def listen() -> None:
        # ends when the trap is closed: a loop that went on over the closed socket
        # would spin for the rest of the module and starve the tests after it
        end = time.monotonic() + 60
        while time.monotonic() < end:
            try:
                conn, _ = trap.accept()
            except TimeoutError:
                continue
            except OSError:
                return
            hits.append(conn.recv(65536))
            conn.close()

    threading.Thread(target=listen, daemon=True).start()
    proxy = f"http://127.0.0.1:{trap.getsockname()[1]}"
    for var in ("HTTP_PROXY", "http_proxy", "HTTPS_PROXY", "https_proxy", "ALL_PROXY", "all_proxy"):
        monkeypatch.setenv(var, proxy)
    monkeypatch.delenv("NO_PROXY", raising=False)
    monkeypatch.delenv("no_proxy", raising=False)

    async def go() -> None:
        app = app_for(served, client / "x.chatmd", client)
        async with app.run_test(size=SIZE) as pilot:
            await opened(pilot, app)

    run_async(go())
    trap.close()
    assert hits == []


def test_an_approval_and_a_question_are_answered_in_the_chat(served: Served, client: Path) -> None:
    f = client / "ask.chatmd"
    f.write_text('<tool name="file_actions"/>\n')
    served.model.push(
        Reply.call(("file_actions", {"action": "create", "path": "made.txt", "content": "hi\n"})),
        Reply.call(("ask_user", {"question": "Which colour?", "options": ["red", "blue"]})),
        Reply.answer("done", when=lambda b: "red" in json.dumps(b["messages"][-1])),
    )

    async def go() -> None:
        app = app_for(served, f, client, workspace="other-ws", approval="ask")
        async with app.run_test(size=SIZE) as pilot:
            await opened(pilot, app)
            await say(pilot, app, "make it")
            await until(pilot, lambda: app.ask_panel.shown is not None, what="the approval")
            assert app.ask_panel.shown.kind == "approval" and "made.txt" in app.ask_panel.shown.body
            assert not (served.other / "made.txt").exists()
            await pilot.press("a")
            await until(pilot, lambda: app.ask_panel.shown is not None and app.ask_panel.shown.kind == "question",
                        what="the question")  # fmt: skip
            await click(pilot, app, "Button.option")  # the first offered option: red
            await turn_done(pilot, app)

    run_async(go())
    assert (served.other / "made.txt").read_text() == "hi\n"
    results = [i for i in items_of(load(f)) if isinstance(i, FunctionResult)]
    assert [r.name for r in results] == ["file_actions", "ask_user"] and results[1].output == "red"
    assert [i.name for i in items_of(load(f)) if isinstance(i, FunctionCall)] == ["file_actions", "ask_user"]


def test_a_file_ending_with_a_user_message_is_answered_without_repeating_it(served: Served, client: Path) -> None:
    f = client / "pending.chatmd"
    f.write_text("<system>Be brief.</system>\n<user>\nwritten by hand\n</user>\n")
    served.model.push(Reply.answer("answered remotely", when=lambda b: last_user_text(b) == "written by hand"))

    async def go() -> None:
        app = app_for(served, f, client)
        async with app.run_test(size=SIZE) as pilot:
            await opened(pilot, app)
            app.composer.focus()
            await pilot.press("enter")
            await until(pilot, lambda: "answered remotely" in assistant_texts(app), what="the answer")
            await turn_done(pilot, app)

    run_async(go())
    texts = [(i.role, i.text) for i in items_of(load(f)) if isinstance(i, Message)]
    assert texts == [("system", "Be brief."), ("user", "written by hand"), ("assistant", "answered remotely")]
