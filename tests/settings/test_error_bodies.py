"""Error messages never echo what a private address answered, nor the key.

A model endpoint, an embeddings endpoint, an MCP HTTP mount and a web fetch,
each against a server on 127.0.0.1 whose error reply carries a marker: the
marker is absent from what a model would see (the tool error, the agent's
status, the state directory), and so is the API key. The public-provider
branch (a short sanitised reason) is checked on literal public addresses,
which are classified without any network.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from tests.settings.listener import Listener, http_reply
from tests.support.openai_server import Reply, ScriptedOpenAI
from tooldeck.core.errors import ToolError

pytestmark = pytest.mark.timeout(180)

MARKER = "INTERNAL-MARKER-7f3a"
KEY = "sk-test-NEVERSHOWN-0123456789abcdef"


def tooldeck(tmp: Path, *args: str, env: dict[str, str]) -> subprocess.CompletedProcess[str]:
    base = {k: v for k, v in os.environ.items() if not k.upper().endswith("_PROXY")}
    config = tmp / "config.toml"
    config.write_text("[models]\nmax_retries = 0\n")
    full = {**base, "TOOLDECK_STATE_DIR": str(tmp / "state"), "TOOLDECK_CONFIG": str(config), **env}
    (tmp / "proj").mkdir(exist_ok=True)
    return subprocess.run(
        [sys.executable, "-m", "tooldeck", *args, "--root", str(tmp / "proj")],
        input="",
        capture_output=True,
        text=True,
        env=full,
        timeout=120,
    )


def state_bytes(state: Path) -> bytes:
    return b"".join(p.read_bytes() for p in state.rglob("*") if p.is_file())


def test_model_endpoint_errors_show_no_body_and_no_key(tmp_path: Path) -> None:
    with ScriptedOpenAI() as server:
        env = {"OPENAI_BASE_URL": server.url, "OPENAI_API_KEY": KEY, "TOOLDECK_MODEL": "scripted"}
        server.push(Reply.error(500, f"{MARKER} db password=hunter2"))
        chat = tooldeck(tmp_path, "call", "chat_send", json.dumps({"message": "hi"}), env=env)
        assert chat.returncode == 1 and "500 server error" in chat.stderr, chat.stderr
        server.push(Reply.error(401, f"{MARKER} Incorrect API key provided: {KEY}"))
        chat2 = tooldeck(tmp_path, "call", "chat_send", json.dumps({"message": "hi"}), env=env)
        assert chat2.returncode == 1 and "401 from" in chat2.stderr, chat2.stderr
        server.push(Reply.error(400, f"{MARKER} bad request, key {KEY}"))
        start = json.dumps({"op": "start", "message": "hi"})
        run = tooldeck(tmp_path, "call", "agent_run", start, env=env)
        assert run.returncode == 0 and "failed" in run.stdout, run.stdout + run.stderr
        assert len(server.requests) == 3
    seen = chat.stdout + chat.stderr + chat2.stdout + chat2.stderr + run.stdout + run.stderr
    assert MARKER not in seen and "hunter2" not in seen
    assert KEY not in seen and KEY[:12] not in seen
    stored = state_bytes(tmp_path / "state")  # chats, sessions, transcripts, logs
    assert MARKER.encode() not in stored and KEY.encode() not in stored


def test_embeddings_endpoint_error_shows_no_body(tmp_path: Path) -> None:
    from tooldeck.index.embed import OpenAIEmbedder

    body = json.dumps({"error": {"message": f"{MARKER} {KEY}"}}).encode()
    with Listener(http_reply(500, body, reason=MARKER)) as listener:
        with pytest.raises(ToolError) as info:
            OpenAIEmbedder(listener.url, "m", api_key=KEY).embed(["text"])
        assert listener.received  # it did answer
    assert "500" in info.value.message
    assert MARKER not in info.value.message and KEY not in info.value.message


@pytest.mark.parametrize(
    "reply",
    [
        http_reply(200, json.dumps({"internal": f"{MARKER} admin"}).encode()),  # JSON, not JSON-RPC
        http_reply(200, MARKER.encode(), content_type=f"text/x-{MARKER}"),  # a header
        http_reply(500, MARKER.encode(), reason=MARKER, content_type="text/plain"),
    ],
    ids=["json-body", "content-type", "500"],
)
def test_mcp_http_mount_errors_show_no_body_or_header(reply: bytes) -> None:
    from tooldeck.mounts.client import mount
    from tooldeck.mounts.spec import MountError

    with Listener(reply) as listener:
        with pytest.raises((MountError, ToolError)) as info:
            mount(f"http://127.0.0.1:{listener.port}/mcp", connect_timeout=20)
        assert listener.received
    assert MARKER.lower() not in str(info.value).lower()


def test_web_fetch_error_shows_no_reason_phrase_of_the_server(runtime) -> None:  # type: ignore[no-untyped-def]
    from tooldeck.catalog import build_toolbox

    with Listener(http_reply(500, MARKER.encode(), reason=f"{MARKER} secret", content_type="text/html")) as srv:
        runtime.settings["web"] = {"allow_private_hosts": ["127.0.0.1"], "total_timeout": 20.0}
        res = build_toolbox(runtime).call_sync(
            "webpage_to_markdown", json.dumps({"url": f"http://127.0.0.1:{srv.port}/x"})
        )
        assert srv.received
    assert res.is_error and res.error is not None and res.error.code == "http_error"
    assert "HTTP 500 Internal Server Error" in res.text and MARKER not in res.text


def test_reason_withholds_private_and_sanitises_public() -> None:
    from tooldeck.remote_errors import WITHHELD, is_private_host, reason, shown_url

    msg = f"Incorrect API key provided: sk-test-****cdef.\nSee {KEY} and Bearer abc.def; {MARKER}"
    for private in ("http://127.0.0.1:8080/v1", "http://10.1.2.3/v1", "http://[::1]:1/v1", "http://169.254.169.254/",
                    "http://[::ffff:127.0.0.1]/v1", "http://localhost:11434/v1"):  # fmt: skip
        assert reason(private, msg, secrets=[KEY]) == WITHHELD
    shown = reason("https://8.8.8.8/v1", msg, secrets=[KEY])
    assert shown.startswith("Incorrect API key provided") and MARKER in shown and "\n" not in shown
    assert KEY not in shown and "sk-test" not in shown and "abc.def" not in shown
    assert len(reason("https://8.8.8.8/v1", "x" * 5000)) <= 201
    assert reason("https://8.8.8.8/v1", None) == ""
    assert is_private_host(None) and is_private_host("") and not is_private_host("8.8.8.8")
    assert shown_url("https://user:pw@8.8.8.8:8443/v1?key=abc#f") == "https://8.8.8.8:8443/v1"
