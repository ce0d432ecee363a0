"""The model loop without ChatMD: parallel tool calls, item order, progress, limits."""

from __future__ import annotations

import asyncio
import json

import pytest

from tests.support.openai_server import Reply, ScriptedOpenAI
from tooldeck.core import Invocation, Toolbox, tool
from tooldeck.llm.loop import run_conversation
from tooldeck.llm.provider import Provider
from tooldeck.llm.settings import ModelConfig
from tooldeck.llm.types import FunctionCall, FunctionResult, Message, Reasoning, ToolDone, ToolOutput, ToolStart


def pair_toolbox() -> Toolbox:
    """``meet`` says "met" only when another call runs at the same time (waits 1 s at most)."""
    state = {"running": 0}
    both = asyncio.Event()

    @tool
    async def meet(who: str, inv: Invocation) -> str:
        "Wait for a partner call."
        inv.emit_text("activity", f"{who} waiting")
        state["running"] += 1
        if state["running"] == 2:
            both.set()
        try:
            await asyncio.wait_for(both.wait(), 1)
        except TimeoutError:
            return f"{who}: alone"
        finally:
            state["running"] -= 1
        return f"{who}: met"

    return Toolbox([meet])


def provider(server: ScriptedOpenAI, stream: bool = True) -> Provider:
    return Provider(ModelConfig(model="m", base_url=server.url, api_key="k", stream=stream))


@pytest.mark.parametrize(("parallel", "expected"), [(True, ["a: met", "b: met"]), (False, ["a: alone", "b: alone"])])
def test_tool_calls_run_in_parallel_unless_disabled(
    server: ScriptedOpenAI, parallel: bool, expected: list[str]
) -> None:
    server.push(Reply.call(("meet", {"who": "a"}), ("meet", {"who": "b"})), Reply.answer("ok", reasoning="hm"))
    items: list = []
    events: list = []

    async def go():  # type: ignore[no-untyped-def]
        p = provider(server)
        try:
            return await run_conversation(
                p, [Message("user", "meet")], pair_toolbox(), parallel=parallel, on_item=items.append,
                on_event=events.append,
            )  # fmt: skip
        finally:
            await p.aclose()

    result = asyncio.run(go())
    assert result.text == "ok" and result.turns == 2 and result.usage.input_tokens == 22
    kinds = [type(i).__name__ for i in items]
    assert kinds == ["FunctionCall", "FunctionCall", "FunctionResult", "FunctionResult", "Reasoning", "Message"]
    assert [i.output for i in items if isinstance(i, FunctionResult)] == expected
    assert server.requests[0]["body"]["parallel_tool_calls"] is parallel
    assert sum(isinstance(e, ToolStart) for e in events) == 2 and sum(isinstance(e, ToolDone) for e in events) == 2
    assert {e.text for e in events if isinstance(e, ToolOutput)} == {"a waiting", "b waiting"}
    assert isinstance(items[4], Reasoning) and items[4].text == "hm"


def test_unknown_tool_is_an_error_result_the_model_sees(server: ScriptedOpenAI) -> None:
    server.push(Reply.call(("nope", {})), Reply.answer("fine"))
    result = asyncio.run(run_conversation(provider(server, False), [Message("user", "x")], pair_toolbox()))
    res = next(i for i in result.items if isinstance(i, FunctionResult))
    assert res.is_error and "unknown_tool" in res.output
    assert json.loads(json.dumps(server.requests[1]["body"]))["messages"][-1]["content"].startswith(
        "error [unknown_tool]"
    )


def test_max_turns_stops_a_model_that_never_answers(server: ScriptedOpenAI) -> None:
    server.push(*[Reply.call(("meet", {"who": "x"}))] * 2)

    @tool
    def meet(who: str) -> str:
        "Echo."
        return who

    result = asyncio.run(
        run_conversation(provider(server, False), [Message("user", "x")], Toolbox([meet]), max_turns=2)
    )
    assert result.stopped == "max_turns" and result.turns == 2
    assert [type(i) for i in result.items] == [FunctionCall, FunctionResult] * 2
