"""context_builder with a model: the offline selection, then a model pass that may read
files with the read-only tools and answers; the answer continues as a chat."""

from __future__ import annotations

import json
from pathlib import Path

from tests.agents.conftest import data
from tests.support.openai_server import Reply, ScriptedOpenAI


def _repo(root: Path) -> None:
    (root / "shop").mkdir()
    (root / "shop" / "shipping.py").write_text("def shipping_cost(weight):\n    return 5 + weight * 2\n")
    (root / "shop" / "cart.py").write_text("from shop.shipping import shipping_cost\n\ndef total(items):\n"
                                           "    return sum(items) + shipping_cost(len(items))\n")  # fmt: skip


def test_question_gets_a_model_answer_and_a_chat_to_continue(call, model_env: ScriptedOpenAI, root: Path) -> None:
    _repo(root)
    model_env.push(
        Reply.call(("read_file", {"file": "shop/shipping.py"})),
        Reply.answer("Shipping is 5 + 2 per item (shop/shipping.py:2)."),
    )
    out = data(call("context_builder", {"instructions": "How is shipping_cost computed?",
                                        "response_type": "question"}))  # fmt: skip
    assert out["answer"] == "Shipping is 5 + 2 per item (shop/shipping.py:2)."
    first = model_env.bodies()[0]
    assert "shipping_cost" in json.dumps(first["messages"])  # the built context reached the model
    assert {t["function"]["name"] for t in first["tools"]} <= {
        "read_file", "read_directory", "get_file_tree", "file_search", "get_code_structure", "find_symbol",
        "find_references"}  # fmt: skip
    assert "5 + weight * 2" in json.dumps(model_env.bodies()[1]["messages"])  # the tool ran
    model_env.push(Reply.answer("Per item: 2."))
    more = data(call("chat_send", {"message": "and per item?", "chat_id": out["chat_id"]}))
    assert more["chat_id"] == out["chat_id"]
    history = [m["content"] for m in model_env.bodies()[2]["messages"] if m["role"] != "system"]
    assert history == ["How is shipping_cost computed?", "Shipping is 5 + 2 per item (shop/shipping.py:2).",
                       "and per item?"]  # fmt: skip


def test_without_a_model_says_which_setting_enables_it(call, model_env: ScriptedOpenAI, root: Path) -> None:
    _repo(root)
    (root / ".tooldeck.toml").unlink()
    text = call.ok("context_builder", {"instructions": "How is shipping_cost computed?", "response_type": "plan"})
    assert "shop/shipping.py" in text and "no model is configured" in text
    assert "TOOLDECK_MODEL" in text and "models.default_model" in text and "OPENAI_BASE_URL" in text
    assert model_env.requests == []
