"""``tooldeck chat FILE``: type, watch the reply stream, see tool calls, and
find the file exactly as ``tooldeck run`` would have written it."""

from __future__ import annotations

from pathlib import Path

from tests.support.openai_server import Reply, ScriptedOpenAI
from tests.tui.conftest import (
    SIZE,
    assistant_texts,
    local_app,
    opened,
    run_async,
    say,
    screen_text,
    tool_blocks,
    turn_done,
    until,
)
from tooldeck.chatmd.conversation import items_of
from tooldeck.chatmd.document import load
from tooldeck.chatmd.runner import run_file
from tooldeck.llm.types import FunctionCall, FunctionResult, Message

ANSWER = "The file says **alpha**.\n\n```python\nprint('alpha')\n```\n\n" + "That is all it says. " * 8
HEAD = '<config model="test-model"/>\n<tool name="read_file"/>\n<system>You are terse.</system>\n'


def test_a_message_streams_calls_a_tool_and_lands_in_the_file(work: Path, server: ScriptedOpenAI) -> None:
    f = work / "c.chatmd"
    f.write_text(HEAD)
    rest = server.gate()  # the reply stops half-way until the test has seen it streaming
    server.push(
        Reply.call(("read_file", {"file": "a.txt"})),
        Reply(text=ANSWER, holds=((len(ANSWER) // 2, rest),)),
    )

    async def go() -> None:
        app = local_app(f)
        async with app.run_test(size=SIZE) as pilot:
            await opened(pilot, app)
            await say(pilot, app, "what is in a.txt?")
            # the reply is shown while it streams, before the turn ends
            await until(pilot, lambda: any(b.streaming and b.text for b in _live(app)), what="streamed text")
            partial = next(b.text for b in _live(app) if b.streaming)
            assert app.busy and 0 < len(partial) < len(ANSWER) and ANSWER.startswith(partial)
            rest.set()
            await turn_done(pilot, app)
            [tools] = tool_blocks(app)
            assert [(c.name, c.state) for c in tools.calls] == [("read_file", "done")]
            assert "alpha" in tools.calls[0].result
            assert assistant_texts(app)[-1].startswith("The file says **alpha**.")
            text = screen_text(app)
            assert "read_file" in text and "The file says alpha." in text  # markdown rendered, not raw
            assert "tokens in 22 / out 14" in str(app.status_line.render())

    run_async(go())
    items = items_of(load(f))
    assert [type(i).__name__ for i in items] == ["Message", "Message", "FunctionCall", "FunctionResult", "Message"]
    assert items[1] == Message("user", "what is in a.txt?")
    assert isinstance(items[2], FunctionCall) and items[2].name == "read_file"
    assert isinstance(items[3], FunctionResult) and "alpha" in items[3].output and not items[3].is_error
    # the model saw the conversation as the runner would send it
    sent = server.bodies()[-1]["messages"]
    assert [m["role"] for m in sent] == ["system", "user", "assistant", "tool"]


def _live(app):  # type: ignore[no-untyped-def]
    from tooldeck.tui.blocks import MessageBlock

    return [b for b in app.chat_view.blocks if isinstance(b, MessageBlock) and b.role == "assistant"]


def test_parallel_calls_sit_side_by_side(work: Path, server: ScriptedOpenAI) -> None:
    (work / "b.txt").write_text("beta\n")
    f = work / "c.chatmd"
    f.write_text(HEAD)
    server.push(Reply.call(("read_file", {"file": "a.txt"}), ("read_file", {"file": "b.txt"})), Reply.answer("ok"))

    async def go() -> None:
        app = local_app(f)
        async with app.run_test(size=SIZE) as pilot:
            await opened(pilot, app)
            await say(pilot, app, "read both")
            await turn_done(pilot, app)
            [tools] = tool_blocks(app)
            assert [c.state for c in tools.calls] == ["done", "done"]
            lines = screen_text(app).splitlines()
            assert any(line.count("read_file") == 2 for line in lines), "the two calls are not side by side"

    run_async(go())


def test_the_file_continues_with_tooldeck_run_and_back(work: Path, server: ScriptedOpenAI, monkeypatch, capsys) -> None:  # type: ignore[no-untyped-def]
    f = work / "c.chatmd"
    f.write_text(HEAD)
    server.push(Reply.answer("first answer"))

    async def chat(message: str) -> list[str]:
        app = local_app(f)
        async with app.run_test(size=SIZE) as pilot:
            await opened(pilot, app)
            await say(pilot, app, message)
            await turn_done(pilot, app)
            await pilot.press("ctrl+q")
        return assistant_texts(app)

    run_async(chat("one"))
    # batch continues the file the chat wrote
    with f.open("a") as fh:
        fh.write("<user>\ntwo\n</user>\n")
    server.push(Reply.answer("second answer"))
    assert run_file(f) == 0
    # and the chat opens what the batch runner wrote, then continues it
    server.push(Reply.answer("third answer"))
    shown = run_async_result(chat("three"))
    assert shown == ["first answer", "second answer", "third answer"]
    items = items_of(load(f))
    assert [i.text for i in items if isinstance(i, Message)][1:] == [
        "one", "first answer", "two", "second answer", "three", "third answer"]  # fmt: skip


def run_async_result(coro):  # type: ignore[no-untyped-def]
    import asyncio

    return asyncio.run(coro)


def test_no_file_names_a_new_one_and_creates_it_at_the_first_message(work: Path, server: ScriptedOpenAI) -> None:
    from tooldeck.tui.launch import new_file_name

    f = new_file_name(work)
    server.push(Reply.answer("hello back"))

    async def go() -> None:
        app = local_app(f, model="test-model")
        async with app.run_test(size=SIZE) as pilot:
            await opened(pilot, app)
            status = str(app.status_line.render())
            assert f.name in status and "new" in status and not f.exists()
            await say(pilot, app, "hello")
            await turn_done(pilot, app)

    run_async(go())
    text = f.read_text()
    assert '<config model="test-model"/>' in text and '<tool name="read_file"/>' in text
    assert [i.text for i in items_of(load(f)) if isinstance(i, Message)] == ["hello", "hello back"]


def test_tokens_are_unknown_when_the_endpoint_sends_no_usage(work: Path, server: ScriptedOpenAI) -> None:
    f = work / "c.chatmd"
    f.write_text(HEAD)
    server.push(Reply(text="no usage here", usage=None))

    async def go() -> None:
        app = local_app(f)
        async with app.run_test(size=SIZE) as pilot:
            await opened(pilot, app)
            await say(pilot, app, "hi")
            await turn_done(pilot, app)
            status = str(app.status_line.render())
            assert "tokens unknown" in status and "test-model" in status and "cwd=" in status

    run_async(go())


def test_history_recalls_sent_messages(work: Path, server: ScriptedOpenAI) -> None:
    f = work / "c.chatmd"
    f.write_text(HEAD + "<user>from the file</user>\n<assistant>ok</assistant>\n")
    server.push(Reply.answer("fine"))

    async def go() -> None:
        app = local_app(f)
        async with app.run_test(size=SIZE) as pilot:
            await opened(pilot, app)
            await say(pilot, app, "typed now")
            await turn_done(pilot, app)
            app.composer.focus()
            await pilot.press("up")
            assert app.composer.text == "typed now"
            await pilot.press("up")
            assert app.composer.text == "from the file"
            await pilot.press("down", "down")
            assert app.composer.text == ""

    run_async(go())


def test_a_multi_line_message_keeps_its_lines(work: Path, server: ScriptedOpenAI) -> None:
    f = work / "c.chatmd"
    f.write_text(HEAD)
    server.push(Reply.answer("got both lines"))

    async def go() -> None:
        app = local_app(f)
        async with app.run_test(size=SIZE) as pilot:
            await opened(pilot, app)
            await say(pilot, app, "line one\nline two")
            await turn_done(pilot, app)

    run_async(go())
    assert items_of(load(f))[1] == Message("user", "line one\nline two")


def test_a_file_changed_outside_the_chat_is_reloaded_before_the_next_message(
    work: Path, server: ScriptedOpenAI
) -> None:
    f = work / "c.chatmd"
    f.write_text(HEAD)
    server.push(Reply.answer("first"), Reply.answer("after the edit"))

    async def go() -> None:
        app = local_app(f)
        async with app.run_test(size=SIZE) as pilot:
            await opened(pilot, app)
            await say(pilot, app, "one")
            await turn_done(pilot, app)
            with f.open("a") as fh:  # another program (an editor, tooldeck run) writes the file meanwhile
                fh.write("<user>\nwritten elsewhere\n</user>\n<assistant>\nnoted elsewhere\n</assistant>\n")
            await say(pilot, app, "two")
            await turn_done(pilot, app)
            assert assistant_texts(app) == ["first", "noted elsewhere", "after the edit"]
            assert "changed outside the chat" in screen_text(app)

    run_async(go())
    sent = [m.get("content") for m in server.bodies()[-1]["messages"]]
    assert "written elsewhere" in sent and "noted elsewhere" in sent  # the model saw the file as it is
    texts = [i.text for i in items_of(load(f)) if isinstance(i, Message)]
    assert texts[1:] == ["one", "first", "written elsewhere", "noted elsewhere", "two", "after the edit"]


def test_root_and_no_parallel_tool_calls_flags(work: Path, server: ScriptedOpenAI, tmp_path: Path) -> None:
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    (elsewhere / "a.txt").write_text("the other root's a.txt\n")
    f = work / "c.chatmd"
    f.write_text(HEAD)
    server.push(Reply.call(("read_file", {"file": "a.txt"})), Reply.answer("ok"))

    async def go() -> None:
        app = local_app(f, roots=[str(elsewhere)], parallel=False)
        async with app.run_test(size=SIZE) as pilot:
            await opened(pilot, app)
            assert str(elsewhere) in str(app.status_line.render())
            await say(pilot, app, "read a.txt")
            await turn_done(pilot, app)
            assert "other root" in tool_blocks(app)[0].calls[0].result  # ${workspace} is the --root folder

    run_async(go())
    assert server.bodies()[0]["parallel_tool_calls"] is False


def test_enter_on_the_empty_box_answers_a_file_that_ends_with_a_user_message(
    work: Path, server: ScriptedOpenAI
) -> None:
    f = work / "c.chatmd"
    f.write_text(HEAD + "<user>\nwritten by hand\n</user>\n")
    server.push(Reply.answer("answered"))

    async def go() -> None:
        app = local_app(f)
        async with app.run_test(size=SIZE) as pilot:
            await opened(pilot, app)
            assert "no answer yet" in screen_text(app)
            app.composer.focus()
            await pilot.press("enter")
            await turn_done(pilot, app)
            assert assistant_texts(app) == ["answered"]
            await pilot.press("enter")  # nothing left to answer: nothing is sent
            await turn_done(pilot, app)

    run_async(go())
    assert [i.text for i in items_of(load(f)) if isinstance(i, Message)][1:] == ["written by hand", "answered"]
    assert len(server.requests) == 1


def test_a_doc_the_model_adds_to_the_file_is_not_read_at_the_next_message(
    work: Path, server: ScriptedOpenAI, tmp_path: Path
) -> None:
    """The chat's file lies in the root the model writes (apply_patch, a shell): an
    outside ``<doc>`` it adds mid-chat must not be read into the next request. The
    chat reloads the file against its transcript record, as ``tooldeck run`` does."""
    outside = tmp_path / "outside"
    outside.mkdir()
    secret = outside / "id_rsa"
    secret.write_text("SECRET-KEY-MATERIAL-7f3a\n")
    f = work / "c.chatmd"
    f.write_text(HEAD)
    server.push(Reply.answer("first"), Reply.answer("must not be asked"))

    async def go() -> None:
        app = local_app(f)
        async with app.run_test(size=SIZE) as pilot:
            await opened(pilot, app)
            await say(pilot, app, "one")
            await turn_done(pilot, app)
            with f.open("a") as fh:  # the model's edit of the transcript (what apply_patch would write)
                fh.write(f'<user>\nsee <doc src="{secret}" local/>\n</user>\n')
            await say(pilot, app, "two")
            await turn_done(pilot, app)
            assert "tooldeck trust allow" in screen_text(app).replace("\n", " ") or "authority" in screen_text(app)

    run_async(go())
    assert len(server.bodies()) == 1  # the second turn never reached the model
    assert all("SECRET-KEY-MATERIAL" not in str(b) for b in server.bodies())
