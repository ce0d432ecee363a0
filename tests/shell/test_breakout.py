"""Break-out attempts: each one is refused before it runs, or runs and is contained.

"Contained" is always checked on the host: the file that must not appear does
not, the listener that must not be reached was not, the process that must
die is gone.
"""

from __future__ import annotations

import os
import socket
import stat
import subprocess
from dataclasses import replace
from pathlib import Path

import pytest

from tests.shell.shell_harness import Shell, dev_runtime, needs_bwrap
from tooldeck.shell.profiles import BUILTIN, Policy
from tooldeck.shell.spec import ShellToolSpec

pytestmark = needs_bwrap


def _refused(shell: Shell, tool: str, args: dict, code: str) -> str:
    res = shell.call(tool, args)
    assert res.is_error, f"expected a refusal, got: {res.text[:400]}"
    assert res.error is not None and res.error.code == code, res.text
    return res.error.message


# --- literal argv: shell syntax inside structured arguments means nothing ---------------------


@pytest.mark.parametrize(
    "arg",
    ["a; touch pwned", "$(touch pwned)", "`touch pwned`", "a && touch pwned", "a | tee pwned", "> pwned", "*"],
)
def test_structured_arguments_are_literal(shell: Shell, root: Path, arg: str) -> None:
    (root / "keep.txt").write_text("x")
    out = shell.structured("sh", {"program": "echo", "arguments": [arg]})
    assert out["stdout"] == arg + "\n"  # echoed verbatim: no substitution, no glob, no redirection
    assert not (root / "pwned").exists()


def test_structured_program_with_shell_syntax_is_not_a_command(shell: Shell, root: Path) -> None:
    _refused(shell, "sh", {"program": "echo hi; touch pwned"}, "not_found")
    assert not (root / "pwned").exists()


# --- chain grammar: everything beyond words and | ; && || is refused ---------------------------


@pytest.mark.parametrize(
    ("command", "hint"),
    [
        ("echo $(touch pwned)", "substitution"),
        ("echo `touch pwned`", "backticks"),
        ("echo hi > pwned", "redirection"),
        ("echo hi >> pwned", "redirection"),
        ("cat < /etc/hostname", "stdin"),
        ("cat <<EOF\nhi\nEOF", "heredoc"),
        ("ls *.txt", "globs"),
        ("ls ?", "globs"),
        ("sleep 1 &", "background"),
        ("(touch pwned)", "subshell"),
        ("{ touch pwned; }", "brace"),
        ("echo $HOME", "variable"),
        ("FOO=1 touch pwned", "assignments"),
        ("cat ~/.ssh/id_rsa", "tilde"),
    ],
)
def test_chain_refuses_shell_power(shell: Shell, root: Path, command: str, hint: str) -> None:
    message = _refused(shell, "ch", {"command": command}, "invalid_arguments")
    assert hint in message
    assert not (root / "pwned").exists()


# --- the policy sees through paths, links and wrappers -----------------------------------------


def test_absolute_path_to_denied_binary(shell: Shell, root: Path) -> None:
    (root / "victim").write_text("x")
    _refused(shell, "sh", {"program": "/usr/bin/rm", "arguments": ["victim"]}, "denied")
    assert (root / "victim").exists()


def test_symlinked_binary_is_judged_by_its_target(shell: Shell, root: Path) -> None:
    (root / "victim").write_text("x")
    os.symlink("/usr/bin/rm", root / "harmless")
    _refused(shell, "sh", {"program": "./harmless", "arguments": ["victim"]}, "denied")
    assert (root / "victim").exists()


def test_path_hijack_by_a_file_in_the_workspace(shell: Shell, root: Path) -> None:
    fake = root / "ls"
    fake.write_text("#!/bin/sh\necho HIJACKED\n")
    fake.chmod(fake.stat().st_mode | stat.S_IXUSR)
    out = shell.structured("sh", {"program": "ls", "arguments": ["-1"], "cwd": "."})
    assert "HIJACKED" not in out["stdout"] and "ls" in out["stdout"]  # /usr/bin/ls listed the fake file


