"""The model pass of ``context_builder``: answer question / plan / review over the built context.

The offline builder chooses the files; this pass hands the model that
context package plus the read-only tools (read, search, structure), so it
can check what the package only summarises (a codemap, a slice) before it
answers. The answer is kept as a chat, so ``chat_send chat_id=...``
continues the conversation with the same context.
"""

from __future__ import annotations

import uuid
from dataclasses import dataclass
from typing import TYPE_CHECKING

from tooldeck.agents.chat import MODE_PROMPTS, chat_db, context_text, review_diff, where
from tooldeck.agents.manager import session_manager
from tooldeck.agents.models import model_config
from tooldeck.core.errors import ErrorCode, ToolError
from tooldeck.core.toolbox import Toolbox
from tooldeck.llm.errors import ModelError
from tooldeck.llm.loop import run_conversation
from tooldeck.llm.provider import Provider
from tooldeck.llm.types import Message

if TYPE_CHECKING:
    from tooldeck.runtime import Runtime

READ_ONLY = ("read_file", "read_directory", "get_file_tree", "file_search", "get_code_structure", "find_symbol",
             "find_references")  # fmt: skip
MAX_TURNS = 12
PASS_PROMPTS = {
    "question": "Answer the question using the context below. Use the read-only tools to check details the "
    "context only summarises (codemaps, slices). Cite file paths and line numbers.",
    "plan": MODE_PROMPTS["plan"] + " Use the read-only tools to check details the context only summarises.",
    "review": MODE_PROMPTS["review"],
}


@dataclass
class PassResult:
    answer: str
    chat_id: str
    tool_calls: int


def read_only_toolbox(rt: Runtime) -> Toolbox:
    full = session_manager(rt).toolbox()
    tools = [t for name in READ_ONLY if (t := full.get(name)) is not None]
    return Toolbox(tools, budget_tokens=min(rt.budget_tokens, 8_000), count_tokens=rt.count_tokens)


async def answer(rt: Runtime, instructions: str, response_type: str) -> PassResult:
    mc = model_config(rt)
    box = read_only_toolbox(rt)
    context = context_text(rt, None)
    if response_type == "review":
        context += "\n## Git diff\n\n" + await review_diff(session_manager(rt).toolbox(), True)
    items = [Message("system", PASS_PROMPTS[response_type]), Message("system", context), Message("user", instructions)]
    provider = Provider(mc)
    try:
        result = await run_conversation(provider, items, box, max_turns=MAX_TURNS)
    except ModelError as exc:
        raise ToolError(ErrorCode.MODEL_ERROR, f"context_builder model pass: {exc.message}") from exc
    finally:
        await provider.aclose()
    calls = sum(1 for it in result.items if type(it).__name__ == "FunctionCall")
    db = chat_db(rt)
    ws, tab = where(rt)
    cid = str(uuid.uuid4())
    db.create(cid, f"context_builder: {instructions[:40]}", workspace_id=ws, tab_id=tab, model=mc.model)
    mode = "plan" if response_type == "plan" else "review" if response_type == "review" else "chat"
    db.add(cid, "user", mode, instructions)
    db.add(cid, "assistant", mode, result.text)
    return PassResult(result.text, cid, calls)
