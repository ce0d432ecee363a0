"""<tool> declarations -> Toolbox: built-ins, aliases, <read> roots, load-time errors."""

from __future__ import annotations

import asyncio
import json
import sys
from pathlib import Path

import pytest

from tooldeck.catalog import build_toolbox as catalog_toolbox
from tooldeck.catalog import build_tools
from tooldeck.chatmd.declarations import LoadContext, build_toolbox
from tooldeck.chatmd.document import loads
from tooldeck.chatmd.session import prepare
from tooldeck.core.invocation import Invocation
from tooldeck.core.toolbox import Toolbox
from tooldeck.markup.element import ChatmdError
from tooldeck.mcp.wire import tool_wire
from tooldeck.runtime import Runtime
from tooldeck.tool_manifest import load


def box_of(text: str, rt: Runtime, path: Path | None = None) -> Toolbox:
    doc = loads(text, path)
    return build_toolbox(doc, LoadContext.for_document(doc, rt, prepare=prepare))


def load_error(text: str, rt: Runtime, path: Path | None = None) -> str:
    with pytest.raises(ChatmdError) as info:
        box_of(text, rt, path)
    return str(info.value)


def test_only_declared_builtins_are_offered_under_their_model_names(runtime: Runtime) -> None:
    box = box_of('<tool name="read_dir"/>\n<tool name="get_contents"/>\n<tool name="apply_patch"/>', runtime)
    assert box.names == ["read_directory", "read_file", "apply_patch"]
    assert box_of("<user>hi</user>", runtime).names == []


def test_unknown_builtin_is_a_load_error_with_position(runtime: Runtime, tmp_path: Path) -> None:
    msg = load_error('<user>x</user>\n  <tool name="webpage_to_markdwn"/>', runtime, tmp_path / "p.chatmd")
    assert msg.startswith(f"{tmp_path / 'p.chatmd'}:2:3: unknown built-in tool 'webpage_to_markdwn'")
    assert "read_file" in msg and "read_dir" in msg


def test_two_kinds_on_one_tool_is_an_error(runtime: Runtime) -> None:
    msg = load_error('<tool name="t" agent="a.chatmd" mcp_server="stdio:x"/>', runtime)
    assert "<string>:1:1:" in msg and "not agent and mcp_server" in msg
    msg = load_error('<tool name="t" command="ls" agent="a.chatmd"/>', runtime)
    assert "not command and agent" in msg


def test_duplicate_names_and_namespaces(runtime: Runtime) -> None:
    msg = load_error('<tool name="read_file"/>\n<tool name="get_contents"/>', runtime)
    assert ":2:1: a tool named 'read_file' is already declared at <string>:1:1" in msg
    box = box_of('<tool name="read_file"/>\n<tool name="read_file" namespace="docs"/>', runtime)
    assert box.names == ["read_file", "docs_read_file"]


def test_read_roots_shape_the_description_and_root_enum(runtime: Runtime, root: Path, tmp_path: Path) -> None:
    (root / "lib").mkdir()
    (root / "lib" / "m.ml").write_text("let x = 1\n")
    docs = tmp_path / "prompts" / "docs"
    docs.mkdir(parents=True)
    (docs / "guide.md").write_text("# Guide\n")
    prompt = tmp_path / "prompts" / "agent.chatmd"
    text = (
        '<tool name="read_file" description="Prefer the docs root for documentation.">\n'
        '  <read id="source" path="lib" description="OCaml implementation files"/>\n'
        '  <read id="docs" path="${source_dir}/docs" description="Project documentation"/>\n'
        '  <read id="ws" path="${workspace}"/>\n'
        "</tool>"
    )
    box = box_of(text, runtime, prompt)
    t = box.get("read_file")
    assert t is not None
    assert t.parameters["properties"]["root"]["enum"] == ["source", "docs", "ws"]
    desc = t.description
    assert f"- source: {root / 'lib'} — OCaml implementation files" in desc
    assert f"- docs: {docs} — Project documentation" in desc
    assert f"- ws: {root}" in desc
    assert desc.rstrip().endswith("Prefer the docs root for documentation.")
    out = box.call_sync("read_file", json.dumps({"root": "docs", "file": "guide.md"}))
    assert not out.is_error and "# Guide" in out.text
    assert "let x = 1" in box.call_sync("read_file", json.dumps({"file": "lib/m.ml"})).text
    outside = box.call_sync("read_file", json.dumps({"file": str(tmp_path / "prompts" / "agent.chatmd")}))
    assert outside.is_error and outside.error is not None and outside.error.code == "outside_roots"


