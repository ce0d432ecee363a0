"""agent_run: every op against the scripted model server."""

from __future__ import annotations

import threading
import uuid
from pathlib import Path

from tests.agents.conftest import data
from tests.support.openai_server import Reply, ScriptedOpenAI, last_user_text


def test_start_waits_for_the_answer_and_reports_the_seed_snapshot(call, model_env: ScriptedOpenAI, root: Path) -> None:
    (root / "a.txt").write_text("alpha\n")
    model_env.push(Reply.call(("read_file", {"file": "a.txt"})), Reply.answer("a.txt says alpha"))
    snap = data(call("agent_run", {"op": "start", "message": "what is in a.txt?", "session_name": "probe"}))
    assert snap["status"] == "completed"
    assert str(uuid.UUID(snap["session_id"])) == snap["session_id"]  # a full UUID
    assert snap["assistant_text"] == "a.txt says alpha"
    assert snap["session"] == {"id": snap["session_id"], "name": "probe", "tab_id": None, "parent_session_id": None}
    assert snap["agent"]["model"] == "scripted-default"
    # user message, call, result, answer
    assert snap["transcript_item_count"] == 4
    assert "failure_reason" not in snap
    # the tool result reached the model
    assert "alpha" in str(model_env.bodies()[1]["messages"])


def test_detach_then_poll_and_wait(call, model_env: ScriptedOpenAI) -> None:
    answer = model_env.gate()
    model_env.push(Reply(text="slow answer", gate=answer))
    snap = data(call("agent_run", {"op": "start", "message": "hi", "detach": True}))
    assert snap["status"] == "running"
    sid = snap["session_id"]
    assert data(call("agent_run", {"op": "poll", "session_id": sid}))["status"] == "running"
    quick = data(call("agent_run", {"op": "wait", "session_id": sid, "timeout": 0}))
    assert quick["status"] == "running"
    answer.set()
    done = data(call("agent_run", {"op": "wait", "session_id": sid, "timeout": 10}))
    assert done["status"] == "completed" and done["assistant_text"] == "slow answer"


def test_multi_session_wait_and_poll(call, model_env: ScriptedOpenAI) -> None:
    a_answers = model_env.gate()  # A's model call lasts until B has won the wait
    model_env.push(
        Reply(text="A done", gate=a_answers, when=lambda b: last_user_text(b) == "task A"),
        Reply(text="B done", when=lambda b: last_user_text(b) == "task B"),
    )
    a = data(call("agent_run", {"op": "start", "message": "task A", "detach": True}))["session_id"]
    b = data(call("agent_run", {"op": "start", "message": "task B", "detach": True}))["session_id"]
    won = data(call("agent_run", {"op": "wait", "session_ids": [a, b], "timeout": 10}))
    assert won["session_id"] == b and won["status"] == "completed"
    assert won["wait"]["winner_session_id"] == b and won["wait"]["result"] == "ready"
    assert won["wait"]["pending_session_ids"] == [a]
    polled = data(call("agent_run", {"op": "poll", "session_ids": [a, b]}))
    assert [s["session_id"] for s in polled["snapshots"]] == [a, b]
    assert polled["poll"]["statuses"][b] == "completed"
    a_answers.set()
    assert data(call("agent_run", {"op": "wait", "session_id": a, "timeout": 10}))["status"] == "completed"


def test_steer_mid_run_reaches_the_model_and_continues_after(call, model_env: ScriptedOpenAI, root: Path) -> None:
    (root / "x.txt").write_text("x\n")
    first = model_env.gate()  # the run is inside its first model call when the steer comes
    model_env.push(
        Reply(calls=Reply.call(("read_file", {"file": "x.txt"})).calls, gate=first),
        Reply.answer("took the steer into account", when=lambda b: "also check y" in str(b["messages"])),
    )
    sid = data(call("agent_run", {"op": "start", "message": "look at x", "detach": True}))["session_id"]
    steered = data(call("agent_run", {"op": "steer", "session_id": sid, "message": "also check y"}))
    assert steered["steer"] == "injected"
    first.set()
    done = data(call("agent_run", {"op": "wait", "session_id": sid, "timeout": 10}))
    assert done["status"] == "completed", done
    assert done["assistant_text"] == "took the steer into account"
    # a finished session: steer starts a new run with the whole history
    model_env.push(Reply.answer("second run", when=lambda b: "look at x" in str(b["messages"])))
    again = data(call("agent_run", {"op": "steer", "session_id": sid, "message": "and now?", "wait": True}))
    assert again["steer"] == "new_run" and again["assistant_text"] == "second run"
    log = data(call("agent_manage", {"op": "get_log", "session_id": sid}))["transcript_xml"]
    assert log.count("<user") == 3 and "also check y" in log and "second run" in log


