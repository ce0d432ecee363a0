"""Programs that run other programs: look inside them before the policy decides.

Why: a rule that denies ``rm`` means little if ``env rm``, ``xargs rm``,
``find . -exec rm {} ;``, ``timeout 5 rm`` or ``sh -c 'rm x'`` slip past it.
Known wrappers are unwrapped by reading their argv the way the wrapper does;
a shell's ``-c`` text is parsed with the chain grammar; whatever cannot be
inspected (``sh -c`` with redirections, ``env -S``, ``git -c``, ``sudo``...) is
classified as *arbitrary code*, which the policy's ``raw`` setting decides
(deny unless the runtime allows it).
"""

from __future__ import annotations

import os
from dataclasses import dataclass, field

from tooldeck.shell.chain import ChainSyntaxError, parse_chain

SHELLS = frozenset({"sh", "bash", "dash", "zsh", "ksh", "mksh", "ash", "fish", "csh", "tcsh", "busybox"})
OPAQUE = frozenset(
    {"sudo", "doas", "su", "pkexec", "runuser", "chroot", "unshare", "nsenter", "bwrap", "firejail", "parallel",
     "watch", "strace", "ltrace", "gdb", "script", "expect", "flock", "eval", "exec", "command", "builtin", "ssh"}
)  # fmt: skip
# wrapper -> options that take a value (the value is the next word unless attached)
_OPTS_WITH_VALUE: dict[str, frozenset[str]] = {
    "env": frozenset({"-u", "--unset", "-C", "--chdir"}),
    "nice": frozenset({"-n", "--adjustment"}),
    "timeout": frozenset({"-s", "--signal", "-k", "--kill-after"}),
    "stdbuf": frozenset({"-i", "-o", "-e", "--input", "--output", "--error"}),
    "setsid": frozenset(),
    "nohup": frozenset(),
    "ionice": frozenset({"-c", "--class", "-n", "--classdata"}),
    "taskset": frozenset(),
    "time": frozenset({"-f", "--format", "-o", "--output"}),
    "xargs": frozenset(
        {
            "-a",
            "--arg-file",
            "-d",
            "--delimiter",
            "-E",
            "-I",
            "-L",
            "--max-lines",
            "-n",
            "--max-args",
            "-P",
            "--max-procs",
            "-s",
            "--max-chars",
            "--process-slot-var",
            "--eof",
            "--replace",
        }
    ),
}
_ARBITRARY_FLAGS = {"env": ("-S", "--split-string"), "ionice": ("-p", "--pid"), "git": ("-c", "--config-env")}


@dataclass
class Inspection:
    """Every argv that would run (the outer one first) and the reasons, if any,
    that part of the command cannot be inspected."""

    argvs: list[tuple[str, ...]] = field(default_factory=list)
    arbitrary: list[str] = field(default_factory=list)


def _name(word: str) -> str:
    return os.path.basename(word)


def _skip_options(name: str, args: list[str]) -> tuple[int, str | None]:
    """Index of the wrapped command in ``args`` (after options), or a reason it is unclear."""
    with_value = _OPTS_WITH_VALUE[name]
    i = 0
    while i < len(args):
        a = args[i]
        if a == "--":
            return i + 1, None
        if name in _ARBITRARY_FLAGS and (a in _ARBITRARY_FLAGS[name] or a.startswith(_ARBITRARY_FLAGS[name][0])):
            return len(args), f"`{name} {a}` builds a command tooldeck cannot inspect"
        if not a.startswith("-") or a == "-":
            if name == "env" and "=" in a:  # NAME=value assignments before the command
                i += 1
                continue
            return i, None
        i += 2 if a in with_value else 1
    return len(args), None


def _after_wrapper(name: str, args: list[str]) -> tuple[list[str], str | None]:
    start, why = _skip_options(name, args)
    rest = args[start:]
    if why is not None:
        return [], why
    if name in ("timeout", "taskset"):  # a duration / a CPU mask comes before the command
        rest = rest[1:]
    if name == "xargs" and not rest:
        rest = ["echo"]  # xargs with no command runs echo
    return rest, None


def _find_exec(args: list[str]) -> list[list[str]]:
    """The commands of ``find ... -exec CMD ... ;`` (also -execdir, -ok, -okdir)."""
    out: list[list[str]] = []
    i = 0
    while i < len(args):
        if args[i] in ("-exec", "-execdir", "-ok", "-okdir"):
            j = i + 1
            while j < len(args) and args[j] not in (";", "+"):
                j += 1
            out.append(args[i + 1 : j])
            i = j
        i += 1
    return out


def _shell(args: list[str], insp: Inspection, depth: int) -> None:
    """``sh -c TEXT``: parse TEXT with the chain grammar; anything else that
    makes the shell read commands (stdin, -s, -i) is arbitrary code."""
    if "-c" not in args and not any(a.startswith("-") and "c" in a[1:] and not a.startswith("--") for a in args):
        operands = [a for a in args if not a.startswith("-")]
        if not operands or any(a in ("-s", "-i") for a in args):
            insp.arbitrary.append("a shell reading commands from stdin")
        return  # `bash script.sh` runs a file: the policy decides on the shell itself
    code_index = next((i for i, a in enumerate(args) if not a.startswith("-")), None)
    if code_index is None:
        insp.arbitrary.append("a shell -c without a command")
        return
    try:
        chain = parse_chain(args[code_index])
    except ChainSyntaxError as exc:
        insp.arbitrary.append(f"shell code outside the chain grammar ({exc})")
        return
    for argv in chain.argvs():
        _inspect(list(argv), insp, depth + 1)


def _inspect(argv: list[str], insp: Inspection, depth: int) -> None:
    if not argv:
        return
    if depth > 8:
        insp.arbitrary.append("wrappers nested too deeply")
        return
    insp.argvs.append(tuple(argv))
    name, args = _name(argv[0]), argv[1:]
    if name in OPAQUE:
        insp.arbitrary.append(f"`{name}` runs commands tooldeck cannot inspect")
    elif name in SHELLS:
        _shell(args[1:] if name == "busybox" and args else args, insp, depth)
    elif name == "find":
        for inner in _find_exec(args):
            _inspect(inner, insp, depth + 1)
    elif name == "git" and any(a in _ARBITRARY_FLAGS["git"] or a.startswith("--config-env") for a in args):
        insp.arbitrary.append("`git -c` can set a command to run (core.pager, alias...)")
    elif name in _OPTS_WITH_VALUE:
        inner, why = _after_wrapper(name, args)
        if why is not None:
            insp.arbitrary.append(why)
        _inspect(inner, insp, depth + 1)


def inspect_argv(argv: tuple[str, ...] | list[str]) -> Inspection:
    """Every argv ``argv`` would run, wrappers unwrapped."""
    insp = Inspection()
    _inspect(list(argv), insp, 0)
    return insp
