"""``ask``: the host's approver decides; scopes once and session; nobody to ask = deny.

The terminal prompt is driven through its input stream (the host's input),
the thing under test being what the shell service does with the answer."""

from __future__ import annotations

import asyncio
import io
from dataclasses import replace
from pathlib import Path

from tests.shell.shell_harness import DENY_RM, Shell, dev_runtime, needs_bwrap
from tooldeck.core.toolbox import ToolResult
from tooldeck.shell.approval import ApprovalAnswer, ApprovalRequest, TerminalApprover, approver_scope
from tooldeck.shell.profiles import Policy, Rule
from tooldeck.shell.spec import ShellToolSpec

pytestmark = needs_bwrap


def asking_shell(root: Path, state: Path) -> Shell:
    rt = replace(dev_runtime(), policy=Policy(default="ask", rules=(Rule("echo", "allow", basename="echo"), DENY_RM)))
    spec = ShellToolSpec(name="sh", mode="structured", runtime=rt.id, rationale="optional")
    return Shell(root, state).add(spec, rt)


def call_with(shell: Shell, approver: object, args: dict) -> ToolResult:
    async def go() -> ToolResult:
        with approver_scope(approver):  # type: ignore[arg-type]
            return await shell.box.call("sh", args)

    return asyncio.run(go())


def test_terminal_yes_runs_once(root: Path, state_dir: Path) -> None:
    s = asking_shell(root, state_dir)
    out = io.StringIO()
    term = TerminalApprover(io.StringIO("y\n"), out)
    res = call_with(s, term, {"program": "touch", "arguments": ["made"], "rationale": "create a marker"})
    assert not res.is_error, res.text
    assert (root / "made").exists()
    prompt = out.getvalue()
    assert "touch made" in prompt and "create a marker" in prompt and "no rule matches" in prompt
    # once means once: the next identical request asks again (and an empty answer denies)
    res = call_with(s, TerminalApprover(io.StringIO(""), io.StringIO()), {"program": "touch", "arguments": ["made"]})
    assert res.is_error and res.error is not None and res.error.code == "denied"


def test_terminal_no_denies(root: Path, state_dir: Path) -> None:
    s = asking_shell(root, state_dir)
    res = call_with(s, TerminalApprover(io.StringIO("n\n"), io.StringIO()), {"program": "touch", "arguments": ["x"]})
    assert res.is_error and res.error is not None and res.error.code == "denied" and "declined" in res.error.message
    assert not (root / "x").exists()


def test_session_scope_is_remembered_per_command(root: Path, state_dir: Path) -> None:
    s = asking_shell(root, state_dir)
    first = io.StringIO()
    res = call_with(s, TerminalApprover(io.StringIO("s\n"), first), {"program": "touch", "arguments": ["a"]})
    assert not res.is_error
    silent = io.StringIO()
    res = call_with(s, TerminalApprover(io.StringIO(""), silent), {"program": "touch", "arguments": ["a"]})
    assert not res.is_error and silent.getvalue() == ""  # not asked again
    res = call_with(s, TerminalApprover(io.StringIO(""), io.StringIO()), {"program": "touch", "arguments": ["b"]})
    assert res.is_error  # another command is another question
    records = [r for r in s.service.audit.read() if r["event"] == "approval"]
    assert records[0]["scope"] == "session" and records[0]["by"] == "terminal"


def test_nobody_to_ask_means_deny(root: Path, state_dir: Path) -> None:
    s = asking_shell(root, state_dir)
    res = s.call("sh", {"program": "touch", "arguments": ["x"]})
    assert res.is_error and res.error is not None and res.error.code == "denied"
    assert "nobody can be asked" in res.error.message and not (root / "x").exists()
    assert not s.call("sh", {"program": "echo", "arguments": ["allowed"]}).is_error


def test_deny_wins_over_an_approver(root: Path, state_dir: Path) -> None:
    s = asking_shell(root, state_dir)
    asked: list[ApprovalRequest] = []

    class Always:
        async def approve(self, request: ApprovalRequest) -> ApprovalAnswer:
            asked.append(request)
            return ApprovalAnswer(True, "session")

    res = call_with(s, Always(), {"program": "rm", "arguments": ["x"]})
    assert res.is_error and res.error is not None and res.error.code == "denied" and not asked


def test_a_broken_approver_denies(root: Path, state_dir: Path) -> None:
    s = asking_shell(root, state_dir)

    class Broken:
        async def approve(self, request: ApprovalRequest) -> ApprovalAnswer:
            raise RuntimeError("tty gone")

    res = call_with(s, Broken(), {"program": "touch", "arguments": ["x"]})
    assert res.is_error and res.error is not None and res.error.code == "denied"
    assert not (root / "x").exists()
