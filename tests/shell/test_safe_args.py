"""Argument rules of the read-only programs, and the readers behind them (no process is run)."""

from __future__ import annotations

import os
import shutil
import subprocess
from pathlib import Path

import pytest

from tooldeck.shell.argscan import OPEN
from tooldeck.shell.env_split import SplitError, split_string
from tooldeck.shell.git_env import harden
from tooldeck.shell.policy import decide
from tooldeck.shell.profiles import BUILTIN, DEFAULT_PATH, READ_ONLY_PROGRAMS, Policy, Rule
from tooldeck.shell.safe_args import PROGRAMS, Context, check
from tooldeck.shell.sed_script import effects
from tooldeck.shell.shell_text import shell_invocation

CTX = Context(cwd="/", roots=(), path_env=DEFAULT_PATH)
READ_ONLY = BUILTIN["builtin:workspace-readonly@1"].policy


def _action(policy: Policy, *argvs: tuple[str, ...], cwd: str = "/", roots: tuple[str, ...] = ()) -> str:
    return decide(policy, list(argvs), path_env=DEFAULT_PATH, cwd=cwd, roots=roots).action


def test_every_read_only_program_has_rules() -> None:
    assert set(READ_ONLY_PROGRAMS) <= set(PROGRAMS)
    assert "find" in READ_ONLY_PROGRAMS and "less" not in READ_ONLY_PROGRAMS  # docs and list agree
    assert all(PROGRAMS[p].why for p in READ_ONLY_PROGRAMS)


ALLOWED = [
    ("sed", "-n", "1,5p", "f"),
    ("sed", "s/a/b/g", "f"),
    ("sed", "-E", "-e", "s/(a|b)+/x/2", "-e", "/^#/d", "f"),
    ("sed", "-n", "/foo/,/bar/{s|a|b|g;p}", "f"),
    ("sed", ":a;N;$!ba;s/\\n/ /g", "f"),
    ("sed", "1a appended; e text, not a command", "f"),
    ("git", "log", "--oneline"),
    ("git", "diff", "HEAD~1"),
    ("git", "show", "--stat", "HEAD"),
    ("git", "branch", "-a", "--contains", "HEAD"),
    ("git", "config", "--get", "user.name"),
    ("git", "stash", "list"),
    ("find", ".", "-name", "*.py"),
    ("sort", "-u", "f"),
    ("sort", "-t,", "-k2", "-to", "f"),  # -to: the separator is "o", not --output
    ("rg", "-n", "foo"),
    ("rg", "--context", "1", "--heading", "foo"),
    ("uniq", "-c", "f"),
    ("xxd", "-l", "64", "f"),
    ("date", "+%s"),
    ("cat", "-n", "f"),
]


@pytest.mark.parametrize("argv", ALLOWED, ids=" ".join)
def test_read_only_forms_stay_allowed(argv: tuple[str, ...]) -> None:
    assert check(argv[0], argv[1:], CTX) == []
    assert _action(READ_ONLY, argv) == "allow"


