"""The control snapshot of a session (seed 004 field names and status values).

A live run in this process is the truth while it exists; otherwise the
stored row is. A session that never ran (created, not started) has no
control snapshot: status ``expired``, as the seed defines it.
"""

from __future__ import annotations

from typing import Any

from tooldeck.agents.run import Run
from tooldeck.state.agent_sessions import SessionRow

STATUSES = ("running", "waiting_for_input", "completed", "failed", "cancelled", "expired")


def snapshot_of(row: SessionRow, run: Run | None) -> dict[str, Any]:
    if run is not None:
        status, text, answer = run.status, run.status_text, run.assistant_text
        reason, count = run.failure_reason, run.item_count
        interaction = run.interaction.to_dict() if run.interaction is not None else None
    else:
        status = row.status if row.status in STATUSES else "expired"
        text, answer, reason, count, interaction = row.status_text, row.assistant_text, row.failure_reason, \
            row.item_count, None  # fmt: skip
        if row.status == "idle":
            text = text or "no run yet: start one with agent_run op=steer"
    snap: dict[str, Any] = {
        "session_id": row.id,
        "status": status,
        "status_text": text,
        "assistant_text": answer,
        "transcript_item_count": count,
        "session": {"id": row.id, "name": row.name, "tab_id": row.tab_id, "parent_session_id": row.parent_session_id},
        "agent": {"id": row.agent_id or "default", "name": row.agent_id or "default", "model": row.model},
    }
    if status in ("failed", "cancelled"):
        snap["failure_reason"] = reason or ("cancelled" if status == "cancelled" else "agent_error")
    if interaction is not None:
        snap["interaction"] = interaction
        snap["interaction_id"] = interaction["id"]
    if row.workflow:
        snap["workflow_id"] = row.workflow
    if row.workspace:
        snap["workspace"] = row.workspace
    if run is not None:  # live detail for a client that follows the run (the chat TUI)
        snap["version"] = run.version
        snap["live"] = {"text": run.live_text, "reasoning": run.live_reasoning}
        if run.usage_known:
            snap["usage"] = {"input_tokens": run.usage.input_tokens, "output_tokens": run.usage.output_tokens}
    return snap


def render(snap: dict[str, Any]) -> str:
    """A short text form of a snapshot for the model (the JSON is in structuredContent)."""
    lines = [f"session {snap['session_id']} ({snap['session']['name']}): {snap['status']}"]
    if snap.get("status_text"):
        lines.append(f"status_text: {snap['status_text']}")
    if snap.get("failure_reason"):
        lines.append(f"failure_reason: {snap['failure_reason']}")
    if snap.get("interaction"):
        i = snap["interaction"]
        extra = f" (responses: {', '.join(i['responses'])})" if i.get("responses") else ""
        lines.append(f"interaction {i['id']} [{i['kind']}]: {i['prompt']}{extra}")
    lines.append(f"transcript items: {snap['transcript_item_count']}")
    if snap.get("assistant_text"):
        lines.append("assistant_text:\n" + snap["assistant_text"])
    return "\n".join(lines)
