"""``python -m tooldeck run FILE.chatmd`` end to end against the scripted server.

The runner is a subprocess, as a person runs it; the model is the scripted
OpenAI-compatible server on 127.0.0.1; the tools are tooldeck's own.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from tests.support.interrupt import interrupt_when
from tests.support.openai_server import Reply, ScriptedOpenAI
from tooldeck.chatmd.conversation import items_of
from tooldeck.chatmd.document import load
from tooldeck.chatmd.runner import run_file
from tooldeck.llm.types import FunctionCall, FunctionResult, Message


@pytest.fixture
def work(tmp_path: Path) -> Path:
    d = tmp_path / "work"
    d.mkdir()
    (d / "a.txt").write_text("alpha\n")
    (d / "b.txt").write_text("beta\n")
    return d


def env_for(server: ScriptedOpenAI, tmp: Path) -> dict[str, str]:
    cfg = tmp / "config.toml"
    cfg.write_text("[models]\nmax_retries = 1\nbackoff_seconds = 0.05\n")
    return {
        **os.environ,
        "OPENAI_BASE_URL": server.url,
        "OPENAI_API_KEY": "test-key",
        "TOOLDECK_STATE_DIR": str(tmp / "state"),
        "TOOLDECK_CONFIG": str(cfg),
        "COLUMNS": "200",
    }


def ctrl_c_run(f: Path, work: Path, server: ScriptedOpenAI) -> tuple[int, str, str, bool]:
    """`tooldeck run f`, interrupted once the model has been asked twice."""
    cmd = [sys.executable, "-m", "tooldeck", "run", str(f)]
    return interrupt_when(cmd, lambda: len(server.requests) >= 2, cwd=work, env=env_for(server, work.parent))


def run(file: Path, server: ScriptedOpenAI, *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "tooldeck", "run", str(file), *args],
        cwd=file.parent,
        env=env_for(server, file.parent.parent),
        capture_output=True,
        text=True,
        timeout=60,
    )


class Ran:
    def __init__(self, returncode: int, stdout: str, stderr: str) -> None:
        self.returncode, self.stdout, self.stderr = returncode, stdout, stderr


def run_here(file: Path, server: ScriptedOpenAI, monkeypatch, capsys, *, parallel: bool = True) -> Ran:  # type: ignore[no-untyped-def]
    """The same runner in this process (the import of ``openai`` dominates a
    subprocess's time on a loaded machine; the subprocess tests cover the CLI)."""
    for key, value in env_for(server, file.parent.parent).items():
        if key.startswith(("OPENAI_", "TOOLDECK_")):
            monkeypatch.setenv(key, value)
    monkeypatch.chdir(file.parent)
    capsys.readouterr()
    code = run_file(file, parallel=parallel)
    out = capsys.readouterr()
    return Ran(code, out.out, out.err)


PROMPT = """<config model="test-model"/>
<tool name="read_file"/>
<system>You are terse.</system>
<user>
What do a.txt & b.txt say?
</user>
"""


def test_run_appends_transcript_with_payload_files_and_resumes(
    work: Path, server: ScriptedOpenAI, monkeypatch, capsys
) -> None:  # type: ignore[no-untyped-def]
    f = work / "chat.chatmd"
    f.write_text(PROMPT)
    server.push(
        Reply.call(("read_file", {"file": "a.txt"}), ("read_file", {"file": "b.txt"}), text="Reading."),
        Reply.answer("a says alpha, b says beta", reasoning="both files read"),
    )
    r = run(f, server)
    assert r.returncode == 0, r.stderr
    assert "a says alpha, b says beta" in r.stdout and "→ read_file" in r.stdout and "tokens: input 22" in r.stdout
    text = f.read_text()
    assert text.startswith(PROMPT)
    items = items_of(load(f))
    calls = [i for i in items if isinstance(i, FunctionCall)]
    results = [i for i in items if isinstance(i, FunctionResult)]
    assert [json.loads(c.arguments)["file"] for c in calls] == ["a.txt", "b.txt"]
    assert [("alpha" in r.output, "beta" in r.output) for r in results] == [(True, False), (False, True)]
    assert isinstance(items[-1], Message) and items[-1].text == "a says alpha, b says beta"
    payloads = sorted(p.name for p in (work / ".chatmd" / "chat").iterdir())
    assert len(payloads) == 4 and all(p.endswith((".call.json", ".result.txt")) for p in payloads)
    assert '<doc src=".chatmd/chat/' in text and "<reasoning>" in text and "both files read" in text
    # the model saw the tool results on its second call
    second = server.requests[1]["body"]["messages"]
    assert [m["role"] for m in second] == ["system", "user", "assistant", "tool", "tool"]

    # nothing new to answer: no model call
    r = run_here(f, server, monkeypatch, capsys)
    assert r.returncode == 0 and "nothing to do" in r.stdout and len(server.requests) == 2

    # a new user turn resumes the whole conversation
    f.write_text(f.read_text() + "<user>\nAnd in one word?\n</user>\n")
    server.push(Reply.answer("alphabeta"))
    r = run_here(f, server, monkeypatch, capsys)
    assert r.returncode == 0, r.stderr
    third = server.requests[2]["body"]["messages"]
    assert [m["role"] for m in third] == ["system", "user", "assistant", "tool", "tool", "assistant", "user"]
    assert third[3]["content"].endswith("alpha") and third[-1]["content"] == "And in one word?"
    assert f.read_text().rstrip().endswith("<assistant>\nalphabeta\n</assistant>")


def test_show_tool_call_inlines_payloads_and_responses_api(work: Path, server: ScriptedOpenAI) -> None:
    f = work / "inline.chatmd"
    f.write_text('<config model="m" api="responses" stream="false" show_tool_call/>\n<tool name="read_dir"/>\n'
                 "<user>list</user>\n")  # fmt: skip
    server.push(Reply.call(("read_directory", {"path": "."})), Reply.answer("two <txt> files & more"))
    r = run(f, server, "--no-parallel-tool-calls")
    assert r.returncode == 0, r.stderr
    assert server.requests[0]["path"].endswith("/responses")
    assert server.requests[0]["body"]["parallel_tool_calls"] is False
    assert server.requests[0]["body"]["stream"] is False
    text = f.read_text()
    assert not (work / ".chatmd").exists()
    assert '<tool_call function_name="read_directory"' in text and '{"path": "."}' in text
    assert "a.txt\nb.txt" in text
    assert "RAW|two <txt> files & more|RAW" in text
    assert items_of(load(f))[-1] == Message("assistant", "two <txt> files & more")


def test_load_error_names_line_and_column_and_calls_no_model(work: Path, server: ScriptedOpenAI) -> None:
    f = work / "bad.chatmd"
    f.write_text('<config model="m"/>\n<user>hi</user>\n  <tool name="read_fil"/>\n')
    r = run(f, server)
    assert r.returncode == 2
    assert f"{f}:3:3: unknown built-in tool 'read_fil'" in " ".join(r.stderr.split())
    assert server.requests == []


@pytest.mark.parametrize(
    ("replies", "expected"),
    [
        ([Reply.error(401, "Incorrect API key provided")], ["401", "OPENAI_API_KEY", "not shown"]),
        ([Reply.error(500, "boom"), Reply.error(503, "boom")], ["503 server error", "2 attempts"]),
        ([Reply.error(429, "quota", headers={"retry-after": "0"})] * 2, ["429 rate limited"]),
        ([Reply(calls=[("c1", "", "{}")])], ["without a function name"]),
    ],
    ids=["401", "5xx", "429", "malformed"],
)
def test_model_errors_are_clear_and_leave_the_file_unchanged(  # type: ignore[no-untyped-def]
    work: Path, server: ScriptedOpenAI, replies: list[Reply], expected: list[str], monkeypatch, capsys
) -> None:
    f = work / "err.chatmd"
    f.write_text(PROMPT)
    server.push(*replies)
    r = run_here(f, server, monkeypatch, capsys)
    assert r.returncode == 1, r.stdout + r.stderr
    flat = " ".join(r.stderr.split())
    for piece in expected:
        assert piece in flat
    assert f.read_text() == PROMPT


def test_error_after_tool_calls_keeps_them_and_resumes(work: Path, server: ScriptedOpenAI, monkeypatch, capsys) -> None:  # type: ignore[no-untyped-def]
    f = work / "mid.chatmd"
    f.write_text(PROMPT)
    server.push(Reply.call(("read_file", {"file": "a.txt"})), Reply.error(401, "key revoked"))
    r = run_here(f, server, monkeypatch, capsys)
    assert r.returncode == 1 and "401 from" in r.stderr and "key revoked" not in r.stderr  # a loopback body: never
    items = items_of(load(f))
    assert isinstance(items[-1], FunctionResult) and "alpha" in items[-1].output
    server.push(Reply.answer("alpha it is"))
    r = run_here(f, server, monkeypatch, capsys)
    assert r.returncode == 0, r.stderr
    assert [m["role"] for m in server.requests[-1]["body"]["messages"]] == ["system", "user", "assistant", "tool"]
    assert items_of(load(f))[-1] == Message("assistant", "alpha it is")


def test_invalid_json_arguments_go_back_to_the_model_as_a_tool_error(
    work: Path, server: ScriptedOpenAI, monkeypatch, capsys
) -> None:  # type: ignore[no-untyped-def]
    f = work / "json.chatmd"
    f.write_text(PROMPT)
    server.push(Reply.call(("read_file", '{"file": "a.txt"')), Reply.answer("sorry"))
    r = run_here(f, server, monkeypatch, capsys)
    assert r.returncode == 0, r.stderr
    tool_msg = server.requests[1]["body"]["messages"][-1]
    assert tool_msg["role"] == "tool" and "invalid_arguments" in tool_msg["content"]
    assert "✗ read_file" in r.stdout


def test_ctrl_c_leaves_the_file_valid_and_resumable(work: Path, server: ScriptedOpenAI) -> None:
    f = work / "int.chatmd"
    f.write_text(PROMPT)
    server.push(Reply.call(("read_file", {"file": "a.txt"})))
    slow = Reply.answer("too late")
    slow.delay = 30
    server.push(slow)
    code, _out, err, ready = ctrl_c_run(f, work, server)
    assert ready and len(server.requests) == 2
    assert code == 130, err
    assert "interrupted" in err
    items = items_of(load(f))
    assert isinstance(items[-1], FunctionResult) and "alpha" in items[-1].output
    assert not list(work.glob(".int.chatmd.*.tmp"))


def test_a_call_without_response_is_answered_interrupted_on_resume(  # type: ignore[no-untyped-def]
    work: Path, server: ScriptedOpenAI, monkeypatch, capsys
) -> None:
    f = work / "dangling.chatmd"
    f.write_text(
        PROMPT + '<tool_call function_name="read_file" tool_call_id="c9">\n{"file": "a.txt"}\n</tool_call>\n'
        '<tool_call function_name="read_file" tool_call_id="c10">\n{"file": "b.txt"}\n</tool_call>\n'
        '<tool_response tool_call_id="c10">\nbeta\n</tool_response>\n'
    )
    server.push(Reply.answer("retrying later"))
    r = run_here(f, server, monkeypatch, capsys)
    assert r.returncode == 0, r.stderr
    msgs = server.requests[0]["body"]["messages"]
    assert [m["role"] for m in msgs] == ["system", "user", "assistant", "tool", "tool"]
    assert [tc["id"] for tc in msgs[2]["tool_calls"]] == ["c9", "c10"]
    assert msgs[3]["content"] == "beta" and msgs[4]["tool_call_id"] == "c9"
    assert "interrupted" in msgs[4]["content"]


def test_response_to_an_unknown_call_is_a_load_error(work: Path, server: ScriptedOpenAI, monkeypatch, capsys) -> None:  # type: ignore[no-untyped-def]
    f = work / "orphan.chatmd"
    f.write_text(PROMPT + '<tool_response tool_call_id="zz">\nx\n</tool_response>\n')
    r = run_here(f, server, monkeypatch, capsys)
    assert r.returncode == 2 and ":7:1: <tool_response> answers 'zz'" in " ".join(r.stderr.split())


@pytest.mark.parametrize("api", ["chat", "responses"])
def test_config_reaches_the_request(work: Path, server: ScriptedOpenAI, monkeypatch, capsys, api: str) -> None:  # type: ignore[no-untyped-def]
    f = work / "cfg.chatmd"
    f.write_text(
        f'<config model="m7" max_tokens="300" temperature="0.5" reasoning_effort="high" api="{api}"/>\n'
        "<user>hi</user>\n"
    )
    server.push(Reply.answer("hello"))
    assert run_here(f, server, monkeypatch, capsys).returncode == 0
    body = server.requests[0]["body"]
    assert (body["model"], body["temperature"], body["stream"]) == ("m7", 0.5, True)
    if api == "chat":
        assert body["max_completion_tokens"] == 300 and body["reasoning_effort"] == "high"
        assert "tools" not in body
    else:
        assert body["max_output_tokens"] == 300 and body["reasoning"]["effort"] == "high"


def test_ctrl_c_while_a_tool_runs_keeps_the_call_and_resumes(  # type: ignore[no-untyped-def]
    work: Path, server: ScriptedOpenAI, monkeypatch, capsys
) -> None:
    f = work / "tool_int.chatmd"
    f.write_text('<config model="m"/>\n<tool name="fork"/>\n<user>go</user>\n')
    server.push(Reply.call(("fork", {"input": "slow work"})))
    slow = Reply.answer("never seen")
    slow.delay = 30
    server.push(slow)
    code, _out, err, _ready = ctrl_c_run(f, work, server)
    assert code == 130, err
    items = items_of(load(f))
    assert isinstance(items[-1], FunctionResult) and "interrupted" in items[-1].output  # the call was kept
    server.push(Reply.answer("resumed"))
    r = run_here(f, server, monkeypatch, capsys)
    assert r.returncode == 0, r.stderr
    assert "interrupted" in server.requests[-1]["body"]["messages"][-1]["content"]
    assert items_of(load(f))[-1] == Message("assistant", "resumed")


def test_lone_surrogate_in_model_text_is_written_as_an_escape(  # type: ignore[no-untyped-def]
    work: Path, server: ScriptedOpenAI, monkeypatch, capsys
) -> None:
    f = work / "sur.chatmd"
    f.write_text('<config model="m" stream="false"/>\n<user>hi</user>\n')
    server.push(Reply.answer("bad \ud800 char"))
    r = run_here(f, server, monkeypatch, capsys)
    assert r.returncode == 0, r.stderr
    assert items_of(load(f))[-1] == Message("assistant", "bad \\ud800 char")