@pytest.mark.parametrize(
    "argv",
    [
        ["env", "rm", "victim"],
        ["env", "-i", "FOO=1", "rm", "victim"],
        ["xargs", "rm"],
        ["xargs", "-n", "1", "rm"],
        ["find", ".", "-name", "victim", "-exec", "rm", "{}", ";"],
        ["find", ".", "-execdir", "/usr/bin/rm", "{}", "+"],
        ["timeout", "5", "rm", "victim"],
        ["nice", "-n", "5", "rm", "victim"],
        ["sh", "-c", "rm victim"],
        ["bash", "-c", "echo hi && rm victim"],
        ["env", "sh", "-c", "xargs rm"],
    ],
)
def test_wrappers_around_a_denied_program(shell: Shell, root: Path, argv: list[str]) -> None:
    (root / "victim").write_text("x")
    res = shell.call("sh", {"program": argv[0], "arguments": argv[1:], "stdin": "victim\n"})
    assert res.is_error and res.error is not None and res.error.code == "denied", res.text
    assert "no-rm" in res.error.message
    assert (root / "victim").exists()


@pytest.mark.parametrize(
    "argv",
    [
        ["sh", "-c", "rm victim > /dev/null"],  # not inspectable: arbitrary code
        ["bash"],  # reads commands from stdin
        ["env", "-S", "rm victim"],
        ["sudo", "rm", "victim"],
        ["git", "-c", "core.pager=rm victim", "log"],
    ],
)
def test_uninspectable_code_is_denied_without_raw(shell: Shell, root: Path, argv: list[str]) -> None:
    (root / "victim").write_text("x")
    message = _refused(shell, "sh", {"program": argv[0], "arguments": argv[1:], "stdin": "rm victim\n"}, "denied")
    assert "raw=deny" in message or "no-rm" in message
    assert (root / "victim").exists()


# --- the sandbox contains what the policy allowed ----------------------------------------------


def test_no_network_from_a_no_network_profile(shell: Shell) -> None:
    with socket.socket() as srv:
        srv.bind(("127.0.0.1", 0))
        srv.listen(1)
        port = srv.getsockname()[1]
        code = (
            "import socket\ntry:\n"
            f"    socket.create_connection(('127.0.0.1', {port}), timeout=2); print('CONNECTED')\n"
            "except OSError as e:\n    print('refused', e)"
        )
        out = shell.structured("sh", {"program": "python3", "arguments": ["-c", code]})
        srv.setblocking(False)
        with pytest.raises(BlockingIOError):  # nothing reached the host's listener
            srv.accept()
    assert "refused" in out["stdout"] and "CONNECTED" not in out["stdout"]


def test_write_outside_write_roots(shell: Shell, tmp_path: Path) -> None:
    outside = tmp_path / "outside"
    outside.mkdir()
    out = shell.structured("sh", {"program": "touch", "arguments": [str(outside / "pwned"), "/etc/pwned"]})
    assert out["exit_code"] != 0
    assert not (outside / "pwned").exists() and not Path("/etc/pwned").exists()


def test_private_tmp_does_not_reach_the_host(shell: Shell) -> None:
    marker = f"/tmp/tooldeck-breakout-{os.getpid()}"
    out = shell.structured("sh", {"program": "touch", "arguments": [marker]})
    assert out["exit_code"] == 0  # allowed, but into the sandbox's own /tmp
    assert not os.path.exists(marker)


def test_symlink_in_a_write_root_leads_nowhere_writable(shell: Shell, root: Path, tmp_path: Path) -> None:
    outside = tmp_path / "elsewhere"
    outside.mkdir()
    os.symlink(outside, root / "link")
    out = shell.structured("sh", {"program": "touch", "arguments": ["link/pwned"]})
    assert out["exit_code"] != 0
    assert not (outside / "pwned").exists()


@pytest.mark.parametrize("target", [".git/hooks/pre-commit", ".git/config"])
def test_git_dir_is_read_only_inside_a_write_root(shell: Shell, root: Path, target: str) -> None:
    (root / ".git" / "hooks").mkdir(parents=True)
    (root / ".git" / "config").write_text("[core]\n")
    out = shell.structured("sh", {"program": "cp", "arguments": ["/etc/hostname", target]})
    assert out["exit_code"] != 0 and "Read-only" in out["stderr"]
    assert (root / ".git" / "config").read_text() == "[core]\n"
    assert not (root / ".git" / "hooks" / "pre-commit").exists()


