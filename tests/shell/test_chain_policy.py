"""The chain grammar, wrapper inspection and policy precedence (no process is run)."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from tooldeck.shell.argscan import OPEN
from tooldeck.shell.chain import ChainSyntaxError, parse_chain
from tooldeck.shell.policy import decide, resolve
from tooldeck.shell.profiles import DEFAULT_PATH, Policy, Rule
from tooldeck.shell.wrappers import inspect_argv


def test_chain_words_quotes_and_operators() -> None:
    chain = parse_chain("""git log --format='%h %s' | head -n 3 && echo "a \\"b\\" c" || echo x\\ y; true""")
    assert [s.op for s in chain.steps] == [None, "&&", "||", ";"]
    assert chain.steps[0].pipeline == (("git", "log", "--format=%h %s"), ("head", "-n", "3"))
    assert chain.steps[1].pipeline == (("echo", 'a "b" c'),)
    assert chain.steps[2].pipeline == (("echo", "x y"),)


def test_chain_quoted_specials_are_literal() -> None:
    chain = parse_chain("find . -name '*.py' -o -name \"[ab]?\" ; echo '$(x)' 'a > b' 'FOO=1'")
    assert chain.argvs()[0][3] == "*.py" and chain.argvs()[0][6] == "[ab]?"
    assert chain.argvs()[1] == ("echo", "$(x)", "a > b", "FOO=1")


@pytest.mark.parametrize(
    "text",
    ["", "   ", "| ls", "ls |", "ls &&", "ls || || ls", "echo 'open", 'echo "open', "echo \"$(x)\"", "echo \"`x`\"",
     "echo \"$HOME\"", "ls\x00", "! ls", "# comment", "a\\", "ls && ; ls"],
)  # fmt: skip
def test_chain_rejects(text: str) -> None:
    with pytest.raises(ChainSyntaxError):
        parse_chain(text)


def test_chain_error_says_what_to_do() -> None:
    with pytest.raises(ChainSyntaxError) as exc:
        parse_chain("make > log.txt")
    assert "file tools" in str(exc.value) and "character 6" in str(exc.value)


def test_newline_is_a_separator() -> None:
    assert [s.op for s in parse_chain("echo a\necho b\n").steps] == [None, ";"]


@pytest.mark.parametrize(
    ("argv", "inner"),
    [
        (["env", "-u", "X", "A=1", "rm", "f"], ("rm", "f")),
        (["timeout", "-s", "KILL", "5", "rm"], ("rm",)),
        (["xargs", "-I", "{}", "rm", "{}"], ("rm", "-" + OPEN)),  # a whole input line: may start with "-"
        (["xargs"], ("echo", "-" + OPEN)),  # echo, with the words of stdin appended
        (["find", ".", "-exec", "rm", "{}", ";", "-print"], ("rm", OPEN)),  # a found path
        (["stdbuf", "-oL", "rm"], ("rm",)),
        (["nohup", "setsid", "rm"], ("rm",)),
        (["sh", "-c", "ls | rm x"], ("rm", "x")),
        (["/usr/bin/env", "bash", "-c", "rm y"], ("rm", "y")),
    ],
)
def test_wrappers_are_unwrapped(argv: list[str], inner: tuple[str, ...]) -> None:
    insp = inspect_argv(argv)
    assert inner in insp.argvs and not insp.arbitrary


@pytest.mark.parametrize(
    "argv",
    [["sh", "-c", "ls > x"], ["bash"], ["sh", "-s"], ["sudo", "ls"], ["env", "-S", "${X} ls"], ["git", "-c", "a=b"]],
)
def test_uninspectable_is_arbitrary(argv: list[str]) -> None:
    assert inspect_argv(argv).arbitrary


def _decide(policy: Policy, *argvs: tuple[str, ...], **kw: bool) -> str:
    return decide(policy, list(argvs), path_env=DEFAULT_PATH, cwd="/", **kw).action


def test_precedence_is_by_severity_not_order() -> None:
    rules = (
        Rule("allow-git", "allow", basename="git"),
        Rule("ask-push", "ask", prefix=("git", "push")),
        Rule("deny-force", "deny", contains="--force"),
    )
    p = Policy(default="deny", rules=rules)
    assert _decide(p, ("git", "status")) == "allow"
    assert _decide(p, ("git", "push")) == "ask"
    assert _decide(p, ("git", "push", "--force")) == "deny"
    assert _decide(Policy(default="deny", rules=tuple(reversed(rules))), ("git", "push", "--force")) == "deny"
    assert _decide(p, ("ls",)) == "deny"  # no rule: the default
    assert _decide(p, ("git", "status"), ("ls",)) == "deny"  # a chain is as strict as its strictest command
    assert _decide(p, ("ls",), ("git", "status")) == "deny"  # whatever the order (a mutant kept the last)
    assert _decide(p, ("git", "push"), ("git", "status")) == "ask"


def test_matchers() -> None:
    resolved_ls = resolve("ls", DEFAULT_PATH, "/")[1]
    assert resolved_ls is not None
    cases = [
        (Rule("r", "deny", program="ls"), ("ls",), True),
        (Rule("r", "deny", program="ls"), ("/usr/bin/ls",), False),
        (Rule("r", "deny", basename="ls"), ("/usr/bin/ls",), True),
        (Rule("r", "deny", path=resolved_ls), ("ls",), True),
        (Rule("r", "deny", path="/usr/*/l?"), ("ls",), True),
        (Rule("r", "deny", prefix=("ls", "-la")), ("ls", "-la", "x"), True),
        (Rule("r", "deny", prefix=("ls", "-la")), ("ls", "-l"), False),
        (Rule("r", "deny", contains="secret"), ("cat", "my-secret.txt"), True),
        (Rule("r", "deny", regex=r"^cat .*\.env$"), ("cat", "a/.env"), True),
        (Rule("r", "deny", basename="cat", contains="x"), ("cat", "y"), False),  # AND of matchers
    ]
    for rule, argv, hit in cases:
        assert (_decide(Policy("allow", (rule,)), argv) == "deny") is hit, (rule, argv)


def test_symlink_and_copy_names_resolve(tmp_path: Path) -> None:
    os.symlink("/usr/bin/rm", tmp_path / "innocent")
    found, real = resolve("./innocent", DEFAULT_PATH, str(tmp_path))
    assert found == str(tmp_path / "innocent") and real is not None and os.path.basename(real) == "rm"
    assert _decide(Policy("allow", (Rule("r", "deny", basename="rm"),)), ("/usr/bin/env", "rm")) == "deny"


def test_declared_command_skips_the_default_but_not_the_rules() -> None:
    p = Policy(default="ask", rules=(Rule("no-push", "deny", prefix=("git", "push")),))
    assert _decide(p, ("make", "test"), declared=True) == "allow"
    assert _decide(p, ("git", "push"), declared=True) == "deny"
    assert _decide(p, ("env", "make"), declared=True) == "ask"  # the wrapped program still takes the default


def test_raw_code_follows_policy_raw() -> None:
    assert _decide(Policy("allow", raw="deny"), ("bash", "-c", "x > y"), raw_code=True) == "deny"
    assert _decide(Policy("ask", raw="allow"), ("bash", "-c", "x > y"), raw_code=True) == "allow"
    # a wrapper running code tooldeck cannot inspect counts as raw code in a plain argv request too
    for argv in (("git", "-c", "core.pager=sh", "log"), ("env", "-S", "ls $(rm x)")):
        assert _decide(Policy("allow", raw="deny"), argv) == "deny", argv
        assert _decide(Policy("allow", raw="allow"), argv) == "allow", argv
    # env -S is seen through: a plain split command is the command itself, not raw code
    assert _decide(Policy("allow", raw="deny"), ("env", "-S", "ls")) == "allow"


def test_a_relative_path_entry_is_never_searched(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A relative PATH entry would let a file in the workspace shadow a system
    program (its rules match by name, path or real path)."""
    fake = tmp_path / "bin" / "ls"
    fake.parent.mkdir()
    fake.write_text("#!/bin/sh\necho pwned\n")
    fake.chmod(0o755)
    monkeypatch.chdir(tmp_path)  # where a relative entry would be looked up
    found, real = resolve("ls", "bin:/usr/bin:/bin", str(tmp_path))
    assert found is not None and found.startswith("/") and real != str(fake)
    assert resolve("ls", "bin", str(tmp_path)) == (None, None)
