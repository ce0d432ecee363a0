"""Agent tools (a prompt mounted as a tool) and ``fork`` (a branch of the current conversation).

An agent tool takes ``{input}``, runs its ``.chatmd`` prompt in a fresh
conversation (the prompt's own messages and tools, no inherited history) with
the same roots as its caller, and returns the final answer. ``fork`` runs the
caller's own conversation so far, plus the task, with the same tools and
model. Both forward the sub-conversation's progress (streamed text, nested
tool calls) through the calling Invocation, and both count nesting: a
sub-conversation deeper than :data:`MAX_DEPTH` is refused with
``depth_limit`` instead of recursing forever.

The prompt is loaded when the tool is called, not when it is declared, so a
prompt that mounts itself only fails when the depth runs out, and an edited
prompt is picked up on its next call (the MCP prompts server relies on it).

An agent's prompt is made ready by the session that runs it, and that session
may declare agents again: the recursion is by design, the import cycle is
not. So this module imports neither :mod:`tooldeck.chatmd.session` nor
:mod:`tooldeck.chatmd.declarations`: whoever makes an agent tool hands it the
session's ``prepare`` (a :class:`Prepare`): the declarations get it from
their :class:`~tooldeck.chatmd.declarations.LoadContext`, which
``session.prepare`` fills with itself; the entry passes it for a prompt the
MCP server serves as a tool.

An agent's prompt file is judged on its own bytes, read at each call
(:mod:`tooldeck.chatmd.grants`): it has authority only when the person
approved exactly those bytes, never from the file that declares it. A prompt
inside a root is read through the workspace; one outside the roots only when
the declaration had authority (``read_outside``).
"""

from __future__ import annotations

import json
import os
from collections.abc import Callable
from pathlib import Path
from typing import Protocol

from pydantic import Field

from tooldeck.chatmd import asks
from tooldeck.chatmd.document import Document, load
from tooldeck.chatmd.grants import AuthorityError, Grants, read_outside
from tooldeck.core import Invocation, ToolError, ToolInput, tool
from tooldeck.core.errors import ErrorCode
from tooldeck.core.tool import Tool
from tooldeck.core.toolbox import Toolbox
from tooldeck.llm.errors import ModelError
from tooldeck.llm.loop import current_branch, run_conversation
from tooldeck.llm.provider import Provider
from tooldeck.llm.settings import ModelConfig
from tooldeck.llm.types import (
    Event,
    Item,
    Message,
    ReasoningDelta,
    Retrying,
    TextDelta,
    ToolDone,
    ToolOutput,
    ToolStart,
)
from tooldeck.markup.element import ChatmdError, Element
from tooldeck.runtime import Runtime

MAX_DEPTH = 4
FORK_PREAMBLE = (
    "[fork] You are a branch forked from the conversation above, with the same tools. "
    "Do only the following task, then reply with its result (your reply is returned to the caller):\n\n"
)


class Prepared(Protocol):
    """What an agent runs of a prepared session (:class:`tooldeck.chatmd.session.Session`)."""

    items: list[Item]
    toolbox: Toolbox

    def provider(self) -> Provider: ...


class Prepare(Protocol):
    """A document made ready to run (:func:`tooldeck.chatmd.session.prepare`)."""

    def __call__(
        self, doc: Document, rt: Runtime, *, depth: int = 0, fallback: ModelConfig | None = None
    ) -> Prepared: ...


class AgentInput(ToolInput):
    input: str = Field(..., description="The task or question for the agent, with any context it needs.")


def forward(inv: Invocation) -> Callable[[Event], None]:
    """Sub-conversation events -> progress on the calling tool's invocation."""

    def on_event(event: Event) -> None:
        if isinstance(event, TextDelta):
            inv.emit_text("assistant", event.text)
        elif isinstance(event, ReasoningDelta):
            inv.emit_text("reasoning", event.text)
        elif isinstance(event, ToolStart):
            inv.emit_text("activity", f"→ {event.call.name} {_short(event.call.arguments)}\n")
        elif isinstance(event, ToolDone):
            mark = "✗" if event.result.is_error else "✓"
            inv.emit_text("activity", f"{mark} {event.result.name}\n")
        elif isinstance(event, ToolOutput) and event.channel in ("stdout", "stderr"):
            inv.emit_text(event.channel, event.text)
        elif isinstance(event, Retrying):
            inv.emit_text("activity", f"model busy ({event.status}); retrying in {event.wait_seconds:.1f}s\n")

    return on_event


def _short(arguments: str, limit: int = 120) -> str:
    try:
        text = json.dumps(json.loads(arguments), ensure_ascii=False)
    except (ValueError, TypeError):
        text = arguments
    return text if len(text) <= limit else text[: limit - 1] + "…"


