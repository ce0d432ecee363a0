"""Runtimes and tools declared in ChatMD elements and in TOML: same result, closed vocabulary."""

from __future__ import annotations

import hashlib
import json
from pathlib import Path

import pytest

from tests.shell.shell_harness import Shell, needs_bwrap
from tests.support.trust import approve
from tooldeck.config import ConfigError, load_config
from tooldeck.markup.element import ChatmdError, Element, Position
from tooldeck.shell.chatmd_decl import legacy_command_tool, runtime_from_element, tool_from_element
from tooldeck.shell.toml_decl import shell_config


def el(tag: str, attrs: dict | None = None, *children: Element | str, line: int = 1, col: int = 1) -> Element:
    return Element(tag, dict(attrs or {}), list(children), Position(Path("p.chatmd"), line, col))


def dev_element() -> Element:
    return el(
        "shell_access",
        {"id": "dev", "extends": "builtin:workspace-development@1", "cwd": "sub", "pipefail": None},
        "\n  ",
        el("policy", {"default": "deny"},
           el("rule", {"id": "git", "action": "allow", "basename": "git"}),
           el("rule", {"id": "push", "action": "ask", "prefix": "git push"}), line=3),
        el("limits", {"wall": "2m", "idle": "500ms", "output": "8KB", "stdin": "1MiB", "processes": "32"}),
        el("environment", {"inherit": "LANG TERM"}, el("set", {"name": "CI", "value": "1"})),
        el("secrets", {}, el("secret", {"env": "API_TOKEN"}), el("secret", {"pattern": "sk-[a-z]+"})),
        el("sandbox", {"network": "off", "write": "workspace", "child_processes": "on"}),
    )  # fmt: skip


def test_runtime_from_element(root: Path) -> None:
    rt = runtime_from_element(dev_element(), base_dir=root, roots=[str(root)])
    assert rt.id == "dev" and rt.cwd == "sub" and rt.pipefail is True
    assert rt.policy.default == "deny" and [r.id for r in rt.policy.rules[:2]] == ["git", "push"]
    assert rt.policy.rules[1].prefix == ("git", "push")
    assert rt.limits.wall_seconds == 120 and rt.limits.idle_seconds == 0.5
    assert rt.limits.output_bytes == 8000 and rt.limits.stdin_bytes == 1 << 20 and rt.limits.processes == 32
    assert rt.environment.inherit == ("LANG", "TERM") and ("CI", "1") in rt.environment.set
    assert rt.secrets.env == ("API_TOKEN",) and rt.secrets.patterns == ("sk-[a-z]+",)
    assert rt.sandbox.write == ("workspace",) and rt.sandbox.network is False


def test_same_runtime_from_toml(root: Path, state_dir: Path) -> None:
    (root / ".tooldeck.toml").write_text(
        """
[shell.runtimes.dev]
extends = "builtin:workspace-development@1"
cwd = "sub"
pipefail = true
[shell.runtimes.dev.policy]
default = "deny"
rules = [{ id = "git", action = "allow", basename = "git" }, { id = "push", action = "ask", prefix = ["git", "push"] }]
[shell.runtimes.dev.limits]
wall = "2m"
idle = "500ms"
output = "8KB"
stdin = "1MiB"
processes = 32
[shell.runtimes.dev.environment]
inherit = ["LANG", "TERM"]
set = { CI = "1" }
[shell.runtimes.dev.secrets]
env = ["API_TOKEN"]
patterns = ["sk-[a-z]+"]
[shell.runtimes.dev.sandbox]
network = false
write = ["workspace"]
child_processes = true
"""
    )
    approve(root, state_dir)
    cfg = shell_config(load_config(root, user_path=root / "none.toml", state_dir=state_dir), root)
    from_element = runtime_from_element(dev_element(), base_dir=root)
    toml_rt = cfg.runtimes["dev"]
    for section in ("policy", "limits", "environment", "secrets", "sandbox"):
        assert getattr(toml_rt, section) == getattr(from_element, section), section
    assert toml_rt.cwd == from_element.cwd and toml_rt.pipefail == from_element.pipefail


