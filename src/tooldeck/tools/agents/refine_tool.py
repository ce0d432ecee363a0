"""meta_refine (seed 000): a tool face over :mod:`tooldeck.agents.refine`."""

from __future__ import annotations

from pydantic import Field

from tooldeck.agents.refine import MAX_ROUNDS, refine
from tooldeck.core import ToolInput, tool
from tooldeck.core.errors import invalid_arguments
from tooldeck.core.output import Output
from tooldeck.core.tool import Tool
from tooldeck.runtime import Runtime


class MetaRefineInput(ToolInput):
    prompt: str = Field(..., description="The prompt to improve.")
    task: str = Field(..., description="What the prompt must make a model do (the grading criterion).")
    model: str | None = Field(None, description="A preset id or role (default: the default model).")
    max_rounds: int = Field(MAX_ROUNDS, ge=1, le=MAX_ROUNDS, description="At most this many rewrite rounds.")


def build(rt: Runtime) -> Tool:
    async def meta_refine(args: MetaRefineInput) -> Output:
        if not args.prompt.strip() or not args.task.strip():
            raise invalid_arguments("prompt and task must both be non-empty", fields=["prompt", "task"])
        out = await refine(rt, args.prompt, args.task, model=args.model, max_rounds=args.max_rounds)
        lines = [f"best score {out.best_score:g}/10 after {len(out.rounds) - 1} round(s), stopped: {out.stopped}"]
        for r in out.rounds:
            lines.append(f"round {r.round}: {r.score:g}{' kept' if r.kept else ''} - {r.critique[:160]}")
        lines += ["", "best prompt:", out.best, "", f"(the rounds are logged as chat {out.chat_id})"]
        return Output.text("\n".join(lines), structured=out.to_dict())

    return tool(meta_refine, description="Refine a prompt for a task: the model proposes rewrites and grades each "
                "(0-10) against the task; the best is kept; stops at a plateau, a perfect score or after 5 rounds. "
                "Returns the best prompt and every round.", open_world=True)  # fmt: skip
