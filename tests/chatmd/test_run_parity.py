"""Seed parity through ``python -m tooldeck run`` against the scripted model server.

Each test reads what a person or the model sees: the request bodies the
scripted OpenAI-compatible server received, the transcript appended to the
file, the runner's stdout and stderr.
"""

from __future__ import annotations

import base64
import json
import os
import socket
import struct
import subprocess
import sys
import time
import zlib
from pathlib import Path
from typing import Any

import pytest

from tests.support.openai_server import Reply, ScriptedOpenAI


def png(width: int = 3, height: int = 2) -> bytes:
    """A real (tiny, grey) PNG, made without Pillow."""

    def chunk(kind: bytes, data: bytes) -> bytes:
        return struct.pack(">I", len(data)) + kind + data + struct.pack(">I", zlib.crc32(kind + data))

    raw = b"".join(b"\x00" + b"\x80" * width for _ in range(height))
    ihdr = struct.pack(">IIBBBBB", width, height, 8, 0, 0, 0, 0)
    return b"\x89PNG\r\n\x1a\n" + chunk(b"IHDR", ihdr) + chunk(b"IDAT", zlib.compress(raw)) + chunk(b"IEND", b"")


@pytest.fixture
def work(tmp_path: Path) -> Path:
    d = tmp_path / "work"
    d.mkdir()
    (d / "a.txt").write_text("alpha\n")
    (d / "pic.png").write_bytes(png())
    return d


def env_for(server_url: str, tmp: Path, *, key: str | None = "test-key", retries: int = 1) -> dict[str, str]:
    cfg = tmp / "config.toml"
    cfg.write_text(f"[models]\nmax_retries = {retries}\nbackoff_seconds = 0.05\n")
    env = {
        **os.environ,
        "OPENAI_BASE_URL": server_url,
        "TOOLDECK_STATE_DIR": str(tmp / "state"),
        "TOOLDECK_CONFIG": str(cfg),
        "XDG_CACHE_HOME": str(tmp / "cache"),
        "COLUMNS": "200",
    }
    env.pop("OPENAI_API_KEY", None)
    if key is not None:
        env["OPENAI_API_KEY"] = key
    return env


def run(file: Path, env: dict[str, str]) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "tooldeck", "run", str(file)],
        cwd=file.parent, env=env, capture_output=True, text=True, timeout=120,
    )  # fmt: skip


def body(server: ScriptedOpenAI, n: int) -> dict[str, Any]:
    return server.requests[n]["body"]


# 1. images reach the model ----------------------------------------------------------------
def test_an_image_result_reaches_the_model_over_chat_completions_and_on_resume(
    work: Path, server: ScriptedOpenAI
) -> None:
    f = work / "img.chatmd"
    f.write_text('<config model="m"/>\n<tool name="import_image"/>\n<user>what is in pic.png?</user>\n')
    server.push(Reply.call(("import_image", {"path": "pic.png"})), Reply.answer("a grey square"))
    r = run(f, env_for(server.url, work.parent))
    assert r.returncode == 0, r.stderr
    uri = "data:image/png;base64," + base64.b64encode(png()).decode()
    msgs = body(server, 1)["messages"]
    assert [m["role"] for m in msgs] == ["user", "assistant", "tool", "user"]
    assert "PNG 3x2" in msgs[2]["content"]
    pictures = [p for p in msgs[3]["content"] if p["type"] == "image_url"]
    assert [p["image_url"]["url"] for p in pictures] == [uri]
    # the transcript keeps the image: running the file again sends it again
    text = f.read_text()
    assert "<img src=\".chatmd/img/" in text
    f.write_text(text + "<user>and its colour?</user>\n")
    server.push(Reply.answer("grey"))
    r = run(f, env_for(server.url, work.parent))
    assert r.returncode == 0, r.stderr
    again = body(server, 2)["messages"]
    assert [m["role"] for m in again] == ["user", "assistant", "tool", "user", "assistant", "user"]
    assert [p["image_url"]["url"] for p in again[3]["content"] if p["type"] == "image_url"] == [uri]