def _level(depth: int) -> int:
    branch = current_branch()
    level = max(depth, branch.depth if branch is not None else 0) + 1
    if level > MAX_DEPTH:
        raise ToolError(
            ErrorCode.DEPTH_LIMIT,
            f"agents and forks nest at most {MAX_DEPTH} deep; finish this task here instead of delegating again",
        )
    return level


def read_prompt(path: Path, grants: Grants, *, outside: bool) -> bytes:
    """An agent prompt's bytes: through the workspace inside a root; outside
    the roots only when ``outside`` (the declaration had authority)."""
    el = Element("tool", {"agent": str(path)})
    if grants.inside(path) is not None:
        return grants.read(el, path, lambda real: asks.path(el, "agent", real))  # refuses a link swapped in since
    if not outside:
        raise ChatmdError(None, f"{path} resolves outside the workspace roots ({os.path.realpath(path)}); "
                          "a prompt declared without authority is read only inside the roots")  # fmt: skip
    return read_outside(el, Path(os.path.realpath(path)))


def agent_tool(
    prompt_path: str | os.PathLike[str],
    rt: Runtime,
    *,
    name: str,
    prepare: Prepare,
    description: str | None = None,
    depth: int = 0,
    read_outside: bool = False,
) -> Tool:
    """A Tool ``name({input})`` that runs the prompt at ``prompt_path`` and returns its answer.

    ``rt`` gives the roots (and state) the agent's built-ins use; ``prepare``
    makes the prompt ready at each call (the session's own, whose declarations
    may hold agents again); ``depth`` is the nesting level of the conversation
    that mounts it; ``read_outside``: the prompt may lie outside the roots
    (whoever named it had authority)."""
    path = Path(prompt_path).absolute()
    desc = description or (
        f"Agent {path.stem}: runs the prompt {path.name} on `input` in a fresh conversation "
        "(no shared history, the same files) and returns its final answer."
    )

    async def run_agent(args: AgentInput, inv: Invocation) -> str:
        level = _level(depth)
        branch = current_branch()
        grants = Grants(workspace=lambda: rt.workspace, state_dir=rt.state_dir)
        try:
            data = read_prompt(path, grants, outside=read_outside)
            doc = load(path, grants=grants, data=data)
            session = prepare(doc, rt, depth=level, fallback=branch.provider.config if branch else None)
        except AuthorityError as exc:
            raise ToolError(ErrorCode.DENIED, f"agent {name}: {exc}") from exc
        except ChatmdError as exc:
            raise ToolError(ErrorCode.PROMPT_ERROR, f"agent {name}: {exc}") from exc
        except ModelError as exc:
            raise ToolError(ErrorCode.MODEL_ERROR, f"agent {name}: {exc.message}") from exc
        provider = session.provider()
        try:
            result = await run_conversation(
                provider,
                [*session.items, Message("user", args.input)],
                session.toolbox,
                parallel=branch.parallel if branch is not None else True,
                on_event=forward(inv),
                depth=level,
            )
        except ModelError as exc:
            raise ToolError(ErrorCode.MODEL_ERROR, f"agent {name}: {exc.message}") from exc
        finally:
            await provider.aclose()
        return result.text or "(the agent gave no answer)"

    return tool(run_agent, name=name, description=desc, open_world=True)


class ForkInput(ToolInput):
    input: str = Field(..., description="The task for the branch; it sees this conversation and has the same tools.")


def fork_tool(*, description: str | None = None) -> Tool:
    """``fork({input})``: run a nested branch of the current conversation and return its answer."""

    async def fork(args: ForkInput, inv: Invocation) -> str:
        branch = current_branch()
        if branch is None:
            raise ToolError(
                ErrorCode.UNSUPPORTED, "fork only works inside a model conversation (tooldeck run, an agent)"
            )
        level = _level(branch.depth)
        try:
            result = await run_conversation(
                branch.provider,
                [*branch.history, Message("user", FORK_PREAMBLE + args.input)],
                branch.toolbox,
                opts=branch.opts,
                parallel=branch.parallel,
                on_event=forward(inv),
                depth=level,
            )
        except ModelError as exc:
            raise ToolError(ErrorCode.MODEL_ERROR, f"fork: {exc.message}") from exc
        return result.text or "(the branch gave no answer)"

    desc = description or (
        "Fork a nested branch of this conversation: it sees everything so far, has the same tools, "
        "does the task in `input` and returns its final answer. Use it for a self-contained subtask."
    )
    return tool(fork, name="fork", description=desc, open_world=True)
