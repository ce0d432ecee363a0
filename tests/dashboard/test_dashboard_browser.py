"""The web dashboard end to end in headless Chromium (Debian's, driven by playwright):
start a session through MCP, watch it appear and finish on the page, open its transcript.

Set TOOLDECK_SCREENSHOTS=DIR to also save screenshots of the main views (docs/img).
"""

from __future__ import annotations

import os
from pathlib import Path

import anyio
import httpx
import pytest

from tests.mcp.mcp_e2e import free_port, http_session, run_http
from tests.support.openai_server import Reply, ScriptedOpenAI

CHROMIUM = "/usr/bin/chromium"
ARGS = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
        "--disable-background-networking", "--disable-component-update", "--disable-sync"]  # fmt: skip

pytestmark = [
    pytest.mark.timeout(180),
    pytest.mark.requires("chromium"),
]


def test_session_appears_finishes_and_shows_its_transcript(
    model_env: ScriptedOpenAI, root: Path, state_dir: Path, tmp_path: Path
) -> None:
    from playwright.async_api import async_playwright

    (root / "README.md").write_text("# demo\nThe build uses make.\n")
    (root / "app.py").write_text("def main():\n    return 'hello'\n")
    shots = os.environ.get("TOOLDECK_SCREENSHOTS")
    first = model_env.gate()  # the run stays in its first model call until the page has shown it running
    model_env.push(
        Reply(calls=Reply.call(("read_file", {"file": "README.md"})).calls, gate=first),
        Reply(text="The build uses make."),
    )
    port = free_port()
    with run_http(root, state_dir, f"127.0.0.1:{port}") as srv:
        base = f"http://127.0.0.1:{port}"

        async def scenario() -> None:
            async with async_playwright() as pw:
                browser = await pw.chromium.launch_persistent_context(
                    str(tmp_path / "chromium-profile"), executable_path=CHROMIUM, args=ARGS, headless=True,
                    viewport={"width": 1200, "height": 760},
                )  # fmt: skip
                page = browser.pages[0] if browser.pages else await browser.new_page()
                await page.goto(base + "/")
                assert await page.locator("#no-sessions").count() == 1
                async with http_session(srv.url) as s:
                    await s.call_tool("manage_selection", {"op": "set", "paths": ["app.py", "README.md"]})
                    start = {"op": "start", "message": "How is it built?", "session_name": "build question",
                             "detach": True}  # fmt: skip
                    res = await s.call_tool("agent_run", start)
                    assert not res.is_error, res.content
                    sid = res.structured_content["session_id"]
                    # the row appears without a reload (server-sent events), first running, then completed
                    row = page.locator(f'tr[data-session-id="{sid}"]')
                    await row.wait_for(timeout=60000)
                    await page.locator(f'tr[data-session-id="{sid}"] .s-running').wait_for(timeout=60000)
                    first.set()
                    await page.locator(f'tr[data-session-id="{sid}"] .s-completed').wait_for(timeout=60000)
                    if shots:
                        await page.screenshot(path=f"{shots}/sessions.png")
                    await row.locator("a").click()
                    await page.wait_for_url(f"**/sessions/{sid}")
                    transcript = page.locator("#transcript")
                    await transcript.locator(".item.call").wait_for()
                    text = await transcript.inner_text()
                    assert "How is it built?" in text and "read_file" in text.lower()
                    assert "The build uses make." in text  # the tool result and the answer
                    assert await transcript.locator(".item.result").count() == 1
                    assert await page.locator("#session-status .s-completed").count() == 1
                    if shots:
                        await page.screenshot(path=f"{shots}/transcript.png", full_page=True)
                    await page.goto(base + "/selection")
                    sel = await page.locator("#selection-table").inner_text()
                    assert "app.py" in sel and "README.md" in sel
                    if shots:
                        await page.screenshot(path=f"{shots}/selection.png")
                    await page.goto(base + "/audit")
                    audit = await page.locator("#audit-table").inner_text()
                    assert "agent_run" in audit and "read_file" in audit  # MCP calls and the agent's calls
                    if shots:
                        await page.screenshot(path=f"{shots}/audit.png")
                    model_env.push(Reply.answer("main() returns 'hello'."))
                    sent = await s.call_tool("chat_send", {"message": "What does main return?", "chat_name": "main"})
                    assert not sent.is_error, sent.content
                    await page.goto(base + "/chats")
                    await page.locator("#chats-table a").click()
                    await page.locator(".item.assistant").wait_for()
                    assert "returns 'hello'" in await page.locator("main").inner_text()
                    if shots:
                        await page.screenshot(path=f"{shots}/chat.png")
                await browser.close()

        anyio.run(scenario)
        # the dashboard follows the /mcp rules: a foreign Host header is refused
        assert httpx.get(base + "/", headers={"Host": "evil.example"}).status_code == 403


def test_dashboard_requires_the_token_off_loopback(model_env: ScriptedOpenAI, root: Path, state_dir: Path) -> None:
    """With a token configured the dashboard wants it (header, or ?token= once, then a cookie)."""
    port = free_port()
    with run_http(root, state_dir, f"127.0.0.1:{port}", env={"TOOLDECK_HTTP_TOKEN": "s3cret"}):
        base = f"http://127.0.0.1:{port}"
        assert httpx.get(base + "/").status_code == 401
        assert httpx.get(base + "/", headers={"Authorization": "Bearer s3cret"}).status_code == 200
        with httpx.Client(follow_redirects=True) as c:
            first = c.get(base + "/audit?token=s3cret")
            assert first.status_code == 200 and "Audit of tool calls" in first.text  # redirected, cookie set
            assert c.get(base + "/chats").status_code == 200
        assert httpx.get(base + "/", params={"token": "wrong"}).status_code == 401