def test_an_image_result_reaches_the_model_over_the_responses_api(work: Path, server: ScriptedOpenAI) -> None:
    f = work / "img.chatmd"
    f.write_text('<config model="m" api="responses"/>\n<tool name="import_image"/>\n<user>look</user>\n')
    server.push(Reply.call(("import_image", {"path": "pic.png"})), Reply.answer("seen"))
    r = run(f, env_for(server.url, work.parent))
    assert r.returncode == 0, r.stderr
    out = [i for i in body(server, 1)["input"] if i.get("type") == "function_call_output"]
    assert len(out) == 1 and isinstance(out[0]["output"], list)
    kinds = [p["type"] for p in out[0]["output"]]
    assert kinds == ["input_text", "input_image"]
    assert out[0]["output"][1]["image_url"] == "data:image/png;base64," + base64.b64encode(png()).decode()


# 2. strict is sent --------------------------------------------------------------------------
@pytest.mark.parametrize("api", ["chat", "responses"])
def test_strict_function_tools_are_sent_and_null_arguments_work(work: Path, server: ScriptedOpenAI, api: str) -> None:
    f = work / "strict.chatmd"
    f.write_text(f'<config model="m" api="{api}"/>\n<tool name="read_file"/>\n<user>read a.txt</user>\n')
    # what a strict model sends: every property, the ones it does not mean as null
    args = {"file": "a.txt", "path": None, "root": None, "offset": None, "line_count": None,
            "start_line": None, "limit": None}  # fmt: skip
    server.push(Reply.call(("read_file", args)), Reply.answer("alpha"))
    r = run(f, env_for(server.url, work.parent))
    assert r.returncode == 0, r.stderr
    tools = body(server, 0)["tools"]
    spec = tools[0]["function"] if api == "chat" else tools[0]
    assert spec["strict"] is True
    schema = spec["parameters"]
    assert schema["additionalProperties"] is False
    assert sorted(schema["required"]) == sorted(schema["properties"])
    assert "null" in json.dumps(schema["properties"]["root"])  # optional: nullable
    results = json.dumps(body(server, 1))
    assert "alpha" in results and "invalid_arguments" not in results


def test_a_schema_with_no_strict_form_is_sent_with_strict_false(work: Path, server: ScriptedOpenAI) -> None:
    f = work / "loose.chatmd"
    f.write_text('<config model="m"/>\n<tool name="app_settings"/>\n<user>hi</user>\n')
    server.push(Reply.answer("hello"))
    assert run(f, env_for(server.url, work.parent)).returncode == 0
    fn = body(server, 0)["tools"][0]["function"]
    assert fn["name"] == "app_settings" and fn["strict"] is False


# rough edges: usage, retries, the missing key ------------------------------------------------
def test_no_usage_from_the_endpoint_reads_unknown(work: Path, server: ScriptedOpenAI) -> None:
    f = work / "u.chatmd"
    f.write_text('<config model="m"/>\n<user>hi</user>\n')
    reply = Reply.answer("hello")
    reply.usage = None
    server.push(reply)
    r = run(f, env_for(server.url, work.parent))
    assert r.returncode == 0, r.stderr
    assert "tokens: unknown" in r.stdout and "input 0" not in r.stdout


def _closed_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def test_a_refused_connection_fails_at_once_and_names_the_missing_key(work: Path) -> None:
    f = work / "down.chatmd"
    f.write_text('<config model="m"/>\n<user>hi</user>\n')
    env = env_for(f"http://127.0.0.1:{_closed_port()}/v1", work.parent, key=None, retries=4)
    start = time.monotonic()
    r = run(f, env)
    elapsed = time.monotonic() - start
    assert r.returncode == 1
    flat = " ".join(r.stderr.split())
    assert "connection refused" in flat and "OPENAI_API_KEY" in flat
    assert "retry" not in r.stdout + r.stderr
    assert "after" not in flat.split("connection refused")[0]  # one attempt, no "after 5 attempts"
    assert elapsed < 60


def test_retries_are_reported_on_stderr_with_their_reason(work: Path, server: ScriptedOpenAI) -> None:
    f = work / "flaky.chatmd"
    f.write_text('<config model="m"/>\n<user>hi</user>\n')
    server.push(Reply.error(503, "busy"), Reply.answer("hello"))
    r = run(f, env_for(server.url, work.parent, retries=2))
    assert r.returncode == 0, r.stderr
    assert "retry 1" in r.stderr and "503" in r.stderr
    assert "retry" not in r.stdout and "hello" in r.stdout


