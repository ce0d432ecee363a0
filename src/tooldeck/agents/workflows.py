"""Agent workflows: a named system instruction a run starts with.

Built-ins cover the seed's examples (``orchestrate`` plans and delegates with
agent_run); a project adds its own under ``[agents.workflows.<id>]`` with
``name``, ``description`` and ``prompt``.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

from tooldeck.agents.models import config_of
from tooldeck.core.errors import ErrorCode, ToolError

if TYPE_CHECKING:
    from tooldeck.runtime import Runtime

BASE = (
    "You are a tooldeck agent working in the user's workspace with its tools (read, search, edit, git). "
    "Work step by step, use tools to check facts instead of guessing, and end with a concise answer "
    "saying what you did and found. If a decision is genuinely the user's, call ask_user."
)


@dataclass(frozen=True)
class Workflow:
    id: str
    name: str
    description: str
    prompt: str


BUILTIN = (
    Workflow("explore", "Explore", "Investigate the code and answer; no edits.",
             "Only read and search; do not modify files. Report findings with file paths and line numbers."),
    Workflow("engineer", "Engineer", "Implement a change and verify it.",
             "Make the change with apply_patch or apply_edits, then re-read what you changed to verify it."),
    Workflow("review", "Review", "Review the uncommitted changes.",
             "Use git op=diff to see the changes, then list concrete problems with file:line and a fix for each."),
    Workflow("orchestrate", "Orchestrate", "Plan, decompose and delegate to sub-agents.",
             "Plan the task, split it into independent parts, start one sub-agent per part with agent_run "
             "op=start detach=true, wait for them with op=wait session_ids=[...], then combine their results."),
)  # fmt: skip


def all_workflows(rt: Runtime) -> list[Workflow]:
    out = list(BUILTIN)
    table = config_of(rt).section("agents").get("workflows")
    if isinstance(table, dict):
        for wid, spec in table.items():
            if isinstance(spec, dict) and spec.get("prompt"):
                out = [w for w in out if w.id != wid]
                out.append(Workflow(str(wid), str(spec.get("name") or wid), str(spec.get("description") or ""),
                                    str(spec["prompt"])))  # fmt: skip
    return out


def find(rt: Runtime, ref: str | None) -> Workflow | None:
    if ref is None:
        return None
    for w in all_workflows(rt):
        if ref in (w.id, w.name) or ref.lower() == w.name.lower():
            return w
    known = ", ".join(w.id for w in all_workflows(rt))
    raise ToolError(ErrorCode.NOT_FOUND, f"no workflow {ref!r}; available: {known} (agent_manage op=list_workflows)",
                    {"fields": ["workflow_id"]})  # fmt: skip


def system_prompt(rt: Runtime, workflow_id: str | None) -> str:
    wf = find(rt, workflow_id) if workflow_id else None
    return BASE if wf is None else f"{BASE}\n\nWorkflow {wf.name}: {wf.prompt}"
