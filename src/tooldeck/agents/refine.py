"""meta_refine (seed 000): improve a prompt for a task by propose → evaluate → keep the best.

Each round the model proposes a rewrite of the best prompt so far that
answers the last critique, then grades the candidate against the task
(a JSON score 0-10 and a critique). The best candidate is kept; the loop
stops at a perfect score, at a plateau (no gain for :data:`PLATEAU` rounds
in a row) or after :data:`MAX_ROUNDS`. Why a separate grading call: a
model rewriting its own prompt tends to call every rewrite better; a fresh
grading request against the task keeps the comparison honest enough to stop.
Every round is returned and kept as a chat (``chats`` shows it).
"""

from __future__ import annotations

import json
import re
import uuid
from dataclasses import asdict, dataclass, field
from typing import TYPE_CHECKING, Any

from tooldeck.agents.models import model_config
from tooldeck.core.errors import ErrorCode, ToolError
from tooldeck.core.toolbox import Toolbox
from tooldeck.llm.errors import ModelError
from tooldeck.llm.types import Message

if TYPE_CHECKING:
    from tooldeck.llm.provider import Provider
    from tooldeck.runtime import Runtime

MAX_ROUNDS = 5
PLATEAU = 2
GRADER = (
    "You grade prompts. Given a TASK and a PROMPT written to accomplish it, judge how well the prompt would make "
    "a capable model do the task (clarity, completeness, constraints, output format). Reply with JSON only: "
    '{"score": <0-10>, "critique": "<the most important weaknesses, concretely>"}'
)
PROPOSER = (
    "You improve prompts. Rewrite the PROMPT so it better accomplishes the TASK, fixing the weaknesses in the "
    "CRITIQUE without losing what works. Reply with only the new prompt between <prompt> and </prompt>."
)
PROMPT_RE = re.compile(r"<prompt>(.*?)</prompt>", re.S)
JSON_RE = re.compile(r"\{.*\}", re.S)


@dataclass
class Round:
    round: int
    prompt: str
    score: float
    critique: str
    kept: bool


@dataclass
class Refinement:
    best: str
    best_score: float
    stopped: str  # perfect | plateau | max_rounds
    rounds: list[Round] = field(default_factory=list)
    chat_id: str | None = None

    def to_dict(self) -> dict[str, Any]:
        return {"best_prompt": self.best, "best_score": self.best_score, "stopped": self.stopped,
                "rounds": [asdict(r) for r in self.rounds], "chat_id": self.chat_id}  # fmt: skip


async def _ask(provider: Provider, system: str, user: str) -> str:
    # lazy: the model loop loads on the first model call
    from tooldeck.llm.loop import run_conversation

    res = await run_conversation(provider, [Message("system", system), Message("user", user)], Toolbox([]),
                                 max_turns=1)  # fmt: skip
    return res.text


def parse_grade(text: str) -> tuple[float, str]:
    m = JSON_RE.search(text)
    try:
        data = json.loads(m.group(0)) if m else None
        if not isinstance(data, dict) or "score" not in data:
            raise ValueError("no score")
        score = max(0.0, min(10.0, float(data.get("score", 0))))
        return score, str(data.get("critique", "")).strip()
    except (ValueError, TypeError, AttributeError):
        return 0.0, f"(the grade could not be read: {text[:200]})"


async def refine(rt: Runtime, prompt: str, task: str, *, model: str | None = None,
                 max_rounds: int = MAX_ROUNDS) -> Refinement:  # fmt: skip
    # lazy: the model loop loads on the first model call
    from tooldeck.llm.provider import Provider

    provider = Provider(model_config(rt, model))
    try:
        return await _loop(rt, provider, prompt, task, max_rounds)
    except ModelError as exc:
        raise ToolError(ErrorCode.MODEL_ERROR, f"meta_refine: {exc.message}") from exc
    finally:
        await provider.aclose()


async def _grade(provider: Provider, prompt: str, task: str) -> tuple[float, str]:
    return parse_grade(await _ask(provider, GRADER, f"TASK:\n{task}\n\nPROMPT:\n{prompt}"))


async def _loop(rt: Runtime, provider: Provider, prompt: str, task: str, max_rounds: int) -> Refinement:
    score, critique = await _grade(provider, prompt, task)
    out = Refinement(prompt, score, "max_rounds", [Round(0, prompt, score, critique, True)])
    best_critique, stale = critique, 0
    for n in range(1, max_rounds + 1):
        if out.best_score >= 10:
            out.stopped = "perfect"
            break
        reply = await _ask(provider, PROPOSER, f"TASK:\n{task}\n\nPROMPT:\n{out.best}\n\nCRITIQUE:\n{best_critique}")
        m = PROMPT_RE.search(reply)
        candidate = (m.group(1) if m else reply).strip()
        score, critique = await _grade(provider, candidate, task)
        kept = score > out.best_score
        out.rounds.append(Round(n, candidate, score, critique, kept))
        if kept:
            out.best, out.best_score, best_critique, stale = candidate, score, critique, 0
        else:
            stale += 1
            if stale >= PLATEAU:
                out.stopped = "plateau"
                break
    out.chat_id = _log(rt, task, out)
    return out


def _log(rt: Runtime, task: str, out: Refinement) -> str:
    # lazy: the chat store loads when a refinement is logged
    from tooldeck.agents.chat import chat_db, where

    db = chat_db(rt)
    ws, tab = where(rt)
    cid = str(uuid.uuid4())
    db.create(cid, f"meta_refine: {task[:40]}", workspace_id=ws, tab_id=tab, model=None)
    db.add(cid, "user", "meta_refine", f"TASK:\n{task}")
    for r in out.rounds:
        mark = "kept" if r.kept else "discarded"
        db.add(cid, "assistant", "meta_refine", f"round {r.round}: score {r.score:g} ({mark})\n\n{r.prompt}\n\n"
               f"critique: {r.critique}")  # fmt: skip
    return cid
