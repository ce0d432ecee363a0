"""Break-outs through arguments: allow-listed programs that run code, deny rules evaded.

Every test here runs a real command through a shell tool and checks from the
host that the file it would make never appears, or the file it would delete
is still there. Each passes as root and as an unprivileged user (uid 65534)
with a temporary directory that user owns.
"""

from __future__ import annotations

import os
import subprocess
from dataclasses import replace
from pathlib import Path

import pytest

from tests.shell.shell_harness import DENY_RM, Shell, dev_runtime, needs_bwrap
from tooldeck.shell.profiles import BUILTIN, Limits, Policy, Rule, ShellRuntime
from tooldeck.shell.spec import ShellToolSpec

pytestmark = needs_bwrap

LIMITS = Limits(wall_seconds=10.0, idle_seconds=8.0, output_bytes=4000, stdin_bytes=10_000, processes=40)
GIT = ["git", "-c", "user.name=t", "-c", "user.email=t@t", "-c", "init.defaultBranch=main"]


def _builtin(name: str) -> ShellRuntime:
    """A built-in profile as shipped (default ask, read-only programs allowed), small limits."""
    return replace(BUILTIN[name], limits=LIMITS)


DEV = "builtin:workspace-development@1"  # writes the workspace: what a command runs shows on the host
READ_ONLY = "builtin:workspace-readonly@1"


def _shell(root: Path, state: Path, rt: ShellRuntime) -> Shell:
    s = Shell(root, state)
    s.add(ShellToolSpec(name="sh", mode="structured", runtime=rt.id, result="structured", stdin=True), rt)
    s.add(ShellToolSpec(name="ch", mode="chain", runtime=rt.id, result="structured", stdin=True), rt)
    return s


def _refused(s: Shell, tool: str, args: dict) -> str:
    res = s.call(tool, args)
    assert res.is_error, f"expected a refusal, got: {res.text[:400]}"
    assert res.error is not None and res.error.code == "denied", res.text
    return res.error.message


def _repo(root: Path) -> None:
    (root / "README.md").write_text("hello\n")
    subprocess.run([*GIT, "init", "-q", str(root)], check=True)
    subprocess.run([*GIT, "-C", str(root), "add", "README.md"], check=True)
    subprocess.run([*GIT, "-C", str(root), "commit", "-qm", "init"], check=True)


def _executable(path: Path, text: str) -> Path:
    path.write_text(text)
    path.chmod(0o755)
    return path


# --- allow-listed programs that would run code or write ------------------------------------------

ALLOW_LIST_ATTACKS = [
    pytest.param("sed", ["-n", "1e touch MARK", "README.md"], "1e touch MARK", id="sed-e"),
    pytest.param("sed", ["-n", "s/hello/touch MARK/e", "README.md"], "s/hello/touch MARK/e", id="sed-s-e-flag"),
    pytest.param("sed", ["-n", "w MARK", "README.md"], "w MARK", id="sed-w"),
    pytest.param("sed", ["-i.bak", "s/h/H/", "README.md"], "-i.bak", id="sed-in-place"),
    pytest.param(
        "sort",
        ["--compress-program=./p.sh", "-S", "64K", "-T", ".", "big.txt"],
        "--compress-program",
        id="sort-compress",
    ),
    pytest.param("sort", ["-uoMARK", "README.md"], "-uoMARK", id="sort-output"),
    pytest.param(
        "git", ["grep", "--open-files-in-pager=touch MARK", "hello"], "--open-files-in-pager", id="git-grep-pager"
    ),
    pytest.param("git", ["ls-remote", "--upload-pack=touch MARK", "."], "--upload-pack", id="git-upload-pack"),
    pytest.param("git", ["archive", "--remote=.", "--exec=touch MARK", "HEAD"], "--exec", id="git-archive-exec"),
    pytest.param("git", ["log", "--output=MARK"], "--output", id="git-log-output"),
    pytest.param("git", ["--git-dir=fake", "status"], "fake", id="git-fake-git-dir"),
    pytest.param("uniq", ["README.md", "MARK"], "MARK", id="uniq-output"),
    pytest.param("xxd", ["README.md", "MARK"], "MARK", id="xxd-outfile"),
    pytest.param("find", [".", "-name", "README.md", "-fprint", "MARK"], "-fprint", id="find-fprint"),
    pytest.param("./ls", [], "inside a root", id="allow-listed-name-in-the-workspace"),
]


