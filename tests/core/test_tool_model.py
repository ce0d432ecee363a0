"""The seed 001 contract for the core tool model."""

from __future__ import annotations

import asyncio
import json
import threading
import time

import pytest
from pydantic import BaseModel

from tooldeck.core import (
    Append,
    Channel,
    ErrorCode,
    Invocation,
    Output,
    Progress,
    Replace,
    Toolbox,
    ToolCall,
    ToolError,
    ToolFinished,
    ToolInput,
    ToolStarted,
    create_function,
    create_streaming_function,
    custom_tool,
    tool,
)


class EchoIn(ToolInput):
    text: str


def make_echo():
    return create_function(
        name="echo", description="Return the supplied text", parameters=EchoIn, run=lambda a: Output.text(a.text)
    )


def make_streaming_echo():
    def run(a: EchoIn, inv: Invocation) -> Output:
        inv.emit(Progress(Channel.ACTIVITY, Replace("Preparing response")))
        inv.emit(Progress(Channel.STDOUT, Append("one ")))
        inv.emit(Progress(Channel.STDOUT, Append("two")))
        inv.emit(Progress(Channel.ACTIVITY, Replace("Done")))
        return Output.text(a.text)

    return create_streaming_function(name="observed_echo", description="echo", parameters=EchoIn, run=run)


def test_silent_run_equals_observed_run_final_output():
    box = Toolbox([make_streaming_echo()])
    seen: list[Progress] = []
    silent = box.call_sync("observed_echo", '{"text":"Hello"}')
    observed = box.call_sync("observed_echo", '{"text":"Hello"}', invocation=Invocation.create(seen.append))
    assert silent.output == observed.output == Output.text("Hello")
    assert len(seen) == 4


def test_progress_is_ordered_and_keeps_append_and_replace():
    box = Toolbox([make_streaming_echo()])
    seen: list[Progress] = []
    box.call_sync("observed_echo", {"text": "x"}, invocation=Invocation.create(seen.append))
    assert [(p.channel, type(p.update).__name__, p.update.text) for p in seen] == [
        (Channel.ACTIVITY, "Replace", "Preparing response"),
        (Channel.STDOUT, "Append", "one "),
        (Channel.STDOUT, "Append", "two"),
        (Channel.ACTIVITY, "Replace", "Done"),
    ]


def test_progress_never_becomes_part_of_the_result():
    box = Toolbox([make_streaming_echo()])
    res = box.call_sync("observed_echo", {"text": "final"}, invocation=Invocation.create(lambda p: None))
    assert res.text == "final"


def test_observer_exceptions_are_swallowed_and_logged(caplog):
    def bad(_p: Progress) -> None:
        raise RuntimeError("observer broke")

    box = Toolbox([make_streaming_echo()])
    res = box.call_sync("observed_echo", {"text": "ok"}, invocation=Invocation.create_with_trace(bad, bad))
    assert res.text == "ok" and not res.is_error
    assert "observer raised" in caplog.text


def test_invalid_utf8_progress_is_rejected():
    inv = Invocation.create(lambda p: None)
    with pytest.raises(ValueError):
        inv.emit(Progress(Channel.STDOUT, Append("bad \udc80")))


def test_is_observed():
    assert not Invocation.silent().is_observed
    assert Invocation.create(lambda p: None).is_observed


def test_malformed_input_is_rejected_by_the_decoder():
    box = Toolbox([make_echo()])
    for raw, fragment in [
        ("{", "not valid JSON"),
        ("[1,2]", "JSON object"),
        ('{"text": 3}', "`text`"),
        ("{}", "`text`"),
        ('{"text":"a","extra":1}', "`extra`"),
    ]:
        res = box.call_sync("echo", raw)
        assert res.is_error and res.error.code == ErrorCode.INVALID_ARGUMENTS, raw
        assert fragment in res.error.message, (raw, res.error.message)


def test_duplicate_names_raise():
    with pytest.raises(ValueError, match="duplicate"):
        Toolbox([make_echo(), make_echo()])


def test_tool_names_are_validated():
    with pytest.raises(ValueError):
        create_function(name="bad name!", description="", parameters=EchoIn, run=lambda a: "")


def test_decorator_builds_schema_from_plain_parameters_and_docstring():
    @tool(read_only=True)
    def add(a: int, b: int = 2) -> str:
        """Add two numbers."""
        return str(a + b)

    assert add.description == "Add two numbers."
    assert add.parameters["required"] == ["a"]
    assert add.parameters["properties"]["b"]["default"] == 2
    assert add.parameters["additionalProperties"] is False
    assert "title" not in add.parameters
    assert add.annotations.read_only
    assert Toolbox([add]).call_sync("add", {"a": 40}).text == "42"


def test_decorator_with_a_model_and_async_function_and_invocation():
    class Q(BaseModel):
        n: int

    @tool
    async def square(q: Q, invocation: Invocation) -> dict:
        invocation.emit_text("activity", "squaring")
        return {"value": q.n * q.n}

    seen: list[Progress] = []
    res = Toolbox([square]).call_sync("square", {"n": 7}, invocation=Invocation.create(seen.append))
    assert res.output.structured == {"value": 49}
    assert json.loads(res.text) == {"value": 49}
    assert seen[0].update.text == "squaring"


