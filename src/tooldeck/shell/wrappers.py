"""Programs that run other programs: look inside them before the policy decides.

Why: a rule that denies ``rm`` means little if ``env rm``, ``xargs rm``,
``find . -exec rm {} ;``, ``find -delete``, ``timeout 5 rm``, ``busybox rm``,
``sh -c 'rm x'``, ``sort --compress-program=rm`` or ``sed 'e rm x'`` slip
past it. Known wrappers are unwrapped by reading their argv the way the
wrapper does (:mod:`tooldeck.shell.argscan`: clustered options, values,
``env -S`` split like env splits it); a shell's ``-c`` text is parsed with the
chain grammar; programs whose arguments run things say what they run
(:mod:`tooldeck.shell.safe_args`). Whatever cannot be inspected — a ``-c``
text outside the grammar, a command xargs takes from stdin, a shell builtin,
``sudo``, a program that does not exist yet — is *arbitrary code*, which the
policy refuses unless the runtime allows it and has no rule it would evade.

Text filled in at run time (xargs' stdin, ``{}`` of find and ``xargs -I``)
is carried as :data:`~tooldeck.shell.argscan.OPEN`, so a wrapper whose
command or options would come from it is caught wherever it sits.
"""

from __future__ import annotations

import os
from collections.abc import Callable
from dataclasses import dataclass, field, replace

from tooldeck.shell import safe_args
from tooldeck.shell.argscan import OPEN, OptSpec, Token, scan, shown
from tooldeck.shell.env_split import SplitError, split_string
from tooldeck.shell.shell_text import SAFE_BUILTINS, SHELLS, shell_body, shell_invocation

OPAQUE = frozenset(
    {"sudo", "doas", "su", "pkexec", "runuser", "setpriv", "chroot", "unshare", "nsenter", "bwrap", "firejail",
     "proot", "parallel", "watch", "strace", "ltrace", "gdb", "valgrind", "perf", "script", "expect", "unbuffer",
     "rlwrap", "flock", "eval", "exec", "command", "builtin", "ssh", "mosh", "tmux", "screen", "at", "batch",
     "systemd-run", "cgexec", "sg", "newgrp", "dbus-run-session", "xvfb-run", "fakeroot", "faketime", "eatmydata",
     "prlimit", "chrt", "numactl", "setarch", "linux32", "linux64", "torsocks", "proxychains", "proxychains4",
     "catchsegv"}
)  # fmt: skip
_SPECS: dict[str, OptSpec] = {
    "env": OptSpec(short_value="uCSa", long_value=frozenset({"unset", "chdir", "split-string", "argv0"}),
                   long_optional=frozenset({"block-signal", "default-signal", "ignore-signal"}),
                   long_flags=frozenset({"ignore-environment", "null", "debug", "list-signal-handling"}),
                   stop_at_operand=True, dash_alone_is_option=True),
    "xargs": OptSpec(short_value="adEILnPs", short_optional="eil",
                     long_value=frozenset({"arg-file", "delimiter", "max-args", "max-procs", "max-chars",
                                           "process-slot-var"}),
                     long_optional=frozenset({"eof", "replace", "max-lines"}),
                     long_flags=frozenset({"null", "open-tty", "interactive", "no-run-if-empty", "verbose", "exit",
                                           "show-limits"}), stop_at_operand=True),
    "nice": OptSpec(short_value="n", long_value=frozenset({"adjustment"}), stop_at_operand=True),
    "timeout": OptSpec(short_value="ks", long_value=frozenset({"kill-after", "signal"}),
                       long_flags=frozenset({"foreground", "preserve-status", "verbose"}), stop_at_operand=True),
    "stdbuf": OptSpec(short_value="ioe", long_value=frozenset({"input", "output", "error"}), stop_at_operand=True),
    "setsid": OptSpec(long_flags=frozenset({"ctty", "fork", "wait"}), stop_at_operand=True),
    "nohup": OptSpec(stop_at_operand=True),
    "ionice": OptSpec(short_value="cnpPu", long_value=frozenset({"class", "classdata", "pid", "pgid", "uid"}),
                      long_flags=frozenset({"ignore"}), stop_at_operand=True),
    "taskset": OptSpec(long_flags=frozenset({"all-tasks", "cpu-list", "pid"}), stop_at_operand=True),
    "time": OptSpec(short_value="fo", long_value=frozenset({"format", "output"}),
                    long_flags=frozenset({"append", "portability", "quiet", "verbose"}), stop_at_operand=True),
}  # fmt: skip
_LEADING_OPERANDS = {"timeout": 1, "taskset": 1}  # a duration / a CPU mask comes before the command
_NO_COMMAND = {"ionice": {"p", "P", "u", "pid", "pgid", "uid"}, "taskset": {"p", "pid"}}  # acting on running pids
# environment variables that make a program load code, a config or a command of the caller's choosing
_RISKY_ENV = frozenset(
    {"PATH", "HOME", "ENV", "BASH_ENV", "SHELLOPTS", "BASHOPTS", "PS4", "PROMPT_COMMAND", "IFS", "PAGER", "EDITOR",
     "VISUAL", "BROWSER", "MANPAGER", "LESSOPEN", "LESSCLOSE", "LESSKEY", "SHELL", "XDG_CONFIG_HOME",
     "XDG_CONFIG_DIRS", "RIPGREP_CONFIG_PATH", "NODE_OPTIONS", "NODE_PATH", "RUBYOPT", "RUBYLIB", "PERL5OPT",
     "PERL5LIB", "PERLLIB", "JAVA_TOOL_OPTIONS", "_JAVA_OPTIONS", "GCONV_PATH", "TMPDIR"}
)  # fmt: skip
_RISKY_ENV_PREFIXES = ("LD_", "DYLD_", "GIT_", "PYTHON", "BASH_FUNC_", "LUA_")
MAX_DEPTH = 8


