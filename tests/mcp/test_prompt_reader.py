"""Reading a *.chatmd file as a prompt: messages, placeholders, description."""

from __future__ import annotations

from pathlib import Path

import pytest

from tooldeck.mcp.prompt_reader import Argument, Message, arguments_of, description_of, fill, read_messages
from tooldeck.mcp.prompts import PromptArgumentsError, load_prompt, tool_name


def test_reader_roles_comments_raw_and_entities() -> None:
    text = """<!-- header -->
<config model="m"/>
<tool name="read_file"/>
<system>Be exact.</system>
<!-- <user>commented out</user> -->
<msg role="user">via msg</msg>
<user>
a &lt;b&gt; &amp; RAW|<user>literal</user> <!-- kept -->|RAW
</user>
<assistant>ok</assistant>
<msg role=tool>not a message role</msg>
"""
    assert read_messages(text) == [
        Message("system", "Be exact."),
        Message("user", "via msg"),
        Message("user", "a <b> & <user>literal</user> <!-- kept -->"),
        Message("assistant", "ok"),
    ]


def test_placeholders_become_arguments_in_order() -> None:
    msgs = [Message("user", "{{ b }} then {{a|x}} then {{b}} and {{a}}"), Message("user", "{{c | two words }}")]
    args = arguments_of(msgs)
    assert args == [Argument("b", True), Argument("a", False, "x"), Argument("c", False, "two words")]
    assert fill(msgs[0].text, {"b": "B"}, args) == "B then x then B and x"
    assert fill("{{ not closed", {}, args) == "{{ not closed"


def test_description_from_a_leading_comment() -> None:
    assert description_of("  <!--  Summarise\n  a file  -->\n<user>x</user>", "s") == "Summarise a file"
    assert description_of("<user>x</user><!-- late -->", "s") == "ChatMD prompt s"


def test_render_checks_arguments(tmp_path: Path) -> None:
    p = tmp_path / "fix-bug.chatmd"
    p.write_text("<user>Fix {{issue}} in {{file|main.py}}</user>")
    prompt = load_prompt(p)
    assert prompt.name == "fix-bug" and tool_name("fix bug.v2") == "fix_bug_v2"
    assert prompt.render({"issue": "#3"}) == [Message("user", "Fix #3 in main.py")]
    with pytest.raises(PromptArgumentsError, match="missing required argument"):
        prompt.render({})
    with pytest.raises(PromptArgumentsError, match="unknown argument"):
        prompt.render({"issue": "1", "extra": "2"})