def test_custom_tool_receives_raw_string_and_unwraps_input_object():
    got: list[str] = []
    t = custom_tool(
        name="raw",
        description="raw",
        grammar={"type": "grammar", "syntax": "lark", "definition": "x"},
        run=lambda s, inv: got.append(s) or "ok",
    )
    box = Toolbox([t])
    assert box.call_sync("raw", "*** not json").text == "ok"
    assert box.call_sync("raw", {"input": "from mcp"}).text == "ok"
    assert got == ["*** not json", "from mcp"]
    assert t.kind == "custom"


def test_tool_error_keeps_code_and_unexpected_exception_becomes_internal_error():
    def fails(a: EchoIn) -> str:
        raise ToolError(ErrorCode.CONFLICT, "file changed since read; read it again")

    def crashes(a: EchoIn) -> str:
        raise ZeroDivisionError("boom")

    box = Toolbox(
        [
            create_function(name="fails", description="", parameters=EchoIn, run=fails),
            create_function(name="crashes", description="", parameters=EchoIn, run=crashes),
        ]
    )
    r1 = box.call_sync("fails", {"text": "x"})
    assert r1.error.code == "conflict" and "read it again" in r1.text
    r2 = box.call_sync("crashes", {"text": "x"})
    assert r2.error.code == "internal_error" and "ZeroDivisionError" in r2.text


def test_unknown_tool_is_a_clear_error():
    res = Toolbox([make_echo()]).call_sync("nope", "{}")
    assert res.error.code == "unknown_tool" and "echo" in res.error.message


def test_parallel_dispatch_keeps_call_order_and_runs_concurrently():
    """Concurrent by construction, not by timing: each call waits until all four
    have started, which serial dispatch would never let happen (each would time out)."""
    started: list[int] = []
    finished: list[int] = []

    @tool
    async def sleepy(ms: int) -> str:
        started.append(ms)
        while len(started) < 4:
            await asyncio.sleep(0.001)
        await asyncio.sleep(ms / 1000)
        finished.append(ms)
        return str(ms)

    box = Toolbox([sleepy], max_concurrency=8, timeout=60)
    calls = [ToolCall("sleepy", {"ms": ms}) for ms in (200, 10, 100, 50)]
    results = asyncio.run(box.call_many(calls))
    assert [r.text for r in results] == ["200", "10", "100", "50"]  # in call order
    assert finished == [10, 50, 100, 200]  # ... though they finished in another


def test_sync_tools_run_in_worker_threads_in_parallel():
    together = threading.Barrier(3, timeout=60)  # broken (an error) unless all three run at once

    @tool
    def block(ms: int) -> str:
        together.wait()
        time.sleep(ms / 1000)
        return threading.current_thread().name

    box = Toolbox([block], timeout=120)
    results = asyncio.run(box.call_many([ToolCall("block", {"ms": 150}) for _ in range(3)]))
    assert not any(r.is_error for r in results), [r.text for r in results]
    assert all(r.text != threading.main_thread().name for r in results)


def test_timeout_returns_error_and_flags_the_invocation_cancelled():
    seen: dict[str, bool] = {}

    @tool
    def slow(inv: Invocation) -> str:
        for _ in range(100):
            time.sleep(0.01)
            if inv.cancelled:
                seen["cancelled"] = True
                return "stopped"
        return "finished"

    box = Toolbox([slow])
    res = box.call_sync("slow", {}, timeout=0.05)
    assert res.error.code == "timeout"
    time.sleep(0.1)
    assert seen.get("cancelled") is True


def test_cancellation_propagates_and_traces_cancelled():
    events = []

    @tool
    async def forever() -> str:
        await asyncio.sleep(10)
        return "never"

    box = Toolbox([forever])

    async def main():
        inv = Invocation.create_with_trace(lambda p: None, events.append)
        task = asyncio.create_task(box.call("forever", {}, invocation=inv))
        await asyncio.sleep(0.05)
        task.cancel()
        with pytest.raises(asyncio.CancelledError):
            await task
        return inv

    inv = asyncio.run(main())
    assert not inv.cancelled  # the call's own invocation was cancelled; the caller's stays usable
    assert isinstance(events[0], ToolStarted) and isinstance(events[-1], ToolFinished)
    assert events[-1].outcome == "cancelled"


def test_traces_started_and_finished_with_outcome():
    events = []
    box = Toolbox([make_echo()])
    inv = Invocation.create_with_trace(lambda p: None, events.append)
    box.call_sync("echo", {"text": "a"}, invocation=inv, call_id="c1")
    box.call_sync("echo", "{", invocation=inv, call_id="c2")
    assert [(type(e).__name__, e.call_id) for e in events] == [
        ("ToolStarted", "c1"),
        ("ToolFinished", "c1"),
        ("ToolStarted", "c2"),
        ("ToolFinished", "c2"),
    ]
    assert events[1].outcome == "returned" and events[3].outcome == "raised"