@dataclass
class Inspection:
    """Every argv that would run (the outer one first) and the reasons, if any,
    that part of the command cannot be inspected."""

    argvs: list[tuple[str, ...]] = field(default_factory=list)
    arbitrary: list[str] = field(default_factory=list)


@dataclass(frozen=True, slots=True)
class Where:
    """What the inspection needs to know about the run: the working directory,
    the roots and PATH (for the programs' own checks), and how a program name
    resolves to an executable (the policy's resolver; None: names as written)."""

    ctx: safe_args.Context = field(default_factory=safe_args.Context)
    # (program, cwd) -> the names the executable goes by (its resolved basename, and the
    # wrappers it is a copy of), or None when it cannot be found
    resolve: Callable[[str, str], list[str] | None] | None = None
    in_shell: bool = False  # a command of a shell -c text (builtins and keywords exist there)


def _names(argv0: str, where: Where) -> list[str]:
    """The names a program goes by: as written and as resolved (a symlink
    ``./e -> /usr/bin/env`` is env)."""
    names = [os.path.basename(argv0)]
    if where.resolve is not None and OPEN not in argv0:
        names += [n for n in where.resolve(argv0, where.ctx.cwd) or () if n not in names]
    return names


def wrapper_names() -> frozenset[str]:
    """Every program this module looks inside (a copy of one is looked inside too)."""
    runs = {p for p in safe_args.PROGRAMS if safe_args.runs_code(p)}
    return frozenset(OPAQUE | SHELLS | set(_SPECS) | {"busybox"} | runs)


def _risky_assignment(word: str) -> bool:
    name = word.split("=", 1)[0]
    return name in _RISKY_ENV or name.startswith(_RISKY_ENV_PREFIXES)