FLAGGED = [
    (("sed", "-n", "1e id > x", "README.md"), "runs", "e id > x"),
    (("sed", "s/a/b/e", "f"), "runs", "s/a/b/e"),
    (("sed", "--", "e"), "runs", "e"),
    (("sed", "s/a/b/w out", "f"), "writes", "s/a/b/w out"),
    (("sed", "-e", "p", "-e", "W out"), "writes", "W out"),
    (("sed", "-ni", "p", "f"), "writes", "-ni"),
    (("sed", "--in=.bak", "p", "f"), "writes", "--in=.bak"),  # an abbreviation of --in-place
    (("sed", "-f", "script.sed", "f"), "runs", "-f"),
    (("sort", "--compress-program=sh", "f"), "runs", "--compress-program=sh"),
    (("sort", "--compress", "sh", "f"), "runs", "--compress"),
    (("sort", "-uo", "out", "f"), "writes", "-uo"),
    (("sort", "--out=x", "f"), "writes", "--out=x"),
    (("git", "grep", "--open-files-in-pager=touch x", "hello"), "runs", "--open-files-in-pager=touch x"),
    (("git", "grep", "-nOvim", "hello"), "runs", "-nOvim"),
    (("git", "ls-remote", "--upload-pack=touch x", "."), "runs", "--upload-pack=touch x"),
    (("git", "fetch", "--upload=x"), "runs", "--upload=x"),
    (("git", "archive", "--remote=.", "--exec=touch x", "HEAD"), "runs", "--exec=touch x"),
    (("git", "-c", "core.pager=x", "log"), "runs", "-c"),
    (("git", "--config-env=core.pager=X", "log"), "runs", "--config-env=core.pager=X"),
    (("git", "--exec-path=.", "log"), "runs", "--exec-path=."),
    (("git", "log", "--output=x"), "writes", "--output=x"),
    (("git", "diff", "--ext-diff"), "unknown", "--ext-diff"),
    (("git", "log", "--textconv"), "unknown", "--textconv"),
    (("git", "branch", "new"), "writes", "new"),
    (("git", "branch", "-D", "old"), "writes", "-D"),
    (("git", "tag", "v1"), "writes", "v1"),
    (("git", "stash"), "writes", "stash"),
    (("git", "config", "alias.x", "!rm v"), "runs", "config"),
    (("git", "commit", "-m", "x"), "unknown", "commit"),
    (("git", "rebase", "-x", "rm v", "HEAD~1"), "runs", "rebase"),
    (("git", "submodule", "foreach", "rm v"), "runs", "submodule"),
    (("find", ".", "-delete"), "writes", "-delete"),
    (("find", ".", "-exec", "rm", "{}", ";"), "runs", "-exec"),
    (("find", ".", "-okdir", "./x", ";"), "runs", "-okdir"),
    (("find", ".", "-fprintf", "out", "%p"), "writes", "-fprintf"),
    (("find", ".", "-fls", "out"), "writes", "-fls"),
    (("rg", "--pre=sh", "foo"), "runs", "--pre=sh"),
    (("rg", "--pre-glob=*.x", "foo"), "unknown", "--pre-glob=*.x"),
    (("rg", "--hostname-bin", "x", "foo"), "runs", "--hostname-bin"),
    (("xxd", "-r", "in", "out"), "writes", "out"),
    (("uniq", "in", "out"), "writes", "out"),
    (("tree", "-ao", "x"), "writes", "-ao"),
    (("tree", "-R"), "writes", "-R"),
    (("file", "-kC", "-m", "magic"), "writes", "-kC"),
    (("date", "-us", "now"), "writes", "-us"),
    (("date", "0101"), "writes", "0101"),
]


@pytest.mark.parametrize(("argv", "effect", "arg"), FLAGGED, ids=lambda v: " ".join(v) if isinstance(v, tuple) else v)
def test_arguments_that_run_or_write_are_named(argv: tuple[str, ...], effect: str, arg: str) -> None:
    findings = check(argv[0], argv[1:], CTX) or []
    assert any(f.effect == effect and f.arg == arg for f in findings), findings
    decision = decide(READ_ONLY, [argv], path_env=DEFAULT_PATH, cwd="/")
    assert decision.action != "allow"
    assert arg.split("=")[0] in decision.explain() or any(arg in r for r in decision.reasons)


def test_the_reason_reaches_the_decision() -> None:
    decision = decide(READ_ONLY, [("uniq", "in", "out")], path_env=DEFAULT_PATH, cwd="/")
    assert decision.action == "ask"
    assert "uniq: `out` is uniq's OUTPUT file, which it writes (default ask)" in decision.explain()


def test_rg_search_zip_only_with_a_path_the_model_cannot_write(tmp_path: Path) -> None:
    assert check("rg", ["-z", "foo"], CTX) == []
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    ctx = Context(cwd=str(tmp_path), roots=(str(tmp_path),), path_env=f"{bin_dir}:{DEFAULT_PATH}")
    assert [f.effect for f in check("rg", ["-nz", "foo"], ctx) or []] == ["runs"]


def test_an_allow_listed_name_inside_a_root_is_not_the_system_program(tmp_path: Path) -> None:
    fake = tmp_path / "cat"
    fake.write_text("#!/bin/sh\n")
    fake.chmod(0o755)
    assert _action(READ_ONLY, ("cat", "x"), cwd=str(tmp_path), roots=(str(tmp_path),)) == "allow"
    decision = decide(READ_ONLY, [("./cat", "x")], path_env=DEFAULT_PATH, cwd=str(tmp_path), roots=[str(tmp_path)])
    assert decision.action == "ask" and "inside a root" in decision.explain()


# --- git: the repository must be one a model could not have made --------------------------------


def _git_init(path: Path) -> None:
    subprocess.run(["git", "init", "-q", str(path)], check=True)


