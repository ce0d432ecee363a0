"""Imports (splicing, namespaces, cycles, depth limit) and the writer's round trip."""

from __future__ import annotations

import os
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from tooldeck.chatmd.document import MAX_IMPORT_DEPTH, load, loads
from tooldeck.chatmd.writer import element_text, escape_text
from tooldeck.markup.element import ChatmdError
from tooldeck.markup.parser import parse


def write(path: Path, text: str) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text, encoding="utf-8")
    return path


def test_import_splices_elements_in_place_with_their_own_positions(tmp_path: Path) -> None:
    write(tmp_path / "shared" / "tools.chatmd", '\n<tool name="read_file"/>\n<system>shared</system>\n')
    main = write(tmp_path / "main.chatmd", '<user>a</user>\n<import src="shared/tools.chatmd" namespace="docs"/>\n')
    doc = load(main)
    assert [e.tag for e in doc.elements] == ["user", "tool", "system"]
    tool = doc.elements[1]
    assert tool.attrs["namespace"] == "docs"
    assert tool.pos.file == tmp_path / "shared" / "tools.chatmd" and tool.pos.line == 2


def test_nested_namespaces_compose(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)  # the root: an imported file reads (imports) only inside the roots
    write(tmp_path / "c.chatmd", '<tool name="read_file"/>')
    write(tmp_path / "b.chatmd", '<import src="c.chatmd" namespace="inner"/>')
    doc = load(write(tmp_path / "a.chatmd", '<import src="b.chatmd" namespace="outer"/>'))
    assert doc.elements[0].attrs["namespace"] == "outer_inner"


def test_import_cycle_names_the_chain(tmp_path: Path) -> None:
    write(tmp_path / "a.chatmd", '<import src="b.chatmd"/>')
    write(tmp_path / "b.chatmd", '<user>x</user>\n<import src="a.chatmd"/>')
    with pytest.raises(ChatmdError) as info:
        load(tmp_path / "a.chatmd")
    msg = str(info.value)
    assert "import cycle" in msg and msg.startswith(f"{tmp_path / 'b.chatmd'}:2:1:")
    assert "a.chatmd -> " in msg and msg.rstrip().endswith("a.chatmd")


def test_self_import_is_a_cycle(tmp_path: Path) -> None:
    with pytest.raises(ChatmdError, match="import cycle"):
        load(write(tmp_path / "a.chatmd", '<import src="a.chatmd"/>'))


def test_import_depth_limit(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)  # the root: an imported file reads (imports) only inside the roots
    n = MAX_IMPORT_DEPTH + 1
    for i in range(n):
        write(tmp_path / f"f{i}.chatmd", f'<import src="f{i + 1}.chatmd"/>')
    write(tmp_path / f"f{n}.chatmd", "<user>deep</user>")
    with pytest.raises(ChatmdError, match=f"deeper than {MAX_IMPORT_DEPTH}"):
        load(tmp_path / "f0.chatmd")
    # exactly at the limit works
    write(tmp_path / "g.chatmd", '<import src="f2.chatmd"/>')
    assert [e.tag for e in load(tmp_path / "g.chatmd").elements] == ["user"]


def test_missing_import_and_bad_namespace(tmp_path: Path) -> None:
    with pytest.raises(ChatmdError, match=r"main.chatmd:1:1: <import src='nope.chatmd'>: .*no such ChatMD file"):
        load(write(tmp_path / "main.chatmd", '<import src="nope.chatmd"/>'))
    with pytest.raises(ChatmdError, match="namespace"):
        loads('<import src="x.chatmd" namespace="a b"/>', tmp_path / "m.chatmd")


def test_error_in_imported_file_names_that_file(tmp_path: Path) -> None:
    write(tmp_path / "bad.chatmd", "\n\n   <nope/>")
    with pytest.raises(ChatmdError) as info:
        load(write(tmp_path / "main.chatmd", '<import src="bad.chatmd"/>'))
    assert str(info.value).startswith(f"{tmp_path / 'bad.chatmd'}:3:4: unknown tag <nope>")


@settings(max_examples=300, deadline=None)
@given(st.text(alphabet=st.sampled_from(list("ab <>/&;|RAW!-\n\"'lt#x")) | st.characters(), max_size=80))
def test_writer_round_trips_any_text(text: str) -> None:
    for tag in ("user", "assistant", "tool_response"):
        nodes = parse(element_text(tag, {"id": 'a"<&>'}, text))
        assert len(nodes) == 1 and not isinstance(nodes[0], str)
        el = nodes[0]
        assert el.attrs == {"id": 'a"<&>'}
        assert el.text() == "\n" + text + "\n"


def test_escape_prefers_raw_blocks_and_falls_back_to_entities() -> None:
    assert escape_text("a < b") == "RAW|a < b|RAW"
    assert escape_text("plain") == "plain"
    tricky = "x |RAW y <z> RAW| &"
    assert "RAW|" not in escape_text(tricky)
    assert parse(f"<user>{escape_text(tricky)}</user>")[0].text() == tricky  # type: ignore[union-attr]


def test_a_chatmd_file_that_is_a_fifo_is_an_error_not_a_wait(tmp_path: Path) -> None:
    """The file the person named is read through workspace/person_files: a FIFO never blocks the run."""
    fifo = tmp_path / "chat.chatmd"
    os.mkfifo(fifo)
    with pytest.raises(ChatmdError, match="not a regular file"):
        load(fifo)