def test_read_only_profile_cannot_write_the_workspace(root: Path, state_dir: Path) -> None:
    rt = replace(BUILTIN["builtin:workspace-readonly@1"], policy=Policy(default="allow"))
    s = Shell(root, state_dir).add(ShellToolSpec(name="ro", mode="structured", runtime=rt.id, result="structured"), rt)
    out = s.structured("ro", {"program": "touch", "arguments": ["pwned"]})
    assert out["exit_code"] != 0 and not (root / "pwned").exists()


def test_state_directory_is_hidden_even_inside_a_root(root: Path) -> None:
    state = root / ".state"
    state.mkdir()
    (state / "secret.txt").write_text("TOPSECRET")
    rt = dev_runtime()
    s = Shell(root, state).add(ShellToolSpec(name="sh", mode="structured", runtime=rt.id, result="structured"), rt)
    out = s.structured("sh", {"program": "cat", "arguments": [".state/secret.txt", ".state/shell-audit.jsonl"]})
    assert out["exit_code"] != 0 and "TOPSECRET" not in out["stdout"]
    assert (state / "shell-audit.jsonl").exists()  # the audit log was written, just not visible inside


def test_home_directory_is_not_visible(shell: Shell) -> None:
    out = shell.structured("sh", {"program": "ls", "arguments": [str(Path.home())]})
    assert out["exit_code"] != 0


def test_cwd_cannot_leave_the_roots(shell: Shell) -> None:
    _refused(shell, "sh", {"program": "ls", "cwd": "../.."}, "outside_roots")


def test_nul_byte_in_an_argument(shell: Shell) -> None:
    _refused(shell, "sh", {"program": "echo", "arguments": ["a\x00b"]}, "invalid_arguments")


def test_raw_mode_is_off_unless_the_runtime_allows_it(root: Path, state_dir: Path) -> None:
    rt = dev_runtime()
    spec = ShellToolSpec(name="raw", mode="raw", runtime=rt.id, command=("bash", "-c"))
    s = Shell(root, state_dir).add(spec, rt)
    _refused(s, "raw", {"code": "touch pwned"}, "denied")
    assert not (root / "pwned").exists()
    allowed = replace(rt, id="raw-ok", policy=replace(rt.policy, raw="allow"))
    s2 = Shell(root, state_dir).add(replace(spec, name="raw2", runtime="raw-ok"), allowed)
    res = s2.call("raw2", {"code": "echo $((6*7)) > out.txt; cat out.txt"})
    assert not res.is_error and "42" in res.text


def test_git_works_in_a_worktree_but_its_repository_stays_read_only(tmp_path: Path, state_dir: Path) -> None:
    main, wt = tmp_path / "main", tmp_path / "wt"
    git = ["git", "-c", "user.name=t", "-c", "user.email=t@t", "-c", "init.defaultBranch=main"]
    subprocess.run([*git, "init", "-q", str(main)], check=True)
    (main / "f.txt").write_text("x\n")
    subprocess.run([*git, "-C", str(main), "add", "f.txt"], check=True)
    subprocess.run([*git, "-C", str(main), "commit", "-qm", "init"], check=True)
    subprocess.run([*git, "-C", str(main), "worktree", "add", "-q", str(wt)], check=True)
    rt = dev_runtime()
    s = Shell(wt, state_dir).add(ShellToolSpec(name="sh", mode="structured", runtime=rt.id, result="structured"), rt)
    out = s.structured("sh", {"program": "git", "arguments": ["log", "--oneline"]})
    assert out["exit_code"] == 0 and "init" in out["stdout"]
    hook = main / ".git" / "hooks" / "post-checkout"
    out = s.structured("sh", {"program": "cp", "arguments": ["/etc/hostname", str(hook)]})
    assert out["exit_code"] != 0 and not hook.exists()


def test_a_program_outside_what_the_sandbox_shows_is_refused_clearly(shell: Shell, tmp_path: Path) -> None:
    hidden = tmp_path / "bin"
    hidden.mkdir()
    tool = hidden / "tool"
    tool.write_text("#!/bin/sh\necho ran\n")
    tool.chmod(0o755)
    message = _refused(shell, "sh", {"program": str(tool)}, "not_found")
    assert "does not show" in message