# 4. ${session_dir} and ${cache_dir} on a fresh install ---------------------------------------
def test_session_and_cache_dirs_are_made_on_first_use_and_work_as_roots(work: Path, server: ScriptedOpenAI) -> None:
    f = work / "notes.chatmd"
    f.write_text(
        '<config model="m"/>\n<tool name="read_file">\n  <read id="scratch" path="${session_dir}"/>\n'
        '  <read id="cache" path="${cache_dir}/"/>\n</tool>\n<user>hi</user>\n'
    )
    env = env_for(server.url, work.parent)
    state = Path(env["TOOLDECK_STATE_DIR"])
    assert not state.exists() and not (work.parent / "cache").exists()
    server.push(Reply.answer("hello"))
    r = run(f, env)
    assert r.returncode == 0, r.stderr
    (session,) = list((state.parent / "state-sessions").iterdir())
    assert session.name.startswith("notes-") and (work.parent / "cache" / "tooldeck").is_dir()
    assert oct(session.stat().st_mode & 0o777) == "0o700"
    # what the session keeps there is readable through the declared root
    (session / "memo.txt").write_text("remember the milk\n")
    f.write_text(f.read_text() + "<user>what did I note?</user>\n")
    server.push(Reply.call(("read_file", {"file": "memo.txt", "root": "scratch"})), Reply.answer("milk"))
    r = run(f, env)
    assert r.returncode == 0, r.stderr
    assert "remember the milk" in json.dumps(body(server, 2))


# 5. read_file with named roots: a path spelled from ${tool_dir} -----------------------------
def test_read_file_resolves_a_path_that_starts_with_a_root_name(work: Path, server: ScriptedOpenAI) -> None:
    (work / "src").mkdir()
    (work / "src" / "app.py").write_text("print('from src')\n")
    (work / "src" / "both.py").write_text("print('both, src')\n")
    (work / "vendor" / "src").mkdir(parents=True)
    (work / "vendor" / "src" / "only.py").write_text("print('only vendored')\n")
    (work / "vendor" / "src" / "both.py").write_text("print('both, vendored')\n")
    f = work / "roots.chatmd"
    f.write_text(
        '<config model="m"/>\n<tool name="read_file">\n  <read id="src" path="src"/>\n'
        '  <read id="lib" path="vendor/src"/>\n</tool>\n<user>read it</user>\n'
    )
    server.push(
        Reply.call(("read_file", {"file": "src/app.py"}), ("read_file", {"file": "vendor/src/only.py"}),
                   ("read_file", {"file": "src/both.py"})),
        Reply.answer("read"),
    )  # fmt: skip
    r = run(f, env_for(server.url, work.parent))
    assert r.returncode == 0, r.stderr
    tools = [m["content"] for m in body(server, 1)["messages"] if m["role"] == "tool"]
    assert "from src" in tools[0]  # the root `src`, spelled from ${tool_dir}
    assert "only vendored" in tools[1]  # the root `lib`, its whole path from ${tool_dir}
    # two roots fit: the model is told both ways to say it
    assert "invalid_arguments" in tools[2] and "src:both.py" in tools[2] and "lib:both.py" in tools[2]


def test_a_link_planted_as_the_session_dir_is_refused(work: Path, server: ScriptedOpenAI, tmp_path: Path) -> None:
    secret = tmp_path / "private"
    secret.mkdir()
    (secret / "key.txt").write_text("never show this\n")
    f = work / "notes.chatmd"
    f.write_text('<config model="m"/>\n<tool name="read_file">\n  <read id="scratch" path="${session_dir}"/>\n'
                 "</tool>\n<user>hi</user>\n")  # fmt: skip
    env = env_for(server.url, work.parent)
    server.push(Reply.answer("hello"))
    assert run(f, env).returncode == 0
    (session,) = list((Path(env["TOOLDECK_STATE_DIR"]).parent / "state-sessions").iterdir())
    session.rmdir()
    session.symlink_to(secret)  # what a model that can write beside the state directory could do
    f.write_text(f.read_text() + "<user>read key.txt</user>\n")
    server.push(Reply.call(("read_file", {"file": "key.txt", "root": "scratch"})), Reply.answer("x"))
    r = run(f, env)
    assert r.returncode == 2 and "symbolic link" in r.stderr
    assert "never show this" not in json.dumps(server.bodies())
