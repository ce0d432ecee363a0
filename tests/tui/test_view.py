"""The transcript view renders only what is on screen, and keeps its place."""

from __future__ import annotations

from pathlib import Path

from tests.support.openai_server import Reply, ScriptedOpenAI
from tests.tui.conftest import SIZE, assistant_texts, local_app, opened, run_async, say, screen_text, turn_done, until
from tooldeck.tui.view import ChatView


def long_conversation(n: int) -> str:
    parts = ['<config model="test-model"/>\n']
    for i in range(n // 2):
        parts.append(f"<user>\nquestion {i}: how does part {i} work?\n</user>\n")
        body = f"answer {i}: it works like this.\n\n```python\ndef part_{i}():\n    return {i}\n```\n\n" + "More. " * 20
        parts.append(f"<assistant>\nRAW|{body}|RAW\n</assistant>\n")
    return "".join(parts)


def test_a_thousand_messages_open_rendering_only_what_is_visible(work: Path) -> None:
    f = work / "long.chatmd"
    f.write_text(long_conversation(1000))

    async def go() -> None:
        app = local_app(f)
        async with app.run_test(size=SIZE) as pilot:
            await opened(pilot, app)
            await pilot.pause(0.05)
            view = app.query_one(ChatView)
            assert len(view.blocks) == 1000
            assert view.rendered < 200, f"{view.rendered} of 1000 blocks rendered to open"
            assert "answer 499" in screen_text(app)  # it opens at the end
            view.scroll_home(animate=False)
            await pilot.pause(0.1)
            assert "question 0:" in screen_text(app)
            # the idle measurer finishes the job without blocking: the scrollbar becomes exact
            await until(pilot, lambda: all(view._exact), timeout=120, what="every block measured")
            exact = sum(len(view._lines(i)) for i in range(len(view.blocks)))
            assert view.virtual_size.height == exact
            assert "question 0:" in screen_text(app)  # measuring below kept the view in place
            await pilot.press("ctrl+end")
            await pilot.pause(0.1)
            assert "answer 499" in screen_text(app)

    run_async(go())


def test_scrolled_up_the_view_stays_put_while_the_reply_streams(work: Path, server: ScriptedOpenAI) -> None:
    f = work / "c.chatmd"
    f.write_text(long_conversation(40))
    first, second, third = "streaming " * 60, "flowing " * 60, "ending " * 30
    more, rest = server.gate(), server.gate()  # the stream stops at each until the test opens it
    server.push(Reply(text=first + second + third, holds=((len(first), more), (len(first + second), rest))))

    def shown() -> str:
        return (assistant_texts(app)[-1:] or [""])[0]

    app = local_app(f)

    async def go() -> None:
        async with app.run_test(size=SIZE) as pilot:
            await opened(pilot, app)
            await say(pilot, app, "go")
            await until(pilot, lambda: shown().count("streaming") == 60 and app.busy, what="the first part")
            await pilot.press("pageup", "pageup")
            await pilot.pause(0.1)
            before = screen_text(app)
            more.set()  # more text streams in while the person reads above it
            await until(pilot, lambda: shown().count("flowing") == 60, what="the second part")
            await pilot.pause(0.1)
            assert app.busy and screen_text(app) == before  # the person reads on, undisturbed
            rest.set()
            await pilot.press("ctrl+end")
            await turn_done(pilot, app)
            assert "ending" in screen_text(app)

    run_async(go())


def test_clicking_a_tool_call_shows_its_full_result(work: Path, server: ScriptedOpenAI) -> None:
    (work / "many.txt").write_text("".join(f"line number {i}\n" for i in range(30)))
    f = work / "c.chatmd"
    f.write_text('<config model="test-model"/>\n<tool name="read_file"/>\n')
    server.push(Reply.call(("read_file", {"file": "many.txt"})), Reply.answer("done"))

    async def go() -> None:
        app = local_app(f)
        async with app.run_test(size=SIZE) as pilot:
            await opened(pilot, app)
            await say(pilot, app, "read it")
            await turn_done(pilot, app)
            assert "line number 20" not in screen_text(app)
            await pilot.press("ctrl+o")  # expand every tool result
            await pilot.pause(0.1)
            app.chat_view.scroll_home(animate=False)
            await pilot.pause(0.1)
            assert "line number 20" in screen_text(app) or "line number 5" in screen_text(app)

    run_async(go())
