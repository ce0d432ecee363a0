"""context_builder: select the files relevant to a task within a token budget.

Offline by default (see :mod:`tooldeck.context.builder`): retrieval, a
reference-graph rank and a budget fitter; the selection and the tab's prompt
are set, and the answer explains why each file is in and what was left out.

As RepoPrompt's: the build goes into a fresh compose tab (or the one named by
``tab``), never over the tab someone was working in. This connection is bound
to the built tab (as ``manage_workspaces create_tab`` binds by default), so
``workspace_context`` and ``manage_selection`` see the result; the
workspace's active tab (the person's) is left as it was. The answer names the
tab and its id.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Literal

from pydantic import Field

from tooldeck.agents.models import ENABLE_HINT, model_available
from tooldeck.core import Invocation, ToolInput, tool
from tooldeck.core.errors import ErrorCode, ToolError
from tooldeck.core.output import Output
from tooldeck.core.tool import Tool, run_blocking
from tooldeck.runtime import Runtime
from tooldeck.selection.service import selection_service
from tooldeck.settings import setting
from tooldeck.state.workspaces import workspace_service

if TYPE_CHECKING:
    from tooldeck.context.builder import BuildResult

MAX_OMITTED_SHOWN = 15


class ContextBuilderInput(ToolInput):
    instructions: str = Field(min_length=1, description="The task or question, as you would tell a colleague.")
    response_type: Literal["clarify", "question", "plan", "review"] = Field(
        "clarify",
        description="clarify: build the context only. question/plan/review: also answer with a model "
        "(needs a configured model; without one the context is built and returned).",
    )
    budget: int | None = Field(None, ge=1000, le=2_000_000, description="Token budget for the selected files.")
    tab: str | None = Field(
        None,
        max_length=100,
        description="Tab id or name to build into (a tab of that name is created when none exists); default: a "
        "fresh tab. The current tab's selection and prompt are never overwritten.",
    )


def _default_budget(rt: Runtime) -> int:
    return int(setting(rt, "context_builder.default_budget"))


def render_result(result: BuildResult, rt: Runtime, tab: str = "") -> str:
    chosen, omitted = result.selected, result.omitted
    secs = result.timings.get("total", 0.0)
    lines = [
        f"context_builder: {len(chosen)} files selected, {result.total_tokens:,} of {result.budget:,} tokens "
        f"({secs:.1f}s, offline)"
    ]
    for c in chosen:
        where = ""
        if c.mode == "slices":
            where = " L" + ", L".join(r.label() for r in c.ranges)
        lines.append(f"{c.mode:<8} {c.candidate.shown}{where}  ({c.tokens:,} tokens)  {c.why}")
    if omitted:
        shown = ", ".join(c.candidate.shown for c in omitted[:MAX_OMITTED_SHOWN])
        more = f" and {len(omitted) - MAX_OMITTED_SHOWN} more" if len(omitted) > MAX_OMITTED_SHOWN else ""
        lines.append(f"left out ({len(omitted)}, lower ranked, no room in the budget): {shown}{more}")
    for note in result.notes:
        lines.append(f"note: {note}")
    where = f" in {tab}" if tab else ""
    lines.append(
        f"The selection and the prompt are set{where}: read them with workspace_context, adjust with manage_selection."
    )
    return "\n".join(lines)


def _tab_for(rt: Runtime, args: ContextBuilderInput) -> tuple[str, str, str]:
    """Bind this connection to the tab the build goes into: the named one
    (created when no tab has that name), else a fresh one named after the
    task. (tab id, tab name, the name of the tab it worked in before)."""
    svc = workspace_service(rt)
    cur = svc.current()
    auto = bool(setting(rt, "code_maps.auto_codemap"))
    if args.tab is not None:
        try:
            tab = svc.select_tab(args.tab, focus=False)
        except ToolError as exc:
            if exc.code != ErrorCode.NOT_FOUND:
                raise
            tab = svc.create_tab(args.tab, mode="blank", source_tab=None, bind=True, focus=False, auto_codemaps=auto)
        return tab.id, tab.name, cur.tab.name
    base = "Context: " + " ".join(args.instructions.split())[:60]
    for n in range(1, 100):
        try:
            name = base if n == 1 else f"{base} ({n})"
            tab = svc.create_tab(name, mode="blank", source_tab=None, bind=True, focus=False, auto_codemaps=auto)
            return tab.id, tab.name, cur.tab.name
        except ToolError as exc:
            if exc.code != ErrorCode.ALREADY_EXISTS:
                raise
    tab = svc.create_tab(None, mode="blank", source_tab=None, bind=True, focus=False, auto_codemaps=auto)
    return tab.id, tab.name, cur.tab.name


def _build(rt: Runtime, args: ContextBuilderInput, invocation: Invocation) -> tuple[str, dict[str, str]]:
    # lazy: the context pipeline (~60 modules, ~145 ms: codemap pool, multiprocessing) waits for a first build
    from tooldeck.context.builder import context_builder_service

    budget = args.budget or _default_budget(rt)
    tab_id, tab_name, before = _tab_for(rt, args)
    result = context_builder_service(rt).build(
        args.instructions,
        budget,
        progress=lambda m: invocation.emit_text("activity", m, replace=True),
        check=invocation.check_cancelled,  # a cancelled call (or dropped connection) stops the build
    )
    selection_service(rt).set_prompt(args.instructions)
    kept = f"; tab {before!r} is unchanged" if before != tab_name else ""
    where = f"tab {tab_name!r} [tab_id {tab_id}], which this connection now works on{kept}"
    return render_result(result, rt, where), {"tab_id": tab_id, "tab": tab_name}


def tools(rt: Runtime) -> list[Tool]:
    async def context_builder(args: ContextBuilderInput, invocation: Invocation) -> Output:
        text, tab = await run_blocking(_build, rt, args, invocation)
        if args.response_type == "clarify":
            return Output.text(text, structured=tab)
        if not await run_blocking(model_available, rt):
            return Output.text(
                text + f"\n[response_type={args.response_type}: no model is configured, so only the context was "
                f"built; answer from workspace_context. To enable the model pass, {ENABLE_HINT}]",
                structured=tab,
            )
        # lazy: the model pass (the model loop, a chat) loads only for question/plan/review
        from tooldeck.agents.context_pass import answer

        invocation.emit_text("activity", f"model pass ({args.response_type})", replace=True)
        res = await answer(rt, args.instructions, args.response_type)
        text += (f"\n\n## Answer ({args.response_type}, {res.tool_calls} tool calls)\n\n{res.answer}\n\n"
                 f"(continue with chat_send chat_id={res.chat_id})")  # fmt: skip
        return Output.text(text, structured={**tab, "chat_id": res.chat_id, "answer": res.answer})

    return [
        tool(
            context_builder,
            description="Select the files relevant to a task within a token budget, offline: retrieval and a "
            "reference-graph rank, then each file fitted as full, slices or codemap. Builds into a fresh tab (or "
            "`tab`), sets its selection and prompt, and explains each choice.",
        )
    ]