def _stage(root: Path) -> None:
    _repo(root)
    (root / "big.txt").write_text("".join(f"{i}\n" for i in range(200_000)))
    _executable(root / "p.sh", "#!/bin/sh\ntouch MARK\ncat\n")
    _executable(root / "ls", "#!/bin/sh\ntouch MARK\n")
    fake = root / "fake"  # a git directory made with plain file writes: HEAD, objects/, refs/, config
    (fake / "objects").mkdir(parents=True)
    (fake / "refs" / "heads").mkdir(parents=True)
    (fake / "HEAD").write_text("ref: refs/heads/main\n")
    (fake / "config").write_text("[core]\n\trepositoryformatversion = 0\n\tbare = false\n\tworktree = ..\n"
                                 "\tfsmonitor = touch MARK\n")  # fmt: skip


@pytest.mark.parametrize(("program", "arguments", "named"), ALLOW_LIST_ATTACKS)
def test_allow_listed_program_cannot_run_code_or_write(
    root: Path, state_dir: Path, program: str, arguments: list[str], named: str
) -> None:
    _stage(root)
    s = _shell(root, state_dir, _builtin(DEV))
    message = _refused(s, "sh", {"program": program, "arguments": arguments})
    assert named in message  # the message names the argument
    assert not (root / "MARK").exists()
    assert (root / "README.md").read_text() == "hello\n" and not (root / "README.md.bak").exists()


@pytest.mark.parametrize(
    ("program", "arguments"),
    [("sed", ["-n", "1e touch MARK", "README.md"]), ("git", ["grep", "--open-files-in-pager=touch MARK", "hello"]),
     ("git", ["--git-dir=fake", "status"])],
)  # fmt: skip
def test_read_only_profile_refuses_code_through_allowed_programs(
    root: Path, state_dir: Path, program: str, arguments: list[str]
) -> None:
    _stage(root)
    s = _shell(root, state_dir, _builtin(READ_ONLY))
    _refused(s, "sh", {"program": program, "arguments": arguments})
    assert not (root / "MARK").exists()


def test_fake_git_dir_as_cwd_is_refused(root: Path, state_dir: Path) -> None:
    _stage(root)
    s = _shell(root, state_dir, _builtin(DEV))
    _refused(s, "sh", {"program": "git", "arguments": ["status"], "cwd": "fake"})
    assert not (root / "MARK").exists()


def test_read_only_forms_still_run(root: Path, state_dir: Path) -> None:
    _stage(root)
    s = _shell(root, state_dir, _builtin(READ_ONLY))
    cases = [
        ("sed", ["-n", "1,5p", "README.md"], "hello"),
        ("sed", ["s/hello/bye/g", "README.md"], "bye"),
        ("git", ["log", "--oneline"], "init"),
        ("git", ["diff", "HEAD"], ""),
        ("find", [".", "-name", "*.md"], "README.md"),
        ("sort", ["-u", "README.md"], "hello"),
        ("uniq", ["-c", "README.md"], "hello"),
    ]
    for program, arguments, expected in cases:
        out = s.structured("sh", {"program": program, "arguments": arguments})
        assert out["exit_code"] == 0 and expected in out["stdout"], (program, arguments, out)


# --- deny rules see through wrappers, copies and uninspectable code ---------------------------


def _victim(root: Path) -> Path:
    v = root / "v"
    v.write_text("keep me\n")
    return v


DENY_EVASIONS = [
    pytest.param("sh", {"program": "env", "arguments": ["--split-string=rm v"]}, id="env-split-string"),
    pytest.param("sh", {"program": "env", "arguments": ["-iS", "rm v"]}, id="env-iS"),
    pytest.param("sh", {"program": "env", "arguments": ["-Srm v"]}, id="env-S-attached"),
    pytest.param("sh", {"program": "env", "arguments": ["-", "rm", "v"]}, id="env-dash"),
    pytest.param("sh", {"program": "sh", "arguments": ["-c", "if true; then rm v; fi"]}, id="sh-if"),
    pytest.param("sh", {"program": "bash", "arguments": ["--rcfile", "ls", "-c", "rm v"]}, id="bash-rcfile"),
    pytest.param("sh", {"program": "bash", "arguments": ["-o", "errexit", "-c", "rm v"]}, id="bash-o"),
    pytest.param("ch", {"command": "printf 'rm\\nv\\n' | xargs env"}, id="xargs-env"),
    pytest.param("sh", {"program": "xargs", "arguments": ["-rn", "1", "rm"], "stdin": "v\n"}, id="xargs-clustered"),
    pytest.param(
        "sh",
        {"program": "xargs", "arguments": ["-IX", "sh", "-c", "echo X"], "stdin": "x; rm v\n"},
        id="xargs-I-into-shell",
    ),
    pytest.param("sh", {"program": "find", "arguments": [".", "-name", "v", "-delete"]}, id="find-delete"),
    pytest.param(
        "sh",
        {"program": "find", "arguments": [".", "-name", "a*", "-exec", "sh", "-c", "echo '{}'", ";"]},
        id="find-exec-name-into-shell",
    ),
    pytest.param("sh", {"program": "sed", "arguments": ["-n", "1e rm v", "v"]}, id="sed-e"),
    pytest.param("sh", {"program": "./e", "arguments": ["rm", "v"]}, id="symlinked-env"),
]


