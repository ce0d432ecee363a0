"""meta_refine: propose, grade, keep the best, stop at a plateau or after 5 rounds."""

from __future__ import annotations

import json

from tests.agents.conftest import data
from tests.support.openai_server import Reply, ScriptedOpenAI


def grade(score: float, critique: str) -> Reply:
    return Reply.answer(json.dumps({"score": score, "critique": critique}))


def test_stops_at_a_plateau_and_keeps_the_best(call, model_env: ScriptedOpenAI) -> None:
    model_env.push(
        grade(4, "too vague"),
        Reply.answer("<prompt>v1: list the files</prompt>"), grade(7, "no output format"),
        Reply.answer("<prompt>v2</prompt>"), grade(7, "same"),
        Reply.answer("<prompt>v3</prompt>"), grade(5, "worse"),
    )  # fmt: skip
    out = data(call("meta_refine", {"prompt": "do files", "task": "List the Python files"}))
    assert out["stopped"] == "plateau" and out["best_prompt"] == "v1: list the files" and out["best_score"] == 7
    assert [(r["round"], r["score"], r["kept"]) for r in out["rounds"]] == [
        (0, 4, True), (1, 7, True), (2, 7, False), (3, 5, False)]  # fmt: skip
    assert model_env.pending == 0
    # the proposer saw the best prompt and its critique
    third = model_env.bodies()[3]["messages"][1]["content"]
    assert "v1: list the files" in third and "no output format" in third
    log = data(call("chats", {"action": "log", "chat_id": out["chat_id"], "limit": 10}))
    assert len(log["messages"]) == 5 and "round 3: score 5 (discarded)" in log["messages"][-1]["text"]


def test_at_most_five_rounds(call, model_env: ScriptedOpenAI) -> None:
    model_env.push(grade(1, "bad"))
    for n in range(1, 6):
        model_env.push(Reply.answer(f"<prompt>v{n}</prompt>"), grade(1 + n, f"better {n}"))
    out = data(call("meta_refine", {"prompt": "p", "task": "t"}))
    assert out["stopped"] == "max_rounds" and len(out["rounds"]) == 6 and out["best_prompt"] == "v5"


def test_a_perfect_score_stops_and_bad_grades_count_as_zero(call, model_env: ScriptedOpenAI) -> None:
    model_env.push(Reply.answer("I think it is fine"), Reply.answer("<prompt>v1</prompt>"), grade(10, "great"))
    out = data(call("meta_refine", {"prompt": "p", "task": "t"}))
    assert out["rounds"][0]["score"] == 0 and "could not be read" in out["rounds"][0]["critique"]
    assert out["stopped"] == "perfect" and out["best_prompt"] == "v1"
    assert call("meta_refine", {"prompt": " ", "task": "t"}).error.code == "invalid_arguments"