def test_a_missing_root_is_a_load_error_at_the_read_element(runtime: Runtime) -> None:
    msg = load_error('<tool name="read_file">\n    <read id="gone" path="${workspace}/nope"/>\n</tool>', runtime)
    assert ":2:5: root 'gone':" in msg and "does not exist" in msg


def test_unknown_path_variable_and_bad_read(runtime: Runtime) -> None:
    assert "unknown path variable ${nowhere}" in load_error(
        '<tool name="read_file"><read id="a" path="${nowhere}/x"/></tool>', runtime
    )
    assert "needs id=" in load_error('<tool name="read_file"><read path="."/></tool>', runtime)


def test_home_and_tool_dir_variables(runtime: Runtime, root: Path) -> None:
    box = box_of('<tool name="read_dir"><read id="h" path="${home}"/><read id="t" path="${tool_dir}"/></tool>', runtime)
    t = box.get("read_directory")
    assert t is not None and f"- h: {Path.home().resolve()}" in t.description and f"- t: {root}" in t.description


def test_legacy_command_becomes_a_fixed_shell_tool(runtime: Runtime) -> None:
    (Path(runtime.workspace.primary.path) / "marker.txt").write_text("here\n")
    box = box_of('<tool name="listing" command="ls" description="List the root"/>', runtime)
    tool = box.get("listing")
    assert tool is not None and tool.description.startswith("List the root")
    res = box.call_sync("listing", "{}")
    assert not res.is_error, res.text
    assert "marker.txt" in res.text


def test_shell_access_runtime_and_structured_tool(runtime: Runtime) -> None:
    decl = (
        '<shell_access id="dev" extends="builtin:workspace-development@1"/>\n'
        '<tool name="sh" type="shell" mode="structured" runtime="dev"/>'
    )
    box = box_of(decl, runtime)
    res = box.call_sync("sh", '{"program": "echo", "arguments": ["a;b", "$(id)"]}')
    assert not res.is_error, res.text
    assert "a;b $(id)" in res.text  # literal argv: no shell meaning


def test_shell_tool_naming_an_undeclared_runtime_is_a_load_error(runtime: Runtime) -> None:
    msg = load_error('<tool name="sh" type="shell" mode="structured" runtime="nope"/>', runtime)
    assert "nope" in msg and "<string>:1:1" in msg


def test_mcp_server_declaration_mounts_a_remote_catalog(runtime: Runtime, tmp_path: Path) -> None:
    remote = tmp_path / "remote"
    remote.mkdir()
    (remote / "far.txt").write_text("from the other server\n")
    cmd = f"stdio:{sys.executable} -m tooldeck serve {remote} --state-dir {tmp_path / 'remote-state'}"
    from tooldeck.mounts.declaration import registry_for

    try:
        box = box_of(f'<tool mcp_server="{cmd}" include="read_file,get_file_tree"/>', runtime)
        assert sorted(box.names) == ["get_file_tree", "read_file"]
        res = box.call_sync("read_file", '{"path": "far.txt"}')
        assert not res.is_error and "from the other server" in res.text, res.text
    finally:
        registry_for(runtime).close()  # the remote server ends with the test


def test_agent_declaration_checks_the_prompt_file(runtime: Runtime, tmp_path: Path) -> None:
    prompt = tmp_path / "main.chatmd"
    msg = load_error('<tool name="triage" agent="prompts/triage.chatmd" local/>', runtime, prompt)
    assert "agent prompt 'prompts/triage.chatmd' not found" in msg
    (tmp_path / "prompts").mkdir()
    (tmp_path / "prompts" / "triage.chatmd").write_text("<system>triage</system>")
    box = box_of('<tool name="triage" agent="prompts/triage.chatmd" local/>\n<tool name="fork"/>', runtime, prompt)
    assert box.names == ["triage", "fork"]
    for t in box:
        assert t.parameters["required"] == ["input"] and list(t.parameters["properties"]) == ["input"]


