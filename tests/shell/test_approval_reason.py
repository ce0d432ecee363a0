"""A person who declines a shell ``ask`` can say why, and the model reads it
(the chat TUI's "decline with a reason"); nothing runs."""

from __future__ import annotations

import asyncio
from dataclasses import replace
from pathlib import Path

from tests.shell.shell_harness import DENY_RM, Shell, dev_runtime, needs_bwrap
from tooldeck.shell.approval import ApprovalAnswer, ApprovalRequest, approver_scope
from tooldeck.shell.profiles import Policy
from tooldeck.shell.spec import ShellToolSpec

pytestmark = needs_bwrap


class Declines:
    def __init__(self, reason: str | None) -> None:
        self.reason = reason
        self.asked: list[ApprovalRequest] = []

    async def approve(self, request: ApprovalRequest) -> ApprovalAnswer:
        self.asked.append(request)
        return ApprovalAnswer(False, "once", "test", reason=self.reason)


def _call(root: Path, state: Path, approver: Declines) -> tuple[bool, str, str]:
    rt = replace(dev_runtime(), policy=Policy(default="ask", rules=(DENY_RM,)))
    shell = Shell(root, state).add(ShellToolSpec(name="sh", mode="structured", runtime=rt.id), rt)

    async def go():  # type: ignore[no-untyped-def]
        with approver_scope(approver):
            return await shell.box.call("sh", {"program": "touch", "arguments": ["made"]})

    res = asyncio.run(go())
    assert res.error is not None
    return res.is_error, res.error.code, res.error.message


def test_the_reason_reaches_the_model(root: Path, state_dir: Path) -> None:
    approver = Declines("use the scratch folder instead")
    is_error, code, message = _call(root, state_dir, approver)
    assert approver.asked and is_error and code == "denied"
    assert "use the scratch folder instead" in message and "declined" in message
    assert not (root / "made").exists()


def test_no_reason_keeps_the_plain_message(root: Path, state_dir: Path) -> None:
    _, code, message = _call(root, state_dir, Declines("  "))
    assert code == "denied" and "()" not in message and "declined `touch made`;" in message