@pytest.mark.parametrize(
    ("element", "line", "needle"),
    [
        (el("shell_access", {"id": "x", "netwrok": "on"}, line=4, col=2), 4, "unknown attribute 'netwrok'"),
        (el("shell_access", {"id": "x"}, el("polcy", {}, line=7, col=3)), 7, "unknown child <polcy>"),
        (el("shell_access", {"id": "x"}, el("policy", {}, el("rule", {"id": "r", "action": "maybe",
                                                                        "basename": "ls"}, line=9))), 9, "action"),
        (el("shell_access", {"id": "x"}, el("policy", {}, el("rule", {"id": "r", "action": "deny"}, line=5))), 5,
         "at least one matcher"),
        (el("shell_access", {"id": "x"}, el("limits", {"wall": "soon"}, line=6)), 6, "duration"),
        (el("shell_access", {"id": "x"}, el("sandbox", {"network": "maybe"}, line=8)), 8, "on/off"),
        (el("shell_access", {"id": "x"}, el("environment", {"path": ".:/usr/bin"}, line=3)), 3, "absolute"),
        (el("shell_access", {"id": "x", "extends": "builtin:nope@9"}, line=2), 2, "no such runtime"),
        (el("shell_access", {"id": "x"}, el("sandbox", {}, el("rule", {}, line=11))), 11, "unknown child <rule>"),
        (el("shell_access", {"id": "x"}, "stray text", line=12), 12, "unexpected text"),
    ],
)  # fmt: skip
def test_runtime_errors_name_line_and_column(element: Element, line: int, needle: str, root: Path) -> None:
    with pytest.raises(ChatmdError) as exc:
        runtime_from_element(element, base_dir=root)
    assert exc.value.pos is not None and exc.value.pos.line == line
    assert needle in str(exc.value) and f"p.chatmd:{line}:" in str(exc.value)


def test_write_path_outside_roots_is_refused(root: Path, tmp_path: Path) -> None:
    bad = el("shell_access", {"id": "x"}, el("sandbox", {"write": str(tmp_path)}, line=3))
    with pytest.raises(ChatmdError, match="outside the workspace"):
        runtime_from_element(bad, base_dir=root, roots=[str(root)])


@needs_bwrap
def test_fixed_tool_from_element(root: Path, state_dir: Path) -> None:
    ro = el("shell_access", {"id": "ro", "extends": "builtin:workspace-readonly@1"})
    rt = runtime_from_element(ro, base_dir=root)
    tool_el = el("tool", {"name": "say", "type": "shell", "mode": "fixed", "runtime": "ro"},
                 el("command", {"program": "echo"}, el("arg", {"value": "fixed;"}), el("arg", {"value": "$(x)"})),
                 el("arguments", {"mode": "none"}))  # fmt: skip
    s = Shell(root, state_dir)
    s.box.add(tool_from_element(tool_el, {"ro": rt}, base_dir=root, service=s.service))
    tool = s.box.get("say")
    assert tool is not None and tool.parameters["properties"] == {}
    assert s.call("say", {}).text.startswith("fixed; $(x)\n")
    assert s.call("say", {"arguments": ["x"]}).is_error  # no arguments accepted


@needs_bwrap
def test_script_tool_checks_its_hash(root: Path, state_dir: Path) -> None:
    script = root / "hello.sh"
    script.write_text('echo hello from script "$1"\n')
    digest = hashlib.sha256(script.read_bytes()).hexdigest()
    tool_el = el("tool", {"name": "hello", "type": "shell", "mode": "script", "rationale": "required"},
                 el("interpreter", {"program": "sh"}), el("script", {"path": "hello.sh", "sha256": digest}),
                 el("arguments", {"mode": "append"}))  # fmt: skip
    s = Shell(root, state_dir)
    s.box.add(tool_from_element(tool_el, {}, base_dir=root, service=s.service))
    assert s.call("hello", {"arguments": ["x"]}).is_error  # rationale required
    assert "hello from script x" in s.call("hello", {"arguments": ["x"], "rationale": "demo"}).text
    script.write_text("echo tampered\n")
    res = s.call("hello", {"arguments": ["x"], "rationale": "demo"})
    assert res.is_error and res.error is not None and res.error.code == "denied" and "sha256" in res.error.message
    with pytest.raises(ChatmdError, match="sha256 mismatch"):
        tool_from_element(tool_el, {}, base_dir=root, service=s.service)


def test_tool_element_errors(root: Path, state_dir: Path) -> None:
    s = Shell(root, state_dir)
    cases = [
        (el("tool", {"name": "t", "type": "shell", "mode": "fixed", "colour": "red"}, line=3), "unknown attribute"),
        (el("tool", {"name": "t", "type": "shell", "mode": "fixed"}, el("cmd", {}, line=4)), "unknown child <cmd>"),
        (el("tool", {"name": "t", "type": "shell", "mode": "fixed"}, line=5), "needs a command"),
        (el("tool", {"name": "t", "type": "shell", "mode": "teleport"}, line=6), "mode"),
        (el("tool", {"name": "t", "type": "shell", "runtime": "nope"}, line=7), "not declared"),
        (el("tool", {"name": "t", "type": "shell", "mode": "raw"}, line=8), "interpreter"),
        (el("tool", {"name": "t", "type": "shell", "mode": "script"}, el("script", {"path": "missing.sh"}, line=9)),
         "no such file"),
    ]  # fmt: skip
    for element, needle in cases:
        with pytest.raises(ChatmdError) as exc:
            tool_from_element(element, {}, base_dir=root, service=s.service)
        assert needle in str(exc.value), (needle, str(exc.value))
        assert exc.value.pos is not None and exc.value.pos.line > 1