def test_cancel_mid_run(call, model_env: ScriptedOpenAI) -> None:
    """Cancel does not wait for the model: the answer is held until a watchdog
    opens it 60 s later, and cancel must have returned before that."""
    answer = model_env.gate()
    watchdog = threading.Timer(60, answer.set)
    model_env.push(Reply(text="never seen", gate=answer))
    sid = data(call("agent_run", {"op": "start", "message": "long", "detach": True}))["session_id"]
    watchdog.start()
    try:
        snap = data(call("agent_run", {"op": "cancel", "session_id": sid}))
        assert not answer.is_set(), "cancel waited for the model's answer"
    finally:
        watchdog.cancel()
    assert snap["status"] == "cancelled" and snap["failure_reason"] == "cancelled"
    again = call("agent_run", {"op": "cancel", "session_id": sid})
    assert again.is_error and again.error.code == "conflict"


def test_timeout_ends_a_hanging_model_with_a_clear_status(call, model_env: ScriptedOpenAI) -> None:
    model_env.push(Reply(text="too late", gate=model_env.gate()))  # the model never answers
    snap = data(call("agent_run", {"op": "start", "message": "hang", "timeout": 0.7}))
    assert snap["status"] == "failed" and snap["failure_reason"] == "timeout"
    assert "timed out after 0.7s" in snap["status_text"]


def test_model_error_fails_the_run_with_agent_error(call, model_env: ScriptedOpenAI) -> None:
    model_env.push(Reply.error(400, "this model does not exist"))
    snap = data(call("agent_run", {"op": "start", "message": "hi"}))
    assert snap["status"] == "failed" and snap["failure_reason"] == "agent_error"
    assert "400 from" in snap["status_text"]
    assert "this model does not exist" not in snap["status_text"]  # a loopback reply's body is never shown


def test_question_interaction_answered_through_respond(call, model_env: ScriptedOpenAI) -> None:
    model_env.push(
        Reply.call(("ask_user", {"question": "Which API?", "options": ["staging", "prod"]})),
        Reply.answer("using staging", when=lambda b: "Use the staging API" in str(b["messages"])),
    )
    snap = data(call("agent_run", {"op": "start", "message": "deploy"}))
    assert snap["status"] == "waiting_for_input"
    inter = snap["interaction"]
    assert inter["kind"] == "question" and inter["prompt"] == "Which API?"
    bad = call("agent_run", {"op": "respond", "session_id": snap["session_id"], "interaction_id": "nope",
                             "response": "x"})  # fmt: skip
    assert bad.is_error and bad.error.code == "not_found"
    data(call("agent_run", {"op": "respond", "session_id": snap["session_id"], "interaction_id": inter["id"],
                            "response": "Use the staging API"}))  # fmt: skip
    done = data(call("agent_run", {"op": "wait", "session_id": snap["session_id"], "timeout": 10}))
    assert done["status"] == "completed" and done["assistant_text"] == "using staging"


def test_approval_accept_and_decline(call, model_env: ScriptedOpenAI, root: Path) -> None:
    model_env.push(
        Reply.call(("file_actions", {"action": "create", "path": "new.txt", "content": "hello\n"})),
        Reply.call(("file_actions", {"action": "create", "path": "other.txt", "content": "no\n"})),
        Reply.answer("one created, one declined", when=lambda b: "declined" in str(b["messages"])),
    )
    snap = data(call("agent_run", {"op": "start", "message": "make files", "approval": "ask"}))
    sid = snap["session_id"]
    assert snap["status"] == "waiting_for_input" and snap["interaction"]["kind"] == "approval"
    assert "file_actions" in snap["interaction"]["prompt"] and not (root / "new.txt").exists()
    bad = call("agent_run", {"op": "respond", "session_id": sid, "interaction_id": snap["interaction_id"],
                             "response": "maybe"})  # fmt: skip
    assert bad.is_error and bad.error.code == "invalid_arguments"
    data(call("agent_run", {"op": "respond", "session_id": sid, "interaction_id": snap["interaction_id"],
                            "response": "accept"}))  # fmt: skip
    second = data(call("agent_run", {"op": "wait", "session_id": sid, "timeout": 10}))
    assert second["status"] == "waiting_for_input", second
    assert (root / "new.txt").read_text() == "hello\n"
    data(call("agent_run", {"op": "respond", "session_id": sid, "interaction_id": second["interaction_id"],
                            "response": "decline", "reason": "not that one"}))  # fmt: skip
    done = data(call("agent_run", {"op": "wait", "session_id": sid, "timeout": 10}))
    assert done["status"] == "completed" and not (root / "other.txt").exists()


def test_bad_calls_are_refused_with_codes(call, model_env: ScriptedOpenAI) -> None:
    assert call("agent_run", {"op": "start"}).error.code == "invalid_arguments"
    assert call("agent_run", {"op": "start", "message": "x", "session_id": "y"}).error.code == "invalid_arguments"
    assert call("agent_run", {"op": "poll"}).error.code == "invalid_arguments"
    assert call("agent_run", {"op": "poll", "session_id": str(uuid.uuid4())}).error.code == "not_found"
    assert call("agent_run", {"op": "steer", "session_id": "a", "session_ids": ["b"], "message": "m"}).is_error
    assert call("agent_run", {"op": "start", "message": "x", "workflow_id": "nope"}).error.code == "not_found"
    assert model_env.requests == []