def test_config_is_checked_before_any_model_call(runtime: Runtime) -> None:
    for text, expected in [
        ('<config model="m" temperature="hot"/>', "expected a float"),
        ('<config model="m" temperature="3"/>', "between 0 and 2"),
        ('<config model="m" colour="red"/>', "no attribute 'colour'"),
        ('<config model="m" reasoning_effort="max"/>', "reasoning_effort='max'"),
    ]:
        with pytest.raises(ChatmdError, match=expected):
            prepare(loads(text + "\n<user>x</user>"), runtime)


def test_misspelt_attributes_are_errors(runtime: Runtime) -> None:
    assert "not 'agnet'" in load_error('<tool name="triage" agnet="x.chatmd"/>', runtime)
    assert "not 'root'" in load_error('<tool name="read_file" root="docs"/>', runtime)


def test_conversation_elements_and_inline_docs(runtime: Runtime, tmp_path: Path) -> None:
    from tooldeck.chatmd.conversation import items_of
    from tooldeck.llm.types import Message, Reasoning

    (tmp_path / "notes.md").write_text("NOTES <x>\n")
    (tmp_path / "pic.png").write_bytes(b"\x89PNG\r\n\x1a\n")
    doc = loads(
        '<system>s</system>\n<msg role="developer">d</msg>\n'
        '<user>\nread <doc src="notes.md" local/> and <img src="pic.png" local/>\n</user>\n'
        '<reasoning id="r1"><summary>one</summary><summary>two</summary></reasoning>\n<assistant>a</assistant>\n',
        tmp_path / "p.chatmd",
    )
    items = items_of(doc)
    assert items[:2] == [Message("system", "s"), Message("developer", "d")]
    user = items[2]
    assert isinstance(user, Message) and user.text == "read NOTES <x>\n and"
    assert len(user.images) == 1 and user.images[0].data_uri.startswith("data:image/png;base64,")
    assert items[3] == Reasoning("one\n\ntwo", "r1") and items[4] == Message("assistant", "a")
    for bad, expected in [
        ('<doc src="notes.md" local/>', "belongs inside a message"),
        ('<msg role="robot">x</msg>', "needs role="),
        ('<user><doc src="gone.md" local/></user>', "cannot read"),
        ('<user><doc src="https://example.com/x"/></user>', "only local files"),
        ('<user><img src="notes.md" local/></user>', "not an image"),
        ("<user><agent src='a.chatmd' local>x</agent></user>", "inline <agent> is not supported"),
    ]:
        with pytest.raises(ChatmdError, match=expected):
            items_of(loads(bad, tmp_path / "p.chatmd"))


def test_each_builtin_declared_alone_is_the_catalogs_tool(runtime: Runtime) -> None:
    """A built-in comes from the one domain the shipped declarations name for
    it (LoadContext.builtin), the same tool the whole catalog holds."""
    whole = {t.name: tool_wire(t) for t in build_tools(runtime)}
    names = [e["tool"]["name"] for e in load() or ()]
    assert names and set(names) <= set(whole)
    for name in names:
        doc = loads(f'<tool name="{name}"/>')
        ctx = LoadContext.for_document(doc, runtime, prepare=prepare)
        box = build_toolbox(doc, ctx)
        assert ctx._catalogs == {}, f"{name}: the whole catalog was built"
        assert tool_wire(box.get(name)) == whole[name], name


def test_a_builtin_built_alone_reads_the_stored_selection(runtime: Runtime, root: Path) -> None:
    (root / "chosen.py").write_text("def chosen():\n    return 1\n")
    (root / "other.py").write_text("def other():\n    return 2\n")
    asyncio.run(catalog_toolbox(runtime).call("manage_selection", {"op": "add", "paths": ["chosen.py"]}))
    fresh = Runtime.for_dirs([root], state_dir=runtime.state_dir).start()  # `tooldeck run`: same state, no catalog
    box = box_of('<tool name="get_code_structure"/>', fresh)
    text = asyncio.run(box.call("get_code_structure", {}, invocation=Invocation.silent())).text or ""
    assert "chosen()" in text and "other" not in text