def _env(args: list[str], insp: Inspection, where: Where) -> tuple[list[str] | None, Where]:
    """env's command (after options, ``-S`` split in place, assignments), or None."""
    for _ in range(MAX_DEPTH):
        toks = scan(args, _SPECS["env"])
        if _open_option("env", toks, insp):
            return None, where
        split = next((t for t in toks if (t.kind, t.name) in (("short", "S"), ("long", "split-string"))), None)
        if split is None:
            break
        if split.value is None or OPEN in split.value:
            insp.arbitrary.append("`env -S` with a string filled in at run time")
            return None, where
        try:
            words = split_string(split.value)
        except SplitError as exc:
            insp.arbitrary.append(f"`env -S {shown(split.value)}` cannot be split here ({exc})")
            return None, where
        args = words + args[_after(split, args) :]
    else:
        insp.arbitrary.append("`env -S` nested too deeply")
        return None, where
    for t in toks:
        if (t.kind, t.name) in (("short", "C"), ("long", "chdir")) and t.value is not None:
            ctx = replace(where.ctx, cwd=os.path.join(where.ctx.cwd, t.value))
            where = replace(where, ctx=ctx)
    rest = [t.name for t in toks if t.kind == "operand"]
    while rest and "=" in rest[0] and not rest[0].startswith("="):
        if _risky_assignment(rest[0]) or OPEN in rest[0]:
            insp.arbitrary.append(f"`env {shown(rest[0])}` sets a variable that can make a program run other code")
        rest = rest[1:]
    return rest, where


def _after(tok: Token, args: list[str]) -> int:
    """Index of the first word after ``tok`` and its value."""
    word = args[tok.index]
    attached = tok.value is not None and word.endswith(tok.value) and (len(word) > 2 or "=" in word)
    if tok.kind == "long" and "=" in word:
        attached = True
    return tok.index + (1 if attached or tok.value is None else 2)


def _xargs(args: list[str], insp: Inspection) -> list[str]:
    """The command xargs runs, with what it fills in from stdin as OPEN."""
    toks = scan(args, _SPECS["xargs"])
    if _open_option("xargs", toks, insp):
        return []
    marker = None
    for t in toks:
        if (t.kind, t.name) == ("short", "I"):
            marker = t.value
        elif (t.kind, t.name) in (("short", "i"), ("long", "replace")):
            marker = t.value or "{}"
    cmd = [t.name for t in toks if t.kind == "operand"] or ["echo"]
    if marker:  # -I R: R is replaced by a whole input line, which may start with "-"
        return [("-" + OPEN) if w == marker else w.replace(marker, OPEN) for w in cmd]
    return [*cmd, OPEN if "--" in cmd[1:] else "-" + OPEN]  # stdin's words are appended


def _open_option(name: str, toks: list[Token], insp: Inspection) -> bool:
    """An option filled in at run time could be anything (``xargs env`` with
    ``-S 'rm v'`` on stdin): the wrapper cannot be read."""
    if any(t.kind in ("short", "long") and (OPEN in t.name or OPEN in (t.value or "")) for t in toks):
        insp.arbitrary.append(f"`{name}`'s options would be filled in at run time")
        return True
    return False


def _wrapped(name: str, args: list[str], insp: Inspection, where: Where) -> tuple[list[str] | None, Where]:
    """The command a wrapper runs, or None when it runs none."""
    if name == "env":
        return _env(args, insp, where)
    if name == "xargs":
        return _xargs(args, insp), where
    toks = scan(args, _SPECS[name])
    if _open_option(name, toks, insp):
        return None, where
    if any(t.kind in ("short", "long") and t.name in _NO_COMMAND.get(name, ()) for t in toks):
        return None, where
    rest = [t.name for t in toks if t.kind == "operand"][_LEADING_OPERANDS.get(name, 0) :]
    return rest, where


def _inspect_wrapper(name: str, argv: list[str], insp: Inspection, depth: int, where: Where) -> None:
    inner, inner_where = _wrapped(name, argv[1:], insp, where)
    if inner is None:
        return
    if not inner:
        if any(OPEN in a for a in argv):
            insp.arbitrary.append(f"`{name}` would run a command taken from its input")
        return
    prog = inner[0]
    if inner_where.ctx.cwd != where.ctx.cwd and "/" in prog and not prog.startswith("/"):
        insp.arbitrary.append(f"`{name}` changes directory before running {prog}, a relative path")
    _inspect(inner, insp, depth + 1, replace(inner_where, in_shell=False))


