"""Output shaping (bounded capture, escapes, UTF-8, redaction), result modes and the audit log."""

from __future__ import annotations

import tracemalloc
from dataclasses import replace
from pathlib import Path

import pytest

from tests.shell.shell_harness import Shell, dev_runtime, needs_bwrap
from tooldeck.shell.profiles import Environment, Secrets
from tooldeck.shell.shaping import Capture, Redactor, StreamDecoder, clean_text, render_capture
from tooldeck.shell.spec import ShellToolSpec


def test_capture_keeps_head_and_tail_in_constant_memory() -> None:
    cap = Capture(1000)
    cap.add(b"START\n")
    tracemalloc.start()
    block = b"y" * 65536
    for _ in range(1600):  # 100 MiB
        cap.add(block)
    _current, peak = tracemalloc.get_traced_memory()
    tracemalloc.stop()
    cap.add(b"\nEND\n")
    assert peak < 1_000_000  # the blocks themselves, not the stream
    assert cap.total == 6 + 1600 * 65536 + 5 and cap.truncated
    text = render_capture(cap, Redactor())
    assert text.startswith("START") and text.endswith("END\n") and "bytes elided" in text and len(text) < 1100


def test_escapes_and_controls_are_stripped() -> None:
    raw = "\x1b[31mred\x1b[0m \x1b]0;title\x07ok\r\nline2\rover\x08\x00 \x1b[2J\x1bc done"
    assert clean_text(raw) == "red ok\nline2\nover  done"


def test_invalid_utf8_is_repaired_and_split_characters_survive_streaming() -> None:
    dec = StreamDecoder(Redactor())
    data = "héllo €".encode()
    parts = [dec.feed(data[i : i + 1]) for i in range(len(data))]
    assert "".join(parts) == "héllo €"
    cap = Capture(100)
    cap.add(b"ok \xff\xfe bad")
    assert render_capture(cap, Redactor()) == "ok \ufffd\ufffd bad"


def test_redaction_of_values_and_patterns() -> None:
    red = Redactor(["hunter22", "x"], [r"sk-[A-Za-z0-9]{8,}"])
    assert red("pw=hunter22 key=sk-abcdefgh12 x") == "pw=[REDACTED] key=[REDACTED] x"  # 1-char values are not secrets


@needs_bwrap
def test_secrets_from_the_environment_are_redacted(
    root: Path, state_dir: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("API_TOKEN", "tok-very-secret-123")
    monkeypatch.setenv("OTHER_VAR", "should-not-pass")
    rt = replace(dev_runtime(), secrets=Secrets(env=("API_TOKEN",), patterns=(r"AKIA[0-9A-Z]{16}",)),
                 environment=Environment(inherit=("LANG",), set=(("MODE", "test"),)))  # fmt: skip
    s = Shell(root, state_dir).add(ShellToolSpec(name="env", mode="structured", runtime=rt.id), rt)
    text = s.call("env", {"program": "env"}).text
    assert "API_TOKEN=[REDACTED]" in text and "tok-very-secret" not in text
    assert "OTHER_VAR" not in text and "MODE=test" in text and "HOME=/tmp" in text
    text = s.call("env", {"program": "echo", "arguments": ["AKIAABCDEFGHIJKLMNOP"]}).text
    assert "AKIA" not in text and "[REDACTED]" in text


@needs_bwrap
def test_result_modes(root: Path, state_dir: Path) -> None:
    rt = dev_runtime()
    s = Shell(root, state_dir)
    for mode in ("combined", "stdout", "structured"):
        s.add(ShellToolSpec(name=f"r_{mode}", mode="chain", runtime=rt.id, result=mode), rt)  # type: ignore[arg-type]
    cmd = {"command": 'python3 -c \'import sys; print("out"); print("err", file=sys.stderr); sys.exit(3)\''}
    combined = s.call("r_combined", cmd).text
    assert "out" in combined and "err" in combined and "[exit 3" in combined
    stdout = s.call("r_stdout", cmd).text
    assert stdout.startswith("out\n") and "[stderr]\nerr" in stdout  # stderr shown because it failed
    res = s.call("r_structured", cmd)
    data = res.output.structured if res.output else None
    assert data is not None and data["exit_code"] == 3 and data["stdout"] == "out\n" and data["stderr"] == "err\n"
    assert data["truncated"] == {"stdout": False, "stderr": False} and data["signal"] is None
    assert isinstance(data["duration_ms"], float)


@needs_bwrap
def test_audit_log_records_requests_and_decisions(shell: Shell, state_dir: Path) -> None:
    shell.call("sh", {"program": "echo", "arguments": ["hi"]})
    shell.call("sh", {"program": "rm", "arguments": ["x"]})
    records = shell.service.audit.read()
    events = [(r["event"], r.get("action")) for r in records]
    assert events == [("request", None), ("decision", "allow"), ("result", None), ("request", None),
                      ("decision", "deny")]  # fmt: skip
    assert records[1]["resolved"] == ["/usr/bin/echo"] and records[2]["exit_code"] == 0
    assert records[4]["rules"] == ["no-rm"] and records[3]["command"] == "rm x"
    assert (state_dir / "shell-audit.jsonl").stat().st_mode & 0o077 == 0  # not readable by others


def test_chain_refusals_are_audited(shell: Shell) -> None:
    shell.call("ch", {"command": "echo $(id)"})
    records = shell.service.audit.read()
    assert [r["event"] for r in records] == ["request", "decision"]
    assert records[1]["action"] == "deny" and "substitution" in records[1]["reason"]


@needs_bwrap
def test_a_root_inside_the_state_directory_stays_visible(tmp_path: Path) -> None:
    state = tmp_path / "state"
    root = state / "project"
    root.mkdir(parents=True)
    (root / "f.txt").write_text("visible\n")
    (state / "db").write_text("hidden\n")
    rt = dev_runtime()
    s = Shell(root, state).add(ShellToolSpec(name="sh", mode="structured", runtime=rt.id, result="structured"), rt)
    out = s.structured("sh", {"program": "cat", "arguments": ["f.txt", str(state / "db")]})
    assert out["stdout"] == "visible\n" and "hidden" not in out["stdout"]
