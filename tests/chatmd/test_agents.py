"""Agent tools and fork against the scripted server: fresh vs branched history,
same roots, progress forwarded, depth limit."""

from __future__ import annotations

import asyncio
from pathlib import Path

from tests.support.openai_server import Reply, ScriptedOpenAI, last_user_text
from tooldeck.chatmd.agents import FORK_PREAMBLE, MAX_DEPTH, agent_tool
from tooldeck.chatmd.document import load
from tooldeck.chatmd.runner import launch_runtime
from tooldeck.chatmd.session import prepare
from tooldeck.core import Invocation
from tooldeck.llm.loop import Result, run_conversation
from tooldeck.llm.types import FunctionResult, ToolOutput
from tooldeck.runtime import Runtime


def run_file(path: Path, rt: Runtime, events: list | None = None) -> Result:
    session = prepare(load(path), rt)

    async def go() -> Result:
        p = session.provider()
        try:
            return await run_conversation(
                p, session.items, session.toolbox, on_event=events.append if events is not None else None
            )
        finally:
            await p.aclose()

    return asyncio.run(go())


def setup(tmp_path: Path, server: ScriptedOpenAI, monkeypatch) -> Runtime:  # type: ignore[no-untyped-def]
    monkeypatch.setenv("OPENAI_BASE_URL", server.url)
    monkeypatch.setenv("OPENAI_API_KEY", "k")
    monkeypatch.setenv("TOOLDECK_CONFIG", str(tmp_path / "none.toml"))
    work = tmp_path / "work"
    work.mkdir()
    (work / "notes.txt").write_text("the build is red\n")
    monkeypatch.chdir(work)
    return launch_runtime(tmp_path / "state")


def is_agent(body: dict) -> bool:
    msgs = body.get("messages") or []
    return bool(msgs) and msgs[0].get("content") == "You triage."


def test_agent_tool_runs_a_fresh_conversation_with_the_same_roots(
    tmp_path: Path, server: ScriptedOpenAI, monkeypatch
) -> None:  # type: ignore[no-untyped-def]
    rt = setup(tmp_path, server, monkeypatch)
    prompts = tmp_path / "work" / "prompts"
    prompts.mkdir()
    (prompts / "triage.chatmd").write_text('<tool name="read_file"/>\n<system>You triage.</system>\n')
    main = tmp_path / "work" / "main.chatmd"
    main.write_text(
        '<config model="main-model"/>\n<tool name="triage" agent="prompts/triage.chatmd" local/>\n'
        "<system>You lead.</system>\n<user>secret-history: why is CI failing?</user>\n"
    )
    server.push(
        Reply.call(("triage", {"input": "look at notes.txt"}), when=lambda b: not is_agent(b)),
        Reply.call(("read_file", {"file": "notes.txt"}), when=is_agent),
        Reply.answer("triaged: the build is red", when=is_agent),
        Reply.answer("CI is red, says triage", when=lambda b: not is_agent(b)),
    )
    events: list = []
    result = run_file(main, rt, events)
    assert result.text == "CI is red, says triage"
    agent_first = next(r["body"] for r in server.requests if is_agent(r["body"]))
    roles = [m["role"] for m in agent_first["messages"]]
    assert roles == ["system", "user"] and agent_first["messages"][1]["content"] == "look at notes.txt"
    assert "secret-history" not in str(agent_first)  # a fresh conversation
    assert agent_first["model"] == "main-model"  # no <config> in the agent: the caller's model
    assert [t["function"]["name"] for t in agent_first["tools"]] == ["read_file"]
    results = [i for i in result.items if isinstance(i, FunctionResult)]
    assert results[0].output == "triaged: the build is red"
    forwarded = [e for e in events if isinstance(e, ToolOutput) and e.name == "triage"]
    assert any(e.channel == "activity" and "read_file" in e.text for e in forwarded)
    assert "".join(e.text for e in forwarded if e.channel == "assistant") == "triaged: the build is red"


