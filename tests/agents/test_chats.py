"""list_models, chat_send (chat, plan, edit, review) and chats, against the scripted server."""

from __future__ import annotations

import json
from pathlib import Path

from tests.agents.conftest import data
from tests.support.openai_server import Reply, ScriptedOpenAI

PATCH = """Renaming the greeting.

*** Begin Patch
*** Update File: app.py
@@
 def greet():
-    return "hi"
+    return "hello"
*** End Patch
"""


def test_list_models_presets_modes_and_roles(call, model_env: ScriptedOpenAI) -> None:
    got = data(call("list_models", {}))
    by_id = {m["id"]: m for m in got["models"]}
    assert by_id["fast"]["modes"] == ["chat", "plan"] and by_id["fast"]["description"] == "A quick model for exploring."
    assert by_id["smart"]["modes"] == ["chat", "plan", "edit", "review"]
    assert got["roles"]["explore"] == "fast" and got["roles"]["design"] == "default"
    assert got["default"] == "scripted-default"


def test_list_models_without_config_says_how_to_enable(call, model_env: ScriptedOpenAI, root: Path) -> None:
    (root / ".tooldeck.toml").unlink()
    res = call("list_models", {})
    assert "TOOLDECK_MODEL" in res.text and "default_model" in res.text


def test_chat_uses_selection_and_prompt_and_continues(call, model_env: ScriptedOpenAI, root: Path) -> None:
    (root / "app.py").write_text('def greet():\n    return "hi"\n')
    call.ok("manage_selection", {"op": "set", "paths": ["app.py"]})
    call.ok("prompt", {"op": "set", "text": "We are renaming things."})
    model_env.push(Reply.answer("greet returns hi"), Reply.answer("yes, still hi"))
    first = data(call("chat_send", {"message": "what does greet return?", "chat_name": "greet talk"}))
    assert first["reply"] == "greet returns hi" and first["chat_name"] == "greet talk"
    sent = json.dumps(model_env.bodies()[0]["messages"])
    assert 'return \\"hi\\"' in sent and "We are renaming things." in sent
    second = data(call("chat_send", {"message": "sure?"}))
    assert second["chat_id"] == first["chat_id"]
    history = model_env.bodies()[1]["messages"]
    assert [m["content"] for m in history if m["role"] != "system"] == [
        "what does greet return?", "greet returns hi", "sure?"]  # fmt: skip
    model_env.push(Reply.answer("a plan"))
    third = data(call("chat_send", {"message": "new topic", "new_chat": True, "mode": "plan"}))
    assert third["chat_id"] != first["chat_id"]
    assert "implementation plan" in model_env.bodies()[2]["messages"][0]["content"]
    listed = data(call("chats", {"action": "list"}))["chats"]
    assert [c["chat_id"] for c in listed] == [third["chat_id"], first["chat_id"]]
    assert data(call("chats", {"action": "list", "scope": "tab", "limit": 1}))["chats"][0]["chat_id"] == third[
        "chat_id"]  # fmt: skip
    log = data(call("chats", {"action": "log", "chat_id": first["chat_id"], "limit": 2}))
    assert [m["text"] for m in log["messages"]] == ["sure?", "yes, still hi"]


def test_edit_applies_the_patch_atomically_and_logs_diffs(call, model_env: ScriptedOpenAI, root: Path) -> None:
    (root / "app.py").write_text('def greet():\n    return "hi"\n')
    model_env.push(Reply.answer(PATCH))
    got = data(call("chat_send", {"message": "say hello", "mode": "edit", "selected_paths": ["app.py"]}))
    assert got["edits"]["applied"] is True and got["edits"]["modified"] == ["app.py"]
    assert (root / "app.py").read_text() == 'def greet():\n    return "hello"\n'
    # a patch that does not fit changes nothing and says why
    model_env.push(Reply.answer(PATCH))
    bad = data(call("chat_send", {"message": "again", "mode": "edit"}))
    assert bad["edits"]["applied"] is False and "app.py" in bad["edits"]["error"]
    assert (root / "app.py").read_text() == 'def greet():\n    return "hello"\n'
    log = data(call("chats", {"action": "log", "chat_id": got["chat_id"], "limit": 10, "diffs": True}))
    diffs = [m.get("diffs") for m in log["messages"] if m["role"] == "assistant"]
    assert diffs[0]["applied"] is True and diffs[1]["applied"] is False


def test_review_includes_the_git_diff(call, model_env: ScriptedOpenAI, root: Path) -> None:
    from tests.git.gitkit import init_repo

    git = init_repo(root)
    git.commit("first", {"lib.py": "x = 1\n"})
    (root / "lib.py").write_text("x = 2\n")
    model_env.push(Reply.answer("x changed from 1 to 2: fine"))
    got = data(call("chat_send", {"message": "review please", "mode": "review", "new_chat": True}))
    assert got["reply"].startswith("x changed")
    context = json.dumps(model_env.bodies()[0]["messages"])
    assert "-x = 1" in context and "+x = 2" in context


def test_chat_errors(call, model_env: ScriptedOpenAI) -> None:
    assert call("chat_send", {"message": "x", "chat_id": "nope"}).error.code == "not_found"
    assert call("chat_send", {"message": "x", "chat_id": "a", "new_chat": True}).error.code == "invalid_arguments"
    assert call("chat_send", {"message": "x", "mode": "shout"}).error.code == "invalid_arguments"
    model_env.push(Reply.error(401, "bad key"))
    res = call("chat_send", {"message": "x"})
    assert res.error.code == "model_error" and "401" in res.text
    assert "bad key" not in res.text  # a loopback reply's body is never shown


def test_a_model_argument_that_is_a_url_is_refused(call, model_env: ScriptedOpenAI) -> None:
    """A model picks among the person's endpoints; it never names one (SPEC §3)."""
    from tests.settings.listener import Listener

    with Listener() as listener:
        for name, args in (
            ("chat_send", {"message": "x", "model": listener.url}),
            ("agent_run", {"op": "start", "message": "x", "model_id": listener.url}),
            ("meta_refine", {"prompt": "p", "task": "t", "model": listener.url}),
        ):
            res = call(name, args)
            assert res.is_error and res.error.code == "invalid_arguments", res.text
            assert "not a URL" in res.text and "tooldeck settings set models.base_url" in res.text
        assert listener.received == []
    assert model_env.requests == []
