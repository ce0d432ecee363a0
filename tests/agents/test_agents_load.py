"""20 concurrent agent sessions: every transcript complete, nothing lost or
duplicated, and other tools keep answering meanwhile."""

from __future__ import annotations

import time
from pathlib import Path

from tests.agents.conftest import data
from tests.support.openai_server import Reply, ScriptedOpenAI, last_user_text

N = 20


def test_twenty_sessions_complete_with_exact_transcripts(call, model_env: ScriptedOpenAI, root: Path) -> None:
    for i in range(N):
        (root / f"f{i}.txt").write_text(f"content {i}\n")
    for i in range(N):
        call_read = Reply.call(("read_file", {"file": f"f{i}.txt"})).calls
        model_env.push(
            Reply(calls=call_read, delay=0.2, when=lambda b, i=i: last_user_text(b) == f"task {i}"),
            Reply(text=f"done {i}", delay=0.1, when=lambda b, i=i: f'"f{i}.txt"' in str(b.get("messages"))),
        )
    sids = [data(call("agent_run", {"op": "start", "message": f"task {i}", "detach": True}))["session_id"]
            for i in range(N)]  # fmt: skip
    latencies = []
    deadline = time.monotonic() + 60
    pending = set(sids)
    while pending and time.monotonic() < deadline:
        t0 = time.perf_counter()
        text = call.ok("read_file", {"file": "f0.txt"})
        latencies.append(time.perf_counter() - t0)
        assert "content 0" in text
        polled = data(call("agent_run", {"op": "poll", "session_ids": sorted(pending)}))
        pending = {s for s, st in polled["poll"]["statuses"].items() if st == "running"}
        time.sleep(0.05)
    assert not pending, f"{len(pending)} sessions still running"
    for i, sid in enumerate(sids):
        snap = data(call("agent_run", {"op": "poll", "session_id": sid}))
        assert snap["status"] == "completed" and snap["assistant_text"] == f"done {i}", snap
        log = data(call("agent_manage", {"op": "get_log", "session_id": sid}))["transcript_xml"]
        assert [f'seq="{n}"' in log for n in range(1, 5)] == [True] * 4 and 'seq="5"' not in log
        assert log.count(f"task {i}<") == 1 and log.count(f"content {i}") == 1 and log.count(f"done {i}<") == 1
    assert len(latencies) >= 3 and max(latencies) < 5.0
