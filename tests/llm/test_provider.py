"""The provider against a real HTTP server: both APIs, streamed and not, errors and retries."""

from __future__ import annotations

import asyncio
import json
import time

import pytest

from tests.support.openai_server import Reply, ScriptedOpenAI
from tooldeck.core import tool
from tooldeck.llm.errors import ModelError
from tooldeck.llm.provider import Provider, retry_after
from tooldeck.llm.settings import ModelConfig
from tooldeck.llm.types import FunctionCall, FunctionResult, Message, ReasoningDelta, Retrying, TextDelta

MODES = [("chat", False), ("chat", True), ("responses", False), ("responses", True)]


@tool(read_only=True)
def echo(text: str) -> str:
    "Return the text."
    return text


def provider(server: ScriptedOpenAI, api: str = "chat", stream: bool = False, **kw: object) -> Provider:
    cfg = ModelConfig(model="m1", base_url=server.url, api_key="k", api=api, stream=stream, backoff_seconds=0.05, **kw)  # type: ignore[arg-type]
    return Provider(cfg)


def complete(p: Provider, items: list, events: list | None = None, tools: list | None = None):  # type: ignore[no-untyped-def]
    return asyncio.run(p.complete(items, tools or [], None, events.append if events is not None else None))


@pytest.mark.parametrize(("api", "stream"), MODES)
def test_text_answer_with_reasoning_and_usage(server: ScriptedOpenAI, api: str, stream: bool) -> None:
    server.push(Reply.answer("Hello <world> & all", reasoning="thinking hard"))
    events: list = []
    turn = complete(provider(server, api, stream), [Message("user", "hi")], events)
    assert turn.text == "Hello <world> & all"
    assert turn.reasoning is not None and turn.reasoning.text == "thinking hard"
    assert turn.calls == []
    assert (turn.usage.input_tokens, turn.usage.output_tokens) == (11, 7)
    path = server.requests[0]["path"]
    assert path.endswith("/responses" if api == "responses" else "/chat/completions")
    if stream:
        assert "".join(e.text for e in events if isinstance(e, TextDelta)) == "Hello <world> & all"
        assert "".join(e.text for e in events if isinstance(e, ReasoningDelta)) == "thinking hard"
    else:
        assert events == []


@pytest.mark.parametrize(("api", "stream"), MODES)
def test_parallel_tool_calls_and_history_round_trip(server: ScriptedOpenAI, api: str, stream: bool) -> None:
    server.push(Reply.call(("echo", {"text": "a"}), ("echo", {"text": "b"})), Reply.answer("done"))
    p = provider(server, api, stream)

    async def two_turns():  # type: ignore[no-untyped-def]
        first = await p.complete([Message("system", "be brief"), Message("user", "go")], [echo])
        history = [Message("user", "go"), *first.calls]
        history += [FunctionResult(c.call_id, c.name, f"out-{i}") for i, c in enumerate(first.calls)]
        return first, await p.complete(history, [echo])

    turn, second = asyncio.run(two_turns())
    assert [(c.name, json.loads(c.arguments)) for c in turn.calls] == [("echo", {"text": "a"}), ("echo", {"text": "b"})]
    assert len({c.call_id for c in turn.calls}) == 2
    body = server.requests[0]["body"]
    assert body["parallel_tool_calls"] is True
    names = [t["function"]["name"] if api == "chat" else t["name"] for t in body["tools"]]
    assert names == ["echo"]
    # the second request carries the calls and their results in the API's own shape
    assert second.text == "done"
    body = server.requests[1]["body"]
    if api == "chat":
        msgs = body["messages"]
        assert [m["role"] for m in msgs] == ["user", "assistant", "tool", "tool"]
        assert [tc["id"] for tc in msgs[1]["tool_calls"]] == [c.call_id for c in turn.calls]
        assert msgs[3] == {"role": "tool", "tool_call_id": turn.calls[1].call_id, "content": "out-1"}
    else:
        kinds = [i.get("type", i.get("role")) for i in body["input"]]
        assert kinds == ["user", "function_call", "function_call", "function_call_output", "function_call_output"]
        assert body["input"][4]["output"] == "out-1"


@pytest.mark.parametrize("api", ["chat", "responses"])
def test_401_is_a_clear_auth_error_without_retry(server: ScriptedOpenAI, api: str) -> None:
    server.push(Reply.error(401, "Incorrect API key provided"))
    with pytest.raises(ModelError) as info:
        complete(provider(server, api), [Message("user", "hi")])
    assert info.value.kind == "auth" and info.value.status == 401
    assert "OPENAI_API_KEY" in info.value.message
    assert "Incorrect API key" not in info.value.message  # the body of a loopback reply is never shown
    assert "not shown" in info.value.message
    assert len(server.requests) == 1


def test_429_waits_for_retry_after_then_succeeds(server: ScriptedOpenAI) -> None:
    server.push(Reply.error(429, "slow down", headers={"retry-after": "1"}), Reply.answer("ok"))
    events: list = []
    started = time.monotonic()
    turn = complete(provider(server), [Message("user", "hi")], events)
    assert turn.text == "ok"
    assert time.monotonic() - started >= 0.95
    retries = [e for e in events if isinstance(e, Retrying)]
    assert [(r.status, r.wait_seconds) for r in retries] == [(429, 1.0)]


def test_5xx_backs_off_and_gives_up_with_a_clear_error(server: ScriptedOpenAI) -> None:
    server.push(Reply.error(500), Reply.error(502), Reply.answer("ok"))
    events: list = []
    assert complete(provider(server, stream=True), [Message("user", "hi")], events).text == "ok"
    assert [e.status for e in events if isinstance(e, Retrying)] == [500, 502]
    server.push(*[Reply.error(503, "overloaded")] * 3)
    with pytest.raises(ModelError) as info:
        complete(provider(server, max_retries=2), [Message("user", "hi")])
    assert info.value.kind == "server" and "503" in info.value.message and "3 attempts" in info.value.message


def test_tool_call_without_a_name_is_malformed(server: ScriptedOpenAI) -> None:
    server.push(Reply(calls=[("c1", "", "{}")]))
    with pytest.raises(ModelError) as info:
        complete(provider(server), [Message("user", "hi")], tools=[echo])
    assert info.value.kind == "malformed" and "without a function name" in info.value.message


def test_retry_after_forms() -> None:
    assert retry_after({"retry-after": "2"}) == 2.0
    assert retry_after({"retry-after-ms": "1500"}) == 1.5
    assert retry_after({}) is None
    assert 0 <= (retry_after({"retry-after": "Wed, 21 Oct 2015 07:28:00 GMT"}) or 0) == 0


def test_unreachable_endpoint_is_a_connection_error() -> None:
    cfg = ModelConfig(model="m", base_url="http://127.0.0.1:9/v1", api_key="k", max_retries=0)
    with pytest.raises(ModelError) as info:
        asyncio.run(Provider(cfg).complete([Message("user", "x")]))
    assert info.value.kind == "connection" and "127.0.0.1:9" in info.value.message


def test_unused_import_guard() -> None:
    assert FunctionCall("a", "b", "{}").name == "b"