@needs_bwrap
def test_legacy_command_tool_is_fixed(root: Path, state_dir: Path) -> None:
    (root / "a.txt").write_text("one\ntwo\n")
    s = Shell(root, state_dir)
    s.box.add(legacy_command_tool(el("tool", {"name": "count", "command": "wc -l", "description": "Count lines."}),
                                  service=s.service))  # fmt: skip
    tool = s.box.get("count")
    assert tool is not None and tool.description.startswith("Count lines.")
    assert s.call("count", {"arguments": ["a.txt"]}).text.startswith("2 a.txt")
    with pytest.raises(ChatmdError, match="one program"):
        legacy_command_tool(el("tool", {"name": "bad", "command": "ls | wc"}), service=s.service)
    with pytest.raises(ChatmdError, match="redirection"):
        legacy_command_tool(el("tool", {"name": "bad", "command": "ls > x"}), service=s.service)


def test_toml_errors_name_the_file(root: Path, state_dir: Path) -> None:
    (root / ".tooldeck.toml").write_text('[shell.runtimes.x]\nextends = "builtin:workspace-readonly@1"\nnetwork = 1\n')
    approve(root, state_dir)
    with pytest.raises(ConfigError, match=r"\.tooldeck\.toml.*unknown shell_access setting 'network'"):
        shell_config(load_config(root, user_path=root / "none.toml", state_dir=state_dir), root)


@pytest.mark.parametrize("table", ['[sandbox]\nmode = "off"', "[sandbox]\nnetwork = true", '[policy]\nraw = "allow"'])
def test_project_runtime_needs_approval(root: Path, tmp_path: Path, state_dir: Path, table: str) -> None:
    body = f'[shell.runtimes.x]\nextends = "builtin:workspace-development@1"\n[shell.runtimes.x.{table[1:]}\n'
    (root / ".tooldeck.toml").write_text(body)
    cfg = load_config(root, user_path=tmp_path / "none.toml", state_dir=state_dir)
    assert "x" not in shell_config(cfg, root).runtimes  # written by whoever: ignored, and said so
    assert [n.what for n in cfg.notices] == [
        "shell runtime `x` (a sandbox, policy, environment, secrets or hooks of its own)"
    ]
    assert cfg.notices[0].line == 1 and "tooldeck trust allow" in cfg.notices[0].text()
    approve(root, state_dir)  # the person approved these bytes: it applies
    assert "x" in shell_config(load_config(root, user_path=tmp_path / "none.toml", state_dir=state_dir), root).runtimes
    user = tmp_path / "user.toml"  # the same runtime from the user's own file is accepted
    user.write_text(body)
    (root / ".tooldeck.toml").unlink()
    cfg = shell_config(load_config(root, user_path=user), root)
    assert "x" in cfg.runtimes


def test_runtimes_extend_each_other_in_toml(root: Path, state_dir: Path) -> None:
    (root / ".tooldeck.toml").write_text(
        '[shell.runtimes.child]\nextends = "base"\n[shell.runtimes.child.limits]\nwall = 5\n'
        '[shell.runtimes.base]\nextends = "builtin:workspace-development@1"\n[shell.runtimes.base.limits]\nidle = 3\n'
        '[shell.tools.t]\nmode = "chain"\nruntime = "child"\n'
    )
    approve(root, state_dir)
    cfg = shell_config(load_config(root, user_path=root / "none.toml", state_dir=state_dir), root)
    child = cfg.runtimes["child"]
    assert child.limits.wall_seconds == 5 and child.limits.idle_seconds == 3 and child.sandbox.write == ("workspace",)
    assert [t.name for t in cfg.tools] == ["t"]
    json.dumps([t.mode for t in cfg.tools])


def test_flags_on_a_tool_element(root: Path, state_dir: Path) -> None:
    s = Shell(root, state_dir)
    tool = tool_from_element(el("tool", {"name": "t", "type": "shell", "mode": "chain", "rationale": None,
                                         "stdin": None}), {}, base_dir=root, service=s.service)  # fmt: skip
    props = tool.parameters["properties"]
    assert {"command", "rationale", "stdin", "cwd"} <= set(props)
    assert "rationale" not in tool.parameters.get("required", [])


def test_declared_tools_replace_the_default_tool(root: Path, state_dir: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from tooldeck.runtime import Runtime
    from tooldeck.tools.shell import tools

    monkeypatch.setenv("TOOLDECK_CONFIG", str(state_dir / "no-user-config.toml"))
    rt = Runtime.for_dirs([root], state_dir=state_dir)
    assert [t.name for t in tools(rt)] == ["shell"]
    (root / ".tooldeck.toml").write_text('[shell.tools.run]\nmode = "chain"\n')
    assert [t.name for t in tools(rt)] == ["shell"]  # a project's tool needs the person's approval
    approve(root, state_dir)
    assert [t.name for t in tools(rt)] == ["run"]
    (root / ".tooldeck.toml").write_text("[shell]\ndefault_tool = false\n")  # narrowing needs none
    assert tools(rt) == []
