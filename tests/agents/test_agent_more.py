"""The queue (a per-server limit on concurrent runs), sub-agents, approval for the session."""

from __future__ import annotations

import threading
import time
from pathlib import Path

import pytest

from tests.agents.conftest import data
from tests.support.openai_server import Reply, ScriptedOpenAI, last_user_text


def test_runs_beyond_the_limit_wait_in_a_queue(call, model_env: ScriptedOpenAI, monkeypatch: pytest.MonkeyPatch):
    """Order, not timing: the first two requests are held inside the model;
    no third arrives until they are released."""
    monkeypatch.setenv("TOOLDECK_AGENT_MAX_RUNS", "2")
    events: list[str] = []
    lock = threading.Lock()

    def arrive(body: dict) -> bool:  # evaluated once per request: the first queued reply accepts it
        with lock:
            events.append("arrive")
        return True

    first_wave = model_env.gate()
    for i in range(4):
        model_env.push(Reply(text=f"r{i}", gate=first_wave if i < 2 else None, when=arrive))
    sids = [data(call("agent_run", {"op": "start", "message": f"q{i}", "detach": True}))["session_id"]
            for i in range(4)]  # fmt: skip
    texts = [data(call("agent_run", {"op": "poll", "session_id": s}))["status_text"] for s in sids]
    assert texts.count("queued") >= 2, texts
    deadline = time.monotonic() + 60
    while events.count("arrive") < 2:
        assert time.monotonic() < deadline, events
        time.sleep(0.01)
    time.sleep(0.3)  # room for a third request to show up, were the limit not kept
    with lock:
        events.append("release")
    first_wave.set()
    for s in sids:
        assert data(call("agent_run", {"op": "wait", "session_id": s, "timeout": 60}))["status"] == "completed"
    assert events == ["arrive", "arrive", "release", "arrive", "arrive"]


def test_a_session_spawns_a_sub_agent_but_a_sub_agent_cannot(call, model_env: ScriptedOpenAI) -> None:
    model_env.push(
        Reply.call(
            ("agent_run", {"op": "start", "message": "child task", "detach": False}),
            when=lambda b: last_user_text(b) == "parent task",
        ),
        Reply.call(
            ("agent_run", {"op": "start", "message": "grandchild", "detach": True}),
            when=lambda b: last_user_text(b) == "child task",
        ),
        Reply.answer("child done", when=lambda b: "depth_limit" in str(b["messages"])),
        Reply.answer("parent done", when=lambda b: "child done" in str(b["messages"])),
    )
    parent = data(call("agent_run", {"op": "start", "message": "parent task", "timeout": 30}))
    assert parent["status"] == "completed" and parent["assistant_text"] == "parent done", parent
    sessions = data(call("agent_manage", {"op": "list_sessions"}))["sessions"]
    child = next(s for s in sessions if s["session_id"] != parent["session_id"])
    assert child["parent_session_id"] == parent["session_id"] and len(sessions) == 2
    log = data(call("agent_manage", {"op": "get_log", "session_id": child["session_id"]}))["transcript_xml"]
    assert "sub-agent session cannot spawn" in log


def test_accept_for_session_stops_asking(call, model_env: ScriptedOpenAI, root: Path) -> None:
    model_env.push(
        Reply.call(("file_actions", {"action": "create", "path": "a.txt", "content": "a"})),
        Reply.call(("file_actions", {"action": "create", "path": "b.txt", "content": "b"})),
        Reply.answer("both made"),
    )
    snap = data(call("agent_run", {"op": "start", "message": "make", "approval": "ask"}))
    assert snap["interaction"]["kind"] == "approval"
    data(call("agent_run", {"op": "respond", "session_id": snap["session_id"], "interaction_id": snap["interaction_id"],
                            "response": "accept_for_session"}))  # fmt: skip
    done = data(call("agent_run", {"op": "wait", "session_id": snap["session_id"], "timeout": 10}))
    assert done["status"] == "completed" and (root / "a.txt").exists() and (root / "b.txt").exists()