def test_git_repository_trust(tmp_path: Path) -> None:
    root = tmp_path / "root"
    _git_init(root)
    fake = root / "fake"
    (fake / "objects").mkdir(parents=True)
    (fake / "refs").mkdir()
    (fake / "HEAD").write_text("ref: refs/heads/main\n")
    _git_init(root / "nested")
    ctx = Context(cwd=str(root), roots=(str(root),), path_env=DEFAULT_PATH)
    assert check("git", ["status"], ctx) == []  # the root's own repository
    assert [f.effect for f in check("git", ["--git-dir=fake", "status"], ctx) or []] == ["runs"]
    assert [f.effect for f in check("git", ["-C", "fake", "log"], ctx) or []] == ["runs"]  # found as a bare repo
    assert [f.effect for f in check("git", ["--bare", "-C", "fake", "log"], ctx) or []] == ["runs"]
    assert [f.effect for f in check("git", ["-C", "nested", "log"], ctx) or []] == ["unknown"]  # ask, not deny
    assert [f.effect for f in check("git", ["-C", "not-yet", "log"], ctx) or []] == ["runs"]
    at_fake = Context(cwd=str(fake), roots=(str(root),), path_env=DEFAULT_PATH)
    assert [f.effect for f in check("git", ["log"], at_fake) or []] == ["runs"]


def test_git_hardening_is_appended_after_the_runtime_own_settings() -> None:
    env = harden({"GIT_CONFIG_COUNT": "1", "GIT_CONFIG_KEY_0": "core.fsmonitor", "GIT_CONFIG_VALUE_0": "x"},
                 sandboxed=True)  # fmt: skip
    keys = [env[f"GIT_CONFIG_KEY_{i}"] for i in range(int(env["GIT_CONFIG_COUNT"]))]
    assert keys == ["core.fsmonitor", "core.fsmonitor", "safe.bareRepository", "core.hooksPath"]
    assert env["GIT_CONFIG_VALUE_1"] == "false"  # the later entry wins
    assert "core.hooksPath" not in harden({}, sandboxed=False).values()  # unsandboxed: the person's hooks run


# --- the readers ------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "script",
    ["p", "1,5p", "$!N;P;D", "/a/,/b/d", "\\%x%p", "0~3d", "2,+4p", "1!G;h;$!d", "y/abc/xyz/", "s/a\\/b/c/gI",
     "1{p;p}", "/x/ { n ; d }", "# comment with e\np", "1i\\\ninserted e", "$a tail; w not a file", "q5",
     ":a\nN\nba", "r other-file", "s/x/y/3p"],
)  # fmt: skip
def test_sed_scripts_without_effects(script: str) -> None:
    assert effects(script) == []


@pytest.mark.parametrize(
    ("script", "kind", "command"),
    [("e id", "runs", "id"), ("1e touch x", "runs", "touch x"), ("e", "runs", None), ("s/a/b/e", "runs", None),
     ("s|a|b|ge", "runs", None), ("/x/{e rm v\n}", "runs", "rm v"), ("w out", "writes", None),
     ("1W out", "writes", None), ("s/a/b/w out", "writes", None), ("k", "unreadable", None),
     ("s/a/b", "unreadable", None), ("s/e/b", "runs", None), ("1" + OPEN, "runs", None)],
)  # fmt: skip
def test_sed_scripts_with_effects(script: str, kind: str, command: str | None) -> None:
    """An unreadable script is "runs" when it holds an e (it might be the e command), else "unreadable"."""
    got = effects(script)
    assert [e.kind for e in got] == [kind] and got[0].command == command


@pytest.mark.parametrize(
    ("text", "words"),
    [("rm v", ["rm", "v"]), ("  rm   'a b'  ", ["rm", "a b"]), ('rm "a\\tb"', ["rm", "a\tb"]),
     ("rm\\_v", ["rm", "v"]), ('"a\\_b"', ["a b"]), ("rm v # comment", ["rm", "v"]), ("rm v\\c ignored", ["rm", "v"]),
     ("'it\\'s'", ["it's"]), ("a#b", ["a#b"]), ("'$HOME'", ["$HOME"])],
)  # fmt: skip
def test_env_split_string_like_env(text: str, words: list[str]) -> None:
    assert split_string(text) == words


@pytest.mark.parametrize("text", ["rm ${X}", 'rm "$X"', "rm \\q", "'open", "rm \\"])
def test_env_split_string_refuses_what_it_cannot_know(text: str) -> None:
    with pytest.raises(SplitError):
        split_string(text)


