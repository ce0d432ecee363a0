"""Asking the person over MCP: shell approvals (an ``ask`` becomes an
``elicitation/create`` request) and the one capability check every question
to the person goes through (:func:`can_elicit`, also used by
:mod:`tooldeck.mcp.person` for the trust boundary).

Why here (a host module): the shell service only knows the
:class:`~tooldeck.shell.approval.Approver` protocol; which way a person is
asked is the host's business. The server installs this approver for a call
only when the client declared the elicitation capability and the request's
channel can carry a server-initiated request; otherwise no approver is set
and the shell service denies (``ask`` with nobody to ask = deny).
"""

from __future__ import annotations

import logging
from typing import Any

import mcp_types as types

from tooldeck.shell.approval import ApprovalAnswer, ApprovalRequest, format_request

log = logging.getLogger("tooldeck.mcp")

DECISION_SCHEMA: dict[str, Any] = {
    "type": "object",
    "properties": {
        "decision": {
            "type": "string",
            "enum": ["once", "session", "deny"],
            "description": "once: allow this command now; session: allow it for the rest of this session; deny",
        }
    },
    "required": ["decision"],
}


def can_elicit(ctx: Any) -> bool:
    """The client of this call declared elicitation, and its channel can carry
    a server-initiated request (the one check both shell approvals and the
    trust boundary's questions use)."""
    session = getattr(ctx, "session", None)
    if session is None:
        return False
    try:
        wanted = types.ClientCapabilities(elicitation=types.ElicitationCapability())
        if not session.check_client_capability(wanted):
            return False
        return bool(getattr(session, "can_send_request", True))
    except Exception:  # a context without a real session (other hosts, tests)
        return False


class ElicitationApprover:
    """Asks the MCP client's user; anything but an accepted once/session is a denial."""

    def __init__(self, ctx: Any) -> None:
        self._ctx = ctx

    async def approve(self, request: ApprovalRequest) -> ApprovalAnswer:
        try:
            result = await self._ctx.session.elicit_form(
                format_request(request), DECISION_SCHEMA, related_request_id=self._ctx.request_id
            )
        except Exception:  # a client that fails to answer has not approved anything
            log.debug("elicitation failed", exc_info=True)
            return ApprovalAnswer(False, "once", "mcp-elicitation")
        decision = (result.content or {}).get("decision") if result.action == "accept" else None
        if decision in ("once", "session"):
            return ApprovalAnswer(True, decision, "mcp-elicitation")
        return ApprovalAnswer(False, "once", "mcp-elicitation")


def approver_for(ctx: Any) -> ElicitationApprover | None:
    return ElicitationApprover(ctx) if can_elicit(ctx) else None
