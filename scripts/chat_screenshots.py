"""Regenerate the chat TUI screenshots in docs/img (SVG, Textual's own export).

Drives the real app with Textual's pilot against the scripted model server
(tests/support/openai_server.py), in a throwaway ``project`` folder, and saves
the main states: a finished turn (markdown, code, two parallel tool calls), a
reply streaming while a tool runs, and a shell command waiting for approval.
Usage: ``PYTHONPATH=src python scripts/chat_screenshots.py``.
"""

from __future__ import annotations

import asyncio
import os
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))
from tests.support.openai_server import Reply, ScriptedOpenAI  # noqa: E402

OUT = REPO / "docs" / "img"
SIZE = (110, 34)
HEAD = """<config model="gpt-5-mini"/>
<tool name="read_file"/>
<tool name="file_search"/>
<shell_access id="dev" extends="builtin:workspace-development@1"><policy default="ask"/></shell_access>
<tool name="sh" type="shell" mode="structured" runtime="dev"/>
<system>You are a careful engineer. Answer briefly.</system>
"""
ANSWER = """`parse_port` accepts `HOST:PORT` and rejects ports outside 1-65535:

```python
def parse_port(value: str) -> tuple[str, int]:
    host, _, port = value.rpartition(":")
    if not port.isdigit() or not 0 < int(port) < 65536:
        raise ValueError(f"bad port in {value!r}")
    return host or "127.0.0.1", int(port)
```

The only caller is **`serve`**; its tests cover the error path."""


async def until(pilot, cond, timeout: float = 60) -> None:  # type: ignore[no-untyped-def]
    end = time.monotonic() + timeout
    while not cond():
        if time.monotonic() > end:
            raise TimeoutError(str(cond))
        await pilot.pause(0.05)


async def shoot(name: str, f: Path, replies: list[Reply], server: ScriptedOpenAI, message: str, moment) -> None:  # type: ignore[no-untyped-def]
    from tooldeck.tui.app import ChatApp
    from tooldeck.tui.local import LocalChat

    server.push(*replies)
    app = ChatApp(lambda emit: LocalChat(f, emit), str(f))
    async with app.run_test(size=SIZE) as pilot:
        await until(pilot, lambda: app.opened is not None)
        app.composer.focus()
        await pilot.press(*message)
        await pilot.press("enter")
        await moment(pilot, app)
        await pilot.pause(0.3)
        app.save_screenshot(f"{name}.svg", path=str(OUT))
        app.exit()
    print("wrote", OUT / f"{name}.svg")


async def main() -> None:
    with tempfile.TemporaryDirectory() as tmp, ScriptedOpenAI() as server:
        project = Path(tmp) / "project"
        (project / "src").mkdir(parents=True)
        (project / "src" / "net.py").write_text("def parse_port(value):\n    ...\n")
        (project / "tests").mkdir()
        (project / "tests" / "test_net.py").write_text("def test_parse_port():\n    ...\n")
        os.chdir(project)
        os.environ.update(OPENAI_BASE_URL=server.url, OPENAI_API_KEY="demo", TOOLDECK_STATE_DIR=str(Path(tmp) / "s"),
                          TOOLDECK_CONFIG=str(Path(tmp) / "none.toml"))  # fmt: skip

        async def done(pilot, app) -> None:  # type: ignore[no-untyped-def]
            status = app.status_line
            await until(pilot, lambda: not app.busy and status.state == "ready" and status.usage_known)

        f = project / "review.chatmd"
        f.write_text(HEAD)
        await shoot("tui-conversation", f, [
            Reply.call(("read_file", {"file": "src/net.py"}), ("file_search", {"pattern": "parse_port"})),
            Reply(text=ANSWER, usage=(1843, 212)),
        ], server, "how does parse_port validate its input?", done)  # fmt: skip

        async def streaming(pilot, app) -> None:  # type: ignore[no-untyped-def]
            from tooldeck.tui.blocks import MessageBlock

            await until(pilot, lambda: sum(len(b.text) for b in app.chat_view.blocks
                                           if isinstance(b, MessageBlock) and b.role == "assistant") > 260)  # fmt: skip

        g = project / "streaming.chatmd"
        g.write_text(HEAD)
        await shoot("tui-streaming", g, [
            Reply(text=ANSWER, reasoning="The user wants the validation rules; the function is short, "
                  "so quote it and name its caller.", chunk_delay=0.05),
        ], server, "explain parse_port", streaming)  # fmt: skip

        async def asking(pilot, app) -> None:  # type: ignore[no-untyped-def]
            await until(pilot, lambda: app.ask_panel.shown is not None)

        h = project / "fix.chatmd"
        h.write_text(HEAD)
        await shoot("tui-approval", h, [
            Reply.call(("sh", {"program": "python", "arguments": ["-m", "pytest", "tests/test_net.py", "-q"]})),
        ], server, "run the tests for net.py", asking)  # fmt: skip


if __name__ == "__main__":
    asyncio.run(main())
