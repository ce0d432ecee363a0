"""The chat TUI driven the way people use it: Textual's headless pilot types
and presses keys, the model is the scripted OpenAI-compatible server on
127.0.0.1, the tools are tooldeck's own, and the file on disk is checked."""

from __future__ import annotations

import asyncio
import time
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest

from tests.support.fixtures import server  # noqa: F401
from tests.support.openai_server import ScriptedOpenAI
from tooldeck.llm.types import Message
from tooldeck.tui.app import ChatApp
from tooldeck.tui.blocks import MessageBlock, ToolsBlock
from tooldeck.tui.local import LocalChat

SIZE = (110, 36)


@pytest.fixture
def work(tmp_path: Path, server: ScriptedOpenAI, monkeypatch: pytest.MonkeyPatch) -> Iterator[Path]:  # noqa: F811
    """A folder to chat in (the launch directory), the scripted model as the endpoint."""
    d = tmp_path / "work"
    d.mkdir()
    (d / "a.txt").write_text("alpha\n")
    cfg = tmp_path / "config.toml"
    cfg.write_text("[models]\nmax_retries = 1\nbackoff_seconds = 0.05\n")
    monkeypatch.setenv("OPENAI_BASE_URL", server.url)
    monkeypatch.setenv("OPENAI_API_KEY", "test-key")
    monkeypatch.setenv("TOOLDECK_STATE_DIR", str(tmp_path / "state"))
    monkeypatch.setenv("TOOLDECK_CONFIG", str(cfg))
    monkeypatch.delenv("TOOLDECK_MODEL", raising=False)
    monkeypatch.chdir(d)
    yield d


def local_app(path: Path, **kw: object) -> ChatApp:
    return ChatApp(lambda emit: LocalChat(path, emit, **kw), str(path))  # type: ignore[arg-type]


async def until(pilot, cond: Callable[[], object], timeout: float = 30.0, what: str = "") -> None:  # type: ignore[no-untyped-def]
    """Let the app run until ``cond()`` holds (generous: the machine is shared)."""
    deadline = time.monotonic() + timeout
    while not cond():
        if time.monotonic() > deadline:
            raise AssertionError(f"timed out waiting for {what or cond}")
        await pilot.pause(0.02)


async def click(pilot, app: ChatApp, selector: str) -> None:  # type: ignore[no-untyped-def]
    """Click ``selector`` once it is laid out where a person would click it.

    A widget mounted a moment ago has no region yet, and a pilot click then
    lands on whatever is under (0, 0) and returns False: wait for the widget
    to be the one under its own top-left cell, then click, and insist it hit."""

    def placed() -> bool:
        found = app.screen.query(selector)
        if not found:
            return False
        w = found.first()
        return w.region.area > 0 and app.get_widget_at(*w.region.offset)[0] is w

    await until(pilot, placed, what=f"{selector} on screen")
    assert await pilot.click(selector), f"the click missed {selector}"


async def opened(pilot, app: ChatApp) -> None:  # type: ignore[no-untyped-def]
    await until(pilot, lambda: app.opened is not None or app.failed is not None, what="the conversation to open")
    assert app.failed is None, app.failed


async def say(pilot, app: ChatApp, text: str) -> None:  # type: ignore[no-untyped-def]
    """Type ``text`` into the input box and press Enter, as a person does."""
    app.composer.focus()
    await pilot.press(*[_key(c) for c in text])
    await pilot.press("enter")


def _key(c: str) -> str:
    return "ctrl+j" if c == "\n" else c  # Ctrl-J starts a new line in the input box


async def turn_done(pilot, app: ChatApp, timeout: float = 30.0) -> None:  # type: ignore[no-untyped-def]
    await until(pilot, lambda: not app.busy and app.status_line.state != "running", timeout, "the turn to end")
    await pilot.pause(0.1)


def screen_text(app: ChatApp) -> str:
    """What the view shows right now, as plain text."""
    view = app.chat_view
    return "\n".join(view.render_line(y).text for y in range(view.size.height))


def assistant_texts(app: ChatApp) -> list[str]:
    """Each assistant message on screen (a long one spans several blocks: joined again)."""
    out: list[str] = []
    for b in app.chat_view.blocks:
        if isinstance(b, MessageBlock) and b.role == "assistant":
            if b.first or not out:
                out.append(b.text)
            else:
                out[-1] += "\n\n" + b.text
    return out


def tool_blocks(app: ChatApp) -> list[ToolsBlock]:
    return [b for b in app.chat_view.blocks if isinstance(b, ToolsBlock)]


def user_message(text: str) -> Message:
    return Message("user", text)


def run_async(coro) -> None:  # type: ignore[no-untyped-def]
    asyncio.run(coro)


__all__ = ["SIZE", "assistant_texts", "click", "local_app", "opened", "run_async", "say", "screen_text", "tool_blocks",
           "turn_done", "until"]  # fmt: skip