def _inspect_findings(name: str, argv: list[str], insp: Inspection, depth: int, where: Where) -> None:
    """Programs whose arguments run something (find -exec, sed e, sort
    --compress-program, git --upload-pack...): inspect what they run."""
    findings = safe_args.check(name, argv[1:], where.ctx) or []
    for f in findings:
        if f.runs is not None:
            _inspect(list(f.runs), insp, depth + 1, replace(where, in_shell=False))
        elif f.code is not None:
            _shell_code(f.code, f"{name} {shown(f.arg)}", insp, depth, where)
        elif f.opaque:
            insp.arbitrary.append(f"{name}: `{shown(f.arg)}` {f.reason}")


def _shell_code(text: str, what: str, insp: Inspection, depth: int, where: Where) -> None:
    argvs, why = shell_body(text)
    if why is not None:
        insp.arbitrary.append(f"{what}: {why}")
        return
    for inner in argvs:
        _inspect(list(inner), insp, depth + 1, replace(where, in_shell=True))


def _shell(name: str, args: list[str], insp: Inspection, depth: int, where: Where) -> None:
    code, why = shell_invocation(name, args)
    if why is not None:
        insp.arbitrary.append(why)
    elif code is not None:
        _shell_code(code, f"`{name} -c`", insp, depth, where)


def _unresolvable(argv0: str, where: Where) -> str | None:
    """Why a program tooldeck cannot find is arbitrary: in a shell text it may
    be a builtin or keyword; a path may be made by an earlier step."""
    if where.resolve is None or (where.in_shell and argv0 in SAFE_BUILTINS):
        return None
    if where.resolve(argv0, where.ctx.cwd) is not None:
        return None
    if where.in_shell:
        return f"`{argv0}` is not a program on PATH (a shell builtin or keyword does what tooldeck cannot check)"
    if "/" in argv0:
        return f"`{argv0}` does not exist yet: tooldeck cannot tell what it will be"
    return None


def _inspect(argv: list[str], insp: Inspection, depth: int, where: Where) -> None:
    if not argv:
        return
    if depth > MAX_DEPTH:
        insp.arbitrary.append("wrappers nested too deeply")
        return
    insp.argvs.append(tuple(argv))
    if OPEN in argv[0]:
        insp.arbitrary.append("the program to run would be filled in at run time")
        return
    why = _unresolvable(argv[0], where) if depth > 0 else None  # the outer one: not_found, before anything runs
    if why is not None:
        insp.arbitrary.append(why)
        return
    names = _names(argv[0], where)
    name = next((n for n in reversed(names) if n in OPAQUE or n in SHELLS or n in _SPECS or n == "busybox"),
                names[-1])  # fmt: skip
    if name in OPAQUE:
        insp.arbitrary.append(f"`{name}` runs commands tooldeck cannot inspect")
    elif name == "busybox":
        if len(argv) > 1 and not argv[1].startswith("-"):
            _inspect(argv[1:], insp, depth + 1, replace(where, in_shell=False))
        elif any(OPEN in a for a in argv[1:]):
            insp.arbitrary.append("`busybox` would run an applet taken from its input")
    elif name in SHELLS:
        _shell(name, argv[1:], insp, depth, where)
    elif name in _SPECS:
        _inspect_wrapper(name, argv, insp, depth, where)
    elif safe_args.runs_code(name):
        _inspect_findings(name, argv, insp, depth, where)


def inspect_argv(argv: tuple[str, ...] | list[str], where: Where | None = None) -> Inspection:
    """Every argv ``argv`` would run, wrappers unwrapped."""
    insp = Inspection()
    _inspect(list(argv), insp, 0, where or Where())
    return insp
