"""``<tool mcp_server=...>`` declarations: attributes, errors with positions,
and the per-declaration cache (a re-run reuses the session; two declarations
or two identities never share one)."""

from __future__ import annotations

import os
import sys
from pathlib import Path

import pytest

from tooldeck.core import Toolbox
from tooldeck.markup.element import ChatmdError, Element, Position
from tooldeck.mounts.declaration import MountRegistry, mount_from_element

pytestmark = pytest.mark.timeout(120)

CHANGING = Path(__file__).parents[1] / "mcp" / "servers" / "changing_server.py"
SPEC = f"stdio:{sys.executable} {CHANGING}"


def decl(line: int = 3, **attrs: str | None) -> Element:
    return Element("tool", dict(attrs), pos=Position(Path("agent.chatmd"), line, 1))


@pytest.fixture
def registry() -> MountRegistry:
    reg = MountRegistry()
    yield reg
    reg.close()


def test_declaration_selects_and_reuses_the_live_mount(registry: MountRegistry) -> None:
    el = decl(mcp_server=SPEC, includes="echo,pid", strict=None)
    tools = mount_from_element(el, registry=registry)
    assert [t.name for t in tools] == ["echo", "pid"] and all(t.strict for t in tools)
    pid = Toolbox(tools).call_sync("pid", {}).text
    again = mount_from_element(el, registry=registry)  # the same declaration: same session, cached catalog
    assert Toolbox(again).call_sync("pid", {}).text == pid and len(registry) == 1
    other = mount_from_element(decl(line=9, mcp_server=SPEC, name="echo"), registry=registry)
    assert [t.name for t in other] == ["echo"] and len(registry) == 2  # another declaration: its own entry
    assert Toolbox(other).call_sync("pid", {}).error is not None  # only what was declared is offered


def test_credentials_are_http_only_and_key_the_cache(registry: MountRegistry) -> None:
    el = decl(mcp_server=SPEC, name="pid", client_id_env="ID_VAR")
    with pytest.raises(ChatmdError, match="apply to http"):
        mount_from_element(el, env={**os.environ, "ID_VAR": "a"}, registry=registry)
    http = decl(mcp_server="http://127.0.0.1:9/mcp", client_id_env="ID_VAR")
    from tooldeck.mounts.declaration import declaration_key

    assert declaration_key(http, {"ID_VAR": "alice-secret"}) != declaration_key(http, {"ID_VAR": "bob-secret"})
    assert "alice-secret" not in "".join(declaration_key(http, {"ID_VAR": "alice-secret"}))  # only a digest is kept


def test_declaration_errors_name_the_position(registry: MountRegistry) -> None:
    with pytest.raises(ChatmdError) as err:
        mount_from_element(decl(line=7, mcp_server=SPEC, name="no_such_tool"), registry=registry)
    assert str(err.value).startswith("agent.chatmd:7:1: ") and "no tool named 'no_such_tool'" in str(err.value)
    with pytest.raises(ChatmdError, match=r"agent.chatmd:4:1: .*does not take bogus"):
        mount_from_element(decl(line=4, mcp_server=SPEC, bogus="1"), registry=registry)
    with pytest.raises(ChatmdError, match="needs a server"):
        mount_from_element(decl(mcp_server=""), registry=registry)
    assert len(registry) == 0


def test_the_chatmd_loader_entry_point_uses_the_runtime_registry(tmp_path: Path) -> None:
    from tooldeck.mounts.declaration import registry_for
    from tooldeck.runtime import Runtime

    rt = Runtime.for_dirs([tmp_path], state_dir=tmp_path / "state")
    el = decl(mcp_server=SPEC, name="echo")
    tools = mount_from_element(el, rt=rt, vars=object())  # what the ChatMD loader passes
    try:
        assert [t.name for t in tools] == ["echo"] and len(registry_for(rt)) == 1
        other_rt = Runtime.for_dirs([tmp_path], state_dir=tmp_path / "state")
        assert registry_for(other_rt) is not registry_for(rt)  # runtimes never share mounts
    finally:
        registry_for(rt).close()
