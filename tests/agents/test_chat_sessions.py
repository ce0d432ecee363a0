"""What the chat TUI's connected mode asks of agent sessions: start from a
conversation's messages, on a named workspace, with only the declared tools;
follow a run change by change; read the log as entries; shell asks answered
as the session's approval."""

from __future__ import annotations

import time
from pathlib import Path

from tests.agents.conftest import data
from tests.shell.shell_harness import needs_bwrap
from tests.support.openai_server import Reply, ScriptedOpenAI
from tooldeck import cli_workspace as person
from tooldeck.runtime import Runtime
from tooldeck.state.tables import ContextDB

HISTORY = [
    {"kind": "message", "role": "system", "text": "You are terse."},
    {"kind": "message", "role": "user", "text": "earlier question"},
    {"kind": "call", "name": "read_file", "call_id": "c1", "text": '{"file": "a.txt"}'},
    {"kind": "result", "name": "read_file", "call_id": "c1", "text": "alpha"},
    {"kind": "message", "role": "assistant", "text": "earlier answer"},
]


def other_workspace(runtime: Runtime, tmp_path: Path) -> Path:
    other = tmp_path / "other"
    other.mkdir()
    (other / "b.txt").write_text("only in the other workspace\n")
    person.add_folder(ContextDB(runtime.store), "other-ws", str(other))
    return other


def test_a_session_starts_from_a_conversation_on_a_named_workspace_with_its_tools(
    call, runtime: Runtime, model_env: ScriptedOpenAI, tmp_path: Path  # type: ignore[no-untyped-def]
) -> None:
    other_workspace(runtime, tmp_path)
    model_env.push(Reply.call(("read_file", {"file": "b.txt"})), Reply.answer("it says: only in the other"))
    snap = data(call("agent_run", {"op": "start", "message": "and b.txt?", "history": HISTORY,
                                   "workspace": "other-ws", "tools": ["read_file"]}))  # fmt: skip
    assert snap["status"] == "completed" and snap["workspace"] == "other-ws"
    first = model_env.bodies()[0]
    roles = [m["role"] for m in first["messages"]]
    assert roles == ["system", "system", "user", "assistant", "tool", "assistant", "user"]
    assert sorted(t["function"]["name"] for t in first["tools"]) == ["ask_user", "read_file"]
    # ${workspace} is the named workspace's root: the read found b.txt there, not in the server's root
    assert "only in the other workspace" in str(model_env.bodies()[1]["messages"])
    log = data(call("agent_manage", {"op": "get_log", "session_id": snap["session_id"]}))
    kinds = [(e["seq"], e["kind"], e["role"]) for e in log["items"]]
    assert kinds[:6] == [(1, "message", "system"), (2, "message", "user"), (3, "call", None), (4, "result", None),
                         (5, "message", "assistant"), (6, "message", "user")]  # fmt: skip
    assert log["items"][-1]["text"] == "it says: only in the other"


def test_an_unknown_workspace_or_tool_is_refused_naming_the_known_ones(
    call, runtime: Runtime, model_env: ScriptedOpenAI, tmp_path: Path  # type: ignore[no-untyped-def]
) -> None:
    other_workspace(runtime, tmp_path)
    res = call("agent_run", {"op": "start", "message": "x", "workspace": "nope"})
    assert res.is_error and res.error.code == "not_found" and "other-ws" in res.error.message
    res = call("agent_run", {"op": "start", "message": "x", "workspace": "other-ws", "tools": ["git", "bogus"]})
    assert res.is_error and res.error.code == "invalid_arguments" and "bogus" in res.error.message
    assert "read_file" in res.error.message
    listed = data(call("manage_workspaces", {"action": "list"}))["workspaces"]
    assert {w["name"] for w in listed} >= {"other-ws"} and sum(w["current"] for w in listed) == 1
    assert model_env.bodies() == []  # nothing was started


def test_wait_changed_since_follows_a_streaming_run(call, model_env: ScriptedOpenAI) -> None:  # type: ignore[no-untyped-def]
    rest = model_env.gate()  # the reply stops half-way until a wait has seen part of it
    model_env.push(Reply(text="streamed " * 40, holds=((len("streamed ") * 20, rest),)))
    snap = data(call("agent_run", {"op": "start", "message": "stream", "detach": True}))
    sid, seen_live, version = snap["session_id"], [], snap["version"]
    deadline = time.monotonic() + 60
    while snap["status"] == "running" and time.monotonic() < deadline:
        asked = time.monotonic()
        snap = data(call("agent_run", {"op": "wait", "session_id": sid, "changed_since": version, "timeout": 5}))
        if snap["status"] == "running":
            if snap["version"] == version:
                # nothing changed: only the wait's own timeout may end it (a loaded machine can
                # take that long to reach the model: once, in a 3-worker run, it did)
                waited = time.monotonic() - asked
                assert waited >= 4.5, f"the wait returned after {waited:.2f} s with no change past {version}: {snap}"
                continue
            seen_live.append(snap["live"]["text"])
            if snap["live"]["text"]:
                rest.set()
        version = snap.get("version", version)
    where = {k: snap.get(k) for k in ("status", "status_text", "version", "live", "item_count")}
    assert snap["status"] == "completed", (
        f"after 60 s: {where}; model requests {len(model_env.bodies())}; gate open {rest.is_set()}; "
        f"live texts seen {[len(t) for t in seen_live]}"
    )
    partial = [t for t in seen_live if t and t != "streamed " * 40]
    assert partial and all(("streamed " * 40).startswith(t) for t in partial)
    assert snap["usage"] == {"input_tokens": 11, "output_tokens": 7}
    res = call("agent_run", {"op": "poll", "session_id": sid, "changed_since": 1})
    assert res.is_error and res.error.code == "invalid_arguments"


@needs_bwrap
def test_a_shell_ask_in_a_session_waits_for_respond(call, root: Path, model_env: ScriptedOpenAI) -> None:  # type: ignore[no-untyped-def]
    model_env.push(Reply.call(("shell", {"program": "touch", "arguments": ["made"]})), Reply.answer("asked"))
    snap = data(call("agent_run", {"op": "start", "message": "touch", "tools": ["shell"], "detach": True}))
    sid = snap["session_id"]
    snap = data(call("agent_run", {"op": "wait", "session_id": sid, "timeout": 30}))
    assert snap["status"] == "waiting_for_input" and snap["interaction"]["kind"] == "approval"
    assert "touch made" in snap["interaction"]["prompt"]
    data(call("agent_run", {"op": "respond", "session_id": sid, "interaction_id": snap["interaction_id"],
                            "response": "decline", "reason": "not in this folder"}))  # fmt: skip
    done = data(call("agent_run", {"op": "wait", "session_id": sid, "timeout": 30}))
    assert done["status"] == "completed" and not (root / "made").exists()
    assert "not in this folder" in str(model_env.bodies()[-1]["messages"])
