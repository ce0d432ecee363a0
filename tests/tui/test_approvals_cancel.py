"""Approvals answered on the screen, and cancelling a turn without losing the file."""

from __future__ import annotations

import json
from pathlib import Path

from tests.shell.shell_harness import needs_bwrap
from tests.support.openai_server import Reply, ScriptedOpenAI
from tests.tui.conftest import (
    SIZE,
    assistant_texts,
    click,
    local_app,
    opened,
    run_async,
    say,
    tool_blocks,
    turn_done,
    until,
)
from tooldeck.chatmd.conversation import INTERRUPTED, items_of
from tooldeck.chatmd.document import load
from tooldeck.chatmd.runner import run_file
from tooldeck.llm.types import FunctionCall, FunctionResult, Message

SHELL = """<config model="test-model"/>
<shell_access id="dev" extends="builtin:workspace-development@1">
  <policy default="ask"/>
</shell_access>
<tool name="sh" type="shell" mode="structured" runtime="dev"/>
"""


def _tool_messages(server: ScriptedOpenAI) -> list[str]:
    return [m["content"] for m in server.bodies()[-1]["messages"] if m["role"] == "tool"]


@needs_bwrap
def test_a_shell_ask_is_approved_on_the_screen(work: Path, server: ScriptedOpenAI) -> None:
    f = work / "c.chatmd"
    f.write_text(SHELL)
    server.push(Reply.call(("sh", {"program": "touch", "arguments": ["made"]})), Reply.answer("made it"))

    async def go() -> None:
        app = local_app(f)
        async with app.run_test(size=SIZE) as pilot:
            await opened(pilot, app)
            await say(pilot, app, "make a file")
            await until(pilot, lambda: app.ask_panel.shown is not None, what="the approval")
            ask = app.ask_panel.shown
            assert ask is not None and ask.kind == "shell" and "touch made" in ask.body
            assert not (work / "made").exists()  # nothing runs before the person answers
            await pilot.press("a")
            await turn_done(pilot, app)
            assert app.ask_panel.current is None and assistant_texts(app)[-1] == "made it"

    run_async(go())
    assert (work / "made").exists()
    result = next(i for i in items_of(load(f)) if isinstance(i, FunctionResult))
    assert not result.is_error


@needs_bwrap
def test_decline_with_a_reason_reaches_the_model_and_runs_nothing(work: Path, server: ScriptedOpenAI) -> None:
    f = work / "c.chatmd"
    f.write_text(SHELL)
    server.push(Reply.call(("sh", {"program": "touch", "arguments": ["nope"]})), Reply.answer("understood"))

    async def go() -> None:
        app = local_app(f)
        async with app.run_test(size=SIZE) as pilot:
            await opened(pilot, app)
            await say(pilot, app, "make a file")
            await until(pilot, lambda: app.ask_panel.shown is not None, what="the approval")
            await click(pilot, app, "#ask-text")
            await pilot.press(*"use the tmp folder")
            await pilot.press("enter")
            await turn_done(pilot, app)
            [tools] = tool_blocks(app)
            assert tools.calls[0].state == "error" and "use the tmp folder" in tools.calls[0].result

    run_async(go())
    assert not (work / "nope").exists()
    assert any("declined" in t and "use the tmp folder" in t for t in _tool_messages(server))


@needs_bwrap
def test_accept_for_the_session_is_not_asked_again(work: Path, server: ScriptedOpenAI) -> None:
    f = work / "c.chatmd"
    f.write_text(SHELL)
    call = ("sh", {"program": "touch", "arguments": ["again"]})
    server.push(Reply.call(call), Reply.call(call), Reply.answer("twice"))

    async def go() -> None:
        app = local_app(f)
        async with app.run_test(size=SIZE) as pilot:
            await opened(pilot, app)
            await say(pilot, app, "twice")
            await until(pilot, lambda: app.ask_panel.shown is not None, what="the approval")
            await pilot.press("s")
            await turn_done(pilot, app)
            assert app.ask_panel.current is None and assistant_texts(app)[-1] == "twice"

    run_async(go())
    results = [i for i in items_of(load(f)) if isinstance(i, FunctionResult)]
    assert len(results) == 2 and not any(r.is_error for r in results)


def test_escape_cancels_mid_stream_and_the_file_keeps_every_complete_element(
    work: Path, server: ScriptedOpenAI, monkeypatch, capsys  # type: ignore[no-untyped-def]
) -> None:
    f = work / "c.chatmd"
    f.write_text('<config model="test-model"/>\n')
    long = "word " * 400
    rest = server.gate()  # the reply stops half-way until the cancel is seen: partial however loaded the machine
    server.push(Reply(text=long, holds=((len(long) // 2, rest),)), Reply.answer("after the cancel"))

    async def go() -> None:
        app = local_app(f)
        async with app.run_test(size=SIZE) as pilot:
            await opened(pilot, app)
            await say(pilot, app, "talk a lot")
            await until(pilot, lambda: any(t for t in assistant_texts(app)), what="streamed text")
            await pilot.press("escape")
            await turn_done(pilot, app)
            assert app.status_line.state == "cancelled"
            shown = assistant_texts(app)[-1]
            assert 0 < len(shown) < len(long)  # the partial reply stays on screen...
            rest.set()  # the rest of the stream goes nowhere: its connection was closed by the cancel
            # typing and sending still work after a cancel
            await say(pilot, app, "again")
            await turn_done(pilot, app)
            assert assistant_texts(app)[-1] == "after the cancel"

    run_async(go())
    texts = [(i.role, i.text) for i in items_of(load(f)) if isinstance(i, Message)]
    # ...but the file has only complete elements: no half reply
    assert texts == [("user", "talk a lot"), ("user", "again"), ("assistant", "after the cancel")]
    server.push(Reply.answer("batch resumes"))
    with f.open("a") as fh:
        fh.write("<user>\nand now batch\n</user>\n")
    assert run_file(f) == 0


def test_ctrl_c_cancels_a_running_tool_and_the_call_resumes_as_interrupted(
    work: Path, server: ScriptedOpenAI
) -> None:
    f = work / "c.chatmd"
    f.write_text('<config model="test-model"/>\n<tool name="slow" command="sleep 30" description="waits"/>\n')
    server.push(Reply.call(("slow", {})), Reply.answer("resumed"))

    async def go() -> None:
        app = local_app(f)
        async with app.run_test(size=SIZE) as pilot:
            await opened(pilot, app)
            await say(pilot, app, "wait")
            await until(pilot, lambda: tool_blocks(app) and tool_blocks(app)[0].calls[0].state == "running",
                        what="the tool to run")  # fmt: skip
            await pilot.press("ctrl+c")
            await turn_done(pilot, app, timeout=20)
            assert tool_blocks(app)[0].calls[0].state == "interrupted"
            assert app.is_running  # Ctrl-C with a turn running cancels the turn, it does not quit
            await say(pilot, app, "go on")
            await turn_done(pilot, app)

    run_async(go())
    items = items_of(load(f))
    calls = [i for i in items if isinstance(i, FunctionCall)]
    closed = [i for i in items if isinstance(i, FunctionResult)]
    assert len(calls) == 1 and closed[0].output == INTERRUPTED  # the file never got a made-up result...
    assert "<tool_response" not in f.read_text()
    # ...and the model was told, the way `tooldeck run` resumes such a file
    assert json.dumps(INTERRUPTED)[1:-1] in json.dumps(server.bodies()[-1])
