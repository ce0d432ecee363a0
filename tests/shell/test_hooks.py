"""Runtime hooks: declared in TOML and ChatMD, run in the command's sandbox,
a before-hook can refuse, an after-hook's words reach the model."""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path

import pytest

from tests.shell.shell_harness import Shell, dev_runtime, needs_bwrap
from tests.shell.test_surfaces import cli
from tests.support.trust import approve
from tooldeck.config import ConfigError, load_config
from tooldeck.markup.element import ChatmdError, Element, Position
from tooldeck.shell.chatmd_decl import runtime_from_element
from tooldeck.shell.declare import build_runtime
from tooldeck.shell.profiles import BUILTIN, Hook, ShellRuntime
from tooldeck.shell.spec import ShellToolSpec
from tooldeck.shell.toml_decl import shell_config

GUARD = """#!/bin/sh
# refuses any command that mentions "forbidden"; shows what it was given
payload=$(cat)
case "$payload" in
  *forbidden*) echo "guard: no forbidden things ($TOOLDECK_HOOK_EVENT)"; exit 3 ;;
esac
exit 0
"""
NOTE = """#!/bin/sh
payload=$(cat)
code=$(printf '%s' "$payload" | sed -n 's/.*"exit_code": \\([0-9-]*\\).*/\\1/p')
echo "note: exit=$code event=$TOOLDECK_HOOK_EVENT"
"""
SCRIBBLE = """#!/bin/sh
cat >/dev/null
touch scribbled || exit 9
"""


def script(root: Path, name: str, body: str) -> str:
    path = root / name
    path.write_text(body)
    path.chmod(0o755)
    return f"./{name}"


def hooked(root: Path, state_dir: Path, *hooks: Hook, base: ShellRuntime | None = None) -> Shell:
    rt = replace(base or dev_runtime(), hooks=hooks)
    s = Shell(root, state_dir)
    s.add(ShellToolSpec(name="sh", mode="structured", runtime=rt.id, result="structured"), rt)
    s.add(ShellToolSpec(name="sht", mode="structured", runtime=rt.id), rt)
    return s


@needs_bwrap
def test_before_hook_refuses_and_the_command_does_not_run(root: Path, state_dir: Path) -> None:
    s = hooked(root, state_dir, Hook("before", (script(root, "guard.sh", GUARD),), "guard"))
    res = s.call("sh", {"program": "touch", "arguments": ["forbidden"]})
    assert res.is_error and res.error is not None and res.error.code == "denied"
    assert "refused by hook 'guard'" in res.error.message and "no forbidden things (before)" in res.error.message
    assert not (root / "forbidden").exists()
    ok = s.structured("sh", {"program": "touch", "arguments": ["allowed"]})
    assert ok["exit_code"] == 0 and (root / "allowed").exists()


@needs_bwrap
def test_after_hook_sees_the_result_and_is_appended(root: Path, state_dir: Path) -> None:
    s = hooked(root, state_dir, Hook("after", (script(root, "note.sh", NOTE),), "note"))
    data = s.structured("sh", {"program": "ls", "arguments": ["no-such-file"]})
    assert data["exit_code"] != 0
    assert data["hooks"] == [{"hook": "note", "exit_code": 0, "limit": None,
                              "output": f"note: exit={data['exit_code']} event=after"}]  # fmt: skip
    res = s.call("sht", {"program": "true"})
    assert not res.is_error and res.text.rstrip().endswith("[hook note] note: exit=0 event=after")


@needs_bwrap
def test_hooks_run_in_the_command_sandbox(root: Path, state_dir: Path) -> None:
    # a read-only runtime's hook cannot write into the root either, so it refuses
    ro = replace(BUILTIN["builtin:workspace-readonly@1"], id="ro")
    s = hooked(root, state_dir, Hook("before", (script(root, "scribble.sh", SCRIBBLE),)), base=ro)
    res = s.call("sh", {"program": "ls"})
    assert res.is_error and res.error is not None and res.error.code == "denied"
    assert "exited 9" in res.error.message and not (root / "scribbled").exists()