@pytest.mark.parametrize(
    ("name", "args", "code", "arbitrary"),
    [("bash", ["--rcfile", "ls", "-c", "rm v"], "rm v", False),
     ("bash", ["-o", "errexit", "-c", "rm v"], "rm v", False),
     ("bash", ["+O", "extglob", "-ec", "rm v"], "rm v", False), ("sh", ["-c", "--", "rm v"], "rm v", False),
     ("bash", ["--init-file", "x", "-ic", "ls"], None, True), ("bash", ["-lc", "ls"], "ls", False),
     ("bash", ["--login", "-c", "ls"], "ls", False), ("zsh", ["-c", "=rm v"], None, True),
     ("sh", ["script.sh"], None, False), ("sh", [], None, True), ("sh", ["-s"], None, True)],
)  # fmt: skip
def test_shell_options_are_read_like_the_shell(name: str, args: list[str], code: str | None, arbitrary: bool) -> None:
    got, why = shell_invocation(name, args)
    assert got == code and (why is not None) == arbitrary


# --- wrappers: what xargs and find fill in, busybox, builtins ----------------------------------


@pytest.mark.parametrize(
    ("argv", "inner", "arbitrary"),
    [(["xargs", "env"], None, True), (["xargs", "env", "rm"], ("rm", "-" + OPEN), False),
     (["xargs", "-0", "sh"], None, True), (["xargs", "sh", "-c", "rm v"], ("rm", "v"), False),
     (["xargs", "sed", "-n", "1p"], None, True),
     (["xargs", "sed", "-n", "1p", "--"], ("sed", "-n", "1p", "--", OPEN), False),
     (["xargs", "grep", "foo"], ("grep", "foo", "-" + OPEN), False), (["xargs", "git", "log"], None, True),
     (["xargs", "xargs"], None, True), (["xargs", "-I", "R", "R"], None, True),
     (["find", ".", "-exec", "{}", ";"], None, True), (["find", ".", "-exec", "sed", "-n", "{}", ";"], None, True),
     (["find", ".", "-delete"], ("rm", "-r", "-f", "--", OPEN), False),
     (["busybox", "rm", "v"], ("rm", "v"), False), (["busybox", "sh", "-c", "rm v"], ("rm", "v"), False),
     (["sh", "-c", "cd sub && rm v"], None, True), (["sh", "-c", "hash -p /usr/bin/rm ls; ls"], None, True),
     (["sh", "-c", "./not-there"], None, True), (["env", "LD_PRELOAD=./x.so", "ls"], ("ls",), True),
     (["env", "-C", "sub", "./x"], None, True), (["sort", "--compress-program=rm", "f"], ("rm",), False),
     (["sed", "1e rm v", "f"], ("rm", "v"), False), (["git", "fetch", "--upload-pack=x"], None, True)],
)  # fmt: skip
def test_what_wrappers_run(argv: list[str], inner: tuple[str, ...] | None, arbitrary: bool) -> None:
    """``inner`` is judged by the rules; ``arbitrary`` code is refused (raw=deny)."""
    policy = Policy("allow", (Rule("x", "deny", basename="nothing-at-all"),))
    decision = decide(policy, [tuple(argv)], path_env=DEFAULT_PATH, cwd="/")
    if inner is not None:
        assert inner in [c.argv for c in decision.commands]
    assert (decision.action == "deny") == arbitrary, decision.explain()


def test_raw_allow_decides_uninspectable_code_by_the_rules() -> None:
    body = ("sh", "-c", "rm v > /dev/null")
    assert _action(Policy("allow", raw="allow"), body) == "allow"  # nothing to evade: the person allowed code
    assert _action(Policy("ask", raw="allow"), body) == "ask"
    assert _action(Policy("allow", (Rule("r", "ask", basename="rm"),), raw="allow"), body) == "deny"
    assert _action(Policy("allow", raw="deny"), body) == "deny"


def test_a_copy_matches_the_rule_and_one_changed_byte_does_not(tmp_path: Path) -> None:
    rm = shutil.which("rm")
    assert rm is not None
    shutil.copy(rm, tmp_path / "x")
    deny_rm = Policy("allow", (Rule("no-rm", "deny", basename="rm"),))
    assert _action(deny_rm, ("./x", "v"), cwd=str(tmp_path)) == "deny"
    data = bytearray((tmp_path / "x").read_bytes())
    data[-1] ^= 1
    (tmp_path / "y").write_bytes(bytes(data))
    os.chmod(tmp_path / "y", 0o755)
    assert _action(deny_rm, ("./y", "v"), cwd=str(tmp_path)) == "allow"  # the documented limit: the sandbox holds