def test_agent_tool_factory_outside_a_conversation(tmp_path: Path, server: ScriptedOpenAI, monkeypatch) -> None:  # type: ignore[no-untyped-def]
    rt = setup(tmp_path, server, monkeypatch)
    prompt = tmp_path / "work" / "helper.chatmd"
    prompt.write_text('<config model="helper-model"/>\n<system>You help.</system>\n')
    t = agent_tool(prompt, rt, name="helper", prepare=prepare)
    assert t.name == "helper" and "helper.chatmd" in t.description
    server.push(Reply.answer("helped"))
    progress: list = []
    out = asyncio.run(t.run('{"input": "hi"}', Invocation.create(progress.append)))
    assert out.as_text() == "helped"
    assert server.requests[0]["body"]["model"] == "helper-model"
    assert "".join(p.update.text for p in progress) == "helped"
    # an edited prompt is picked up on the next call
    prompt.write_text('<config model="v2"/>\n<system>You help.</system>\n')
    server.push(Reply.answer("again"))
    asyncio.run(t.run('{"input": "hi"}'))
    assert server.requests[1]["body"]["model"] == "v2"


def test_fork_branches_the_current_conversation(tmp_path: Path, server: ScriptedOpenAI, monkeypatch) -> None:  # type: ignore[no-untyped-def]
    rt = setup(tmp_path, server, monkeypatch)
    main = tmp_path / "work" / "main.chatmd"
    main.write_text('<config model="m"/>\n<tool name="fork"/>\n<tool name="read_file"/>\n<user>context-42</user>\n')
    in_fork = lambda b: last_user_text(b).startswith("[fork]")  # noqa: E731
    server.push(
        Reply.call(("fork", {"input": "read notes.txt"}), when=lambda b: not in_fork(b)),
        Reply.call(("read_file", {"file": "notes.txt"}), when=in_fork),
        Reply.answer("branch: red", when=in_fork),
        Reply.answer("done", when=lambda b: not in_fork(b)),
    )
    result = run_file(main, rt)
    assert result.text == "done"
    branch = next(r["body"] for r in server.requests if in_fork(r["body"]))
    msgs = branch["messages"]
    assert [m["role"] for m in msgs] == ["user", "user"] and msgs[0]["content"] == "context-42"
    assert msgs[1]["content"] == FORK_PREAMBLE + "read notes.txt"
    assert sorted(t["function"]["name"] for t in branch["tools"]) == ["fork", "read_file"]
    assert [i.output for i in result.items if isinstance(i, FunctionResult)] == ["branch: red"]


def test_fork_depth_limit(tmp_path: Path, server: ScriptedOpenAI, monkeypatch) -> None:  # type: ignore[no-untyped-def]
    rt = setup(tmp_path, server, monkeypatch)
    main = tmp_path / "work" / "main.chatmd"
    main.write_text('<config model="m"/>\n<tool name="fork"/>\n<user>go deep</user>\n')
    # main and MAX_DEPTH branches each fork once; the last fork is refused; then all answer
    server.push(*[Reply.call(("fork", {"input": "deeper"})) for _ in range(MAX_DEPTH + 1)])
    server.push(*[Reply.answer(f"level {n}") for n in range(MAX_DEPTH, -1, -1)])
    result = run_file(main, rt)
    assert result.text == "level 0"
    refused = server.requests[MAX_DEPTH + 1]["body"]["messages"][-1]
    assert refused["role"] == "tool" and "error [depth_limit]" in refused["content"]
    assert server.pending == 0


def test_fork_outside_a_conversation_is_a_clear_error() -> None:
    from tooldeck.chatmd.agents import fork_tool
    from tooldeck.core import Toolbox

    res = Toolbox([fork_tool()]).call_sync("fork", '{"input": "x"}')
    assert res.is_error and res.error is not None and res.error.code == "unsupported"