@needs_bwrap
def test_a_missing_hook_program_fails_closed(root: Path, state_dir: Path) -> None:
    s = hooked(root, state_dir, Hook("before", ("./absent.sh",)))
    res = s.call("sh", {"program": "touch", "arguments": ["made"]})
    assert res.is_error and res.error is not None and res.error.code == "not_found"
    assert "hook 'absent.sh'" in res.error.message and not (root / "made").exists()


def test_toml_hooks_and_extension_keeps_the_parents(root: Path, tmp_path: Path) -> None:
    (tmp_path / "user.toml").write_text(
        """
[shell.runtimes.base]
extends = "builtin:workspace-development@1"
hooks = [{ event = "before", command = ["./guard.sh", "--strict"], id = "guard" }]
[shell.runtimes.child]
extends = "base"
[[shell.runtimes.child.hooks]]
event = "after"
command = "./note.sh 'two words'"
"""
    )
    cfg = shell_config(load_config(root, user_path=tmp_path / "user.toml"), root)
    assert cfg.runtimes["base"].hooks == (Hook("before", ("./guard.sh", "--strict"), "guard"),)
    assert cfg.runtimes["child"].hooks == (
        Hook("before", ("./guard.sh", "--strict"), "guard"),
        Hook("after", ("./note.sh", "two words")),
    )


@pytest.mark.parametrize(
    ("hooks", "needle"),
    [
        ('[{ event = "during", command = ["x"] }]', "'before' (may refuse the command) or 'after'"),
        ('[{ event = "before" }]', "give the program"),
        ('[{ event = "before", command = ["x"], when = "always" }]', "unknown hooks[0] setting 'when'"),
        ('{ event = "before" }', "expected a list"),
    ],
)
def test_toml_hook_errors(root: Path, tmp_path: Path, hooks: str, needle: str) -> None:
    (tmp_path / "user.toml").write_text(f"[shell.runtimes.x]\nhooks = {hooks}\n")
    with pytest.raises(ConfigError) as exc:
        shell_config(load_config(root, user_path=tmp_path / "user.toml"), root)
    assert needle in str(exc.value)


def el(tag: str, attrs: dict, *children: Element, line: int = 1) -> Element:
    return Element(tag, attrs, list(children), Position(Path("p.chatmd"), line, 1))


def test_chatmd_hooks(root: Path) -> None:
    rt = runtime_from_element(
        el("shell_access", {"id": "dev"}, el("hooks", {}, el("hook", {"event": "before", "command": "./g.sh -v"}))),
        base_dir=root,
    )
    assert rt.hooks == (Hook("before", ("./g.sh", "-v")),)
    bad = el("shell_access", {"id": "dev"}, el("hooks", {}, el("hook", {"event": "before", "cmd": "x"}, line=4)))
    with pytest.raises(ChatmdError) as exc:
        runtime_from_element(bad, base_dir=root)
    assert exc.value.pos is not None and exc.value.pos.line == 4 and "unknown attribute 'cmd'" in str(exc.value)


def test_build_runtime_reports_the_hook_key() -> None:
    seen: list[str] = []

    def fail(message: str, key: str):  # type: ignore[no-untyped-def]
        seen.append(key)
        raise ValueError(message)

    with pytest.raises(ValueError):
        build_runtime(
            "x", {"hooks": [{"event": "after", "command": []}]}, known={}, base_dir=".", origin="t", fail=fail
        )
    assert seen == ["hooks[0].command"]


@needs_bwrap
def test_cli_runs_a_project_hook(root: Path, state_dir: Path) -> None:
    script(root, "guard.sh", GUARD)
    (root / ".tooldeck.toml").write_text(
        """
[shell.runtimes.default]
extends = "builtin:workspace-development@1"
hooks = [{ event = "before", command = "./guard.sh" }]
[shell.runtimes.default.policy]
default = "allow"
"""
    )
    approve(root, state_dir)
    done = cli(root, state_dir, "shell", {"program": "echo", "arguments": ["forbidden"]})
    assert done.returncode != 0 and "no forbidden things" in (done.stdout + done.stderr)
    done = cli(root, state_dir, "shell", {"program": "echo", "arguments": ["fine"]})
    assert done.returncode == 0 and "fine" in done.stdout, done.stderr