@pytest.mark.parametrize(("tool", "args"), DENY_EVASIONS)
def test_deny_rule_sees_through(root: Path, state_dir: Path, tool: str, args: dict) -> None:
    victim = _victim(root)
    (root / "a';rm v;'").write_text("")  # a file name that is shell code once find puts it in a text
    os.symlink("/usr/bin/env", root / "e")
    s = _shell(root, state_dir, dev_runtime(wall_seconds=10.0, idle_seconds=8.0))
    _refused(s, tool, args)
    assert victim.read_text() == "keep me\n"


def test_a_copied_binary_is_judged_by_what_it_is(root: Path, state_dir: Path) -> None:
    victim = _victim(root)
    s = _shell(root, state_dir, dev_runtime(wall_seconds=10.0, idle_seconds=8.0))
    out = s.structured("sh", {"program": "cp", "arguments": ["/usr/bin/rm", "x"]})
    assert out["exit_code"] == 0 and (root / "x").exists()
    message = _refused(s, "sh", {"program": "./x", "arguments": ["v"]})
    assert "no-rm" in message
    _refused(s, "ch", {"command": "env ./x v"})
    assert victim.read_text() == "keep me\n"


def test_a_copied_wrapper_is_looked_inside(root: Path, state_dir: Path) -> None:
    victim = _victim(root)
    s = _shell(root, state_dir, dev_runtime(wall_seconds=10.0, idle_seconds=8.0))
    out = s.structured("sh", {"program": "cp", "arguments": ["/usr/bin/env", "e2"]})
    assert out["exit_code"] == 0 and (root / "e2").exists()
    message = _refused(s, "sh", {"program": "./e2", "arguments": ["rm", "v"]})
    assert "no-rm" in message
    assert victim.read_text() == "keep me\n"


def test_a_regex_rule_matches_the_program_by_its_resolved_name(root: Path, state_dir: Path) -> None:
    (root / "d").mkdir()
    (root / "d" / "f").write_text("x")
    rule = Rule(id="no-rm-r", action="deny", regex=r"^rm .*-[a-zA-Z]*r")  # the example in docs/shell.md
    rt = replace(dev_runtime(), policy=Policy(default="allow", rules=(rule,)))
    s = _shell(root, state_dir, rt)
    _refused(s, "sh", {"program": "/usr/bin/rm", "arguments": ["-r", "d"]})
    assert (root / "d" / "f").exists()


def test_uninspectable_code_is_refused_when_raw_is_allowed_but_rules_would_be_evaded(
    root: Path, state_dir: Path
) -> None:
    victim = _victim(root)
    rt = dev_runtime()
    rt = replace(rt, id="raw-ok", policy=replace(rt.policy, raw="allow"))
    s = _shell(root, state_dir, rt)
    message = _refused(s, "sh", {"program": "sh", "arguments": ["-c", "rm v > /dev/null"]})
    assert "deny/ask rules" in message
    assert victim.read_text() == "keep me\n"


def test_git_hooks_and_fsmonitor_of_a_nested_repository_do_not_run(root: Path, state_dir: Path) -> None:
    # deeper than the sandbox's scan for nested .git (bound read-only there): a repository the sandbox
    # leaves writable, as one the model created during a run would be; the git hardening still holds
    sub = root / "a" / "b" / "c" / "d" / "e" / "sub"
    sub.parent.mkdir(parents=True)
    subprocess.run([*GIT, "init", "-q", str(sub)], check=True)
    subprocess.run(["git", "-C", str(sub), "config", "user.name", "t"], check=True)
    subprocess.run(["git", "-C", str(sub), "config", "user.email", "t@t"], check=True)
    subprocess.run(["git", "-C", str(sub), "config", "core.fsmonitor", f"touch {root}/FSMON"], check=True)
    _executable(sub / ".git" / "hooks" / "pre-commit", f"#!/bin/sh\ntouch {root}/HOOK\n")
    rt = replace(dev_runtime(wall_seconds=10.0, idle_seconds=8.0), policy=Policy(default="allow", rules=(DENY_RM,)))
    s = _shell(root, state_dir, rt)
    deep = "a/b/c/d/e/sub"
    out = s.structured("sh", {"program": "git", "arguments": ["-C", deep, "commit", "--allow-empty", "-qm", "x"]})
    assert out["exit_code"] == 0, out  # git works in the nested repository ...
    out = s.structured("sh", {"program": "git", "arguments": ["-C", deep, "status"]})
    assert out["exit_code"] == 0, out
    assert not (root / "HOOK").exists() and not (root / "FSMON").exists()  # ... but runs none of its commands
