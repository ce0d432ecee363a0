"""Interactions: a running agent asks the person (or orchestrator) and waits.

Three kinds, as seed 004 names them: ``approval`` (before a destructive tool
call when the session's policy is ``ask``), ``question`` and ``user_input``
(the model-callable ``ask_user`` tool). The run publishes one pending
interaction in its snapshot (status ``waiting_for_input``) and awaits a
future that ``agent_run op=respond`` resolves. Why a future per interaction:
the run's task simply suspends; nothing polls, and cancel still works.
"""

from __future__ import annotations

import contextvars
import dataclasses
import json
from typing import Any, Literal

from pydantic import Field

from tooldeck.agents.run import APPROVAL_RESPONSES, Interaction, Run
from tooldeck.core import Invocation, ToolError, ToolInput, tool
from tooldeck.core.errors import ErrorCode
from tooldeck.core.tool import Tool
from tooldeck.shell.approval import ApprovalAnswer, ApprovalRequest, format_request

current_run: contextvars.ContextVar[Run | None] = contextvars.ContextVar("tooldeck_agent_run", default=None)


def check_response(kind: str, response: str | None, answers: dict[str, Any] | None, skip: bool) -> None:
    """Bad responses are refused before they reach the waiting run."""
    if kind == "approval":
        if response not in APPROVAL_RESPONSES:
            raise ToolError(
                ErrorCode.INVALID_ARGUMENTS,
                f"an approval takes response= one of {', '.join(APPROVAL_RESPONSES)}",
                {"fields": ["response"]},
            )
        return
    if response is None and answers is None and not skip:
        raise ToolError(
            ErrorCode.INVALID_ARGUMENTS,
            f"a {kind} takes response= (text) or answers= (object), or skip=true",
            {"fields": ["response", "answers"]},
        )


def gate(t: Tool) -> Tool:
    """``t`` asking for approval first when the calling run's policy is ``ask``."""
    inner = t.handler

    async def gated(typed: Any, inv: Invocation) -> Any:
        run = current_run.get()
        if run is not None and run.policy == "ask" and not run.approved_all:
            args = typed if isinstance(typed, str) else typed.model_dump(exclude_none=True)
            prompt = f"Allow {t.name}? {json.dumps(args, ensure_ascii=False)[:400]}"
            answer = await run.ask(Interaction("approval", prompt, {"tool": t.name}))
            decision = answer.get("response")
            if decision in ("decline", "cancel"):
                why = answer.get("reason") or "no reason given"
                if decision == "cancel":
                    run.cancel_soon()
                raise ToolError(ErrorCode.DENIED, f"the user declined this {t.name} call ({why}); do not retry it "
                                "unchanged: ask with ask_user or take another approach")  # fmt: skip
            if decision == "accept_for_session":
                run.approved_all = True
            if decision == "accept_with_amendment" and answer.get("amendment"):
                run.inject(f"[amendment to the approved {t.name} call] {answer['amendment']}")
        return await inner(typed, inv)

    return dataclasses.replace(t, handler=gated)


class RunApprover:
    """A shell ``ask`` inside a run becomes the run's ``approval`` interaction
    (answered by ``agent_run op=respond``, the dashboard or the chat TUI)
    instead of a denial for want of somebody to ask."""

    def __init__(self, run: Run) -> None:
        self.run = run

    async def approve(self, request: ApprovalRequest) -> ApprovalAnswer:
        details = {"tool": request.tool, "command": request.command, "kind": "shell"}
        answer = await self.run.ask(Interaction("approval", format_request(request), details))
        decision = answer.get("response")
        if decision in ("accept", "accept_with_amendment"):
            return ApprovalAnswer(True, "once", "agent-session")
        if decision == "accept_for_session":
            return ApprovalAnswer(True, "session", "agent-session")
        if decision == "cancel":
            self.run.cancel_soon()
        return ApprovalAnswer(False, "once", "agent-session", reason=answer.get("reason"))


class AskUserInput(ToolInput):
    question: str = Field(..., description="What you need to know, in one or two sentences.")
    kind: Literal["question", "user_input"] = Field(
        "question", description="question: a decision or fact; user_input: free text or data you need."
    )
    options: list[str] | None = Field(None, description="Suggested answers, if any.")


def ask_user_tool() -> Tool:
    async def ask_user(args: AskUserInput) -> str:
        run = current_run.get()
        if run is None:
            raise ToolError(ErrorCode.UNSUPPORTED, "ask_user only works inside an agent session")
        details = {"options": args.options} if args.options else {}
        answer = await run.ask(Interaction(args.kind, args.question, details))
        if answer.get("skip"):
            return "(the user skipped this question; decide yourself and say what you assumed)"
        if answer.get("answers") is not None:
            return json.dumps(answer["answers"], ensure_ascii=False)
        return str(answer.get("response") or "")

    return tool(
        ask_user,
        description="Ask the user a question and wait for the answer (an agent session pauses with "
        "status waiting_for_input until it is answered). Use it when a decision is genuinely theirs.",
    )
