"""agent_manage: every op; sessions persist and survive a restart."""

from __future__ import annotations

import subprocess
import sys
import uuid
from pathlib import Path

from tests.agents.conftest import data
from tests.support.openai_server import Reply, ScriptedOpenAI
from tooldeck.agents.manager import SessionManager
from tooldeck.catalog import build_toolbox
from tooldeck.runtime import Runtime
from tooldeck.state.agent_sessions import AgentDB


def test_list_agents_and_workflows(call, model_env: ScriptedOpenAI) -> None:
    agents = data(call("agent_manage", {"op": "list_agents"}))["agents"]
    assert agents[0]["id"] == "tooldeck"
    assert {m["id"] for m in agents[0]["models"]} == {"fast", "smart"}
    assert agents[0]["roles"] == {"explore": "fast", "engineer": "smart", "pair": "smart", "design": "default"}
    wfs = data(call("agent_manage", {"op": "list_workflows"}))["workflows"]
    assert {"explore", "engineer", "review", "orchestrate"} <= {w["id"] for w in wfs}


def test_role_and_workflow_reach_the_model(call, model_env: ScriptedOpenAI) -> None:
    model_env.push(Reply.answer("ok"))
    snap = data(call("agent_run", {"op": "start", "message": "x", "model_id": "engineer", "workflow_name": "review"}))
    assert snap["agent"] == {"id": "engineer", "name": "engineer", "model": "scripted-smart"}
    body = model_env.bodies()[0]
    assert body["model"] == "scripted-smart"
    assert "Workflow Review" in body["messages"][0]["content"]


def test_create_list_log_stop_cleanup(call, model_env: ScriptedOpenAI) -> None:
    made = data(call("agent_manage", {"op": "create_session", "session_name": "later", "model_id": "explore"}))
    sid = made["session_id"]
    assert made["name"] == "later" and made["model"] == "scripted-fast"
    assert data(call("agent_run", {"op": "poll", "session_id": sid}))["status"] == "expired"
    model_env.push(Reply.answer("first answer"))
    assert data(call("agent_run", {"op": "steer", "session_id": sid, "message": "go", "wait": True}))[
        "status"] == "completed"  # fmt: skip
    model_env.push(Reply(text="slow", gate=model_env.gate()))  # runs until stopped
    other = data(call("agent_run", {"op": "start", "message": "long one", "detach": True}))["session_id"]
    listed = data(call("agent_manage", {"op": "list_sessions"}))["sessions"]
    assert {s["session_id"] for s in listed} == {sid, other}
    assert all(s["is_mcp_originated"] for s in listed)
    running = data(call("agent_manage", {"op": "list_sessions", "state": "running"}))["sessions"]
    assert [s["session_id"] for s in running] == [other]
    log = data(call("agent_manage", {"op": "get_log", "session_id": sid}))
    assert log["name"] == "later" and "<user seq=\"1\">go</user>" in log["transcript_xml"]
    assert "<assistant seq=\"2\">first answer</assistant>" in log["transcript_xml"]
    page = data(call("agent_manage", {"op": "get_log", "session_id": sid, "offset": 1, "limit": 1}))
    assert "first answer" in page["transcript_xml"] and "go</user>" not in page["transcript_xml"]
    # an active session is skipped by cleanup, then stopped, then cleaned
    skipped = data(call("agent_manage", {"op": "cleanup_sessions", "session_ids": [other]}))
    assert skipped["skipped"] == {other: "active"}
    stop = data(call("agent_manage", {"op": "stop_session", "session_id": other}))
    assert stop["stop_requested"] is True
    assert data(call("agent_run", {"op": "wait", "session_id": other, "timeout": 5}))["status"] == "cancelled"
    gone = data(call("agent_manage", {"op": "cleanup_sessions", "session_ids": [other, sid, str(uuid.uuid4())]}))
    assert sorted(gone["deleted"]) == sorted([other, sid])
    assert data(call("agent_manage", {"op": "list_sessions"}))["sessions"] == []
    assert call("agent_manage", {"op": "get_log", "session_id": sid}).error.code == "not_found"


def test_restart_marks_running_sessions_interrupted_and_keeps_logs(
    root: Path, state_dir: Path, model_env: ScriptedOpenAI
) -> None:
    """A process that dies mid-run leaves its session 'running' under its pid; the
    next manager finds the pid gone and marks it failed/process_crash."""
    dead = subprocess.Popen([sys.executable, "-c", "pass"])
    dead.wait()
    rt = Runtime.for_dirs([root], state_dir=state_dir)
    db = AgentDB(rt.store)
    sid = str(uuid.uuid4())
    db.create(sid, "crashed", status="running", status_text="calling read_file", owner_pid=dead.pid, runs=1)
    from tooldeck.agents.items import item_fields
    from tooldeck.llm.types import Message

    db.append(sid, 1, item_fields(Message("user", "before the crash")))
    mgr = SessionManager(rt)
    assert mgr.recovered == [sid]
    snap = mgr.snapshot(sid)
    assert snap["status"] == "failed" and snap["failure_reason"] == "process_crash"
    box = build_toolbox(rt)
    log = box.call_sync("agent_manage", {"op": "get_log", "session_id": sid})
    assert "before the crash" in log.text
    # resume then steer: a new run continues the same transcript
    box.call_sync("agent_manage", {"op": "resume_session", "session_id": sid})
    model_env.push(Reply.answer("picked up", when=lambda b: "before the crash" in str(b["messages"])))
    res = box.call_sync("agent_run", {"op": "steer", "session_id": sid, "message": "go on", "wait": True})
    assert res.output.structured["status"] == "completed", res.text
    assert res.output.structured["transcript_item_count"] == 3
