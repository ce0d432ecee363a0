"""What an allow-listed program may be given: arguments that cannot run code or write.

The built-in runtimes allow "read-only programs" (``READ_ONLY_PROGRAMS`` in
:mod:`tooldeck.shell.profiles`), but a program is only as read-only as its
arguments: ``sed -n '1e id'`` runs a command, ``sort --compress-program=sh``
runs a program, ``uniq IN OUT`` writes OUT. :data:`PROGRAMS` says, for every
program on that list, which options and operands run something or write,
each with its reason; :func:`check` reads an argv the way the program reads
it (:mod:`tooldeck.shell.argscan`) and returns a :class:`Finding` for each.
An argv with a finding is not vouched for: the policy's allow rule does not
apply and the command takes the policy's default (``ask`` in the built-in
profiles), with a message naming the argument.

Findings that *run* something also tell :mod:`tooldeck.shell.wrappers` what
runs (``runs``: an argv run directly, ``code``: a shell text), so deny rules
see through ``sort --compress-program=rm`` or ``sed 'e rm x'`` as they see
through ``env rm``; what runs but cannot be seen is arbitrary code.

In the spirit of Codex's ``is_known_safe_command`` (codex-rs
``command_safety``), with the reading done the way getopt does it
(abbreviations, clustered short options, ``--``) and a reason per rule.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Literal

from tooldeck.shell import git_args, sed_script
from tooldeck.shell.argscan import OPEN, OptSpec, Token, is_prefix_of, operands, option_words, scan, shown

Effect = Literal["runs", "writes", "unknown"]


@dataclass(frozen=True, slots=True)
class Context:
    """Where the command runs: git needs the directory, rg -z the PATH."""

    cwd: str = "/"
    roots: tuple[str, ...] = ()  # directories a model can write (files there are not the person's)
    path_env: str = ""


@dataclass(frozen=True, slots=True)
class Finding:
    arg: str  # the argument as written
    effect: Effect  # runs something / writes a file / not known to be harmless
    reason: str
    runs: tuple[str, ...] | None = None  # an argv the program runs directly
    code: str | None = None  # a shell text the program runs with sh -c

    @property
    def opaque(self) -> bool:
        """Runs something tooldeck cannot see."""
        return self.effect == "runs" and self.runs is None and self.code is None

    def message(self, program: str) -> str:
        return f"{program}: `{shown(self.arg)}` {self.reason}"


@dataclass(frozen=True, slots=True)
class Option:
    names: tuple[str, ...]  # as written: "-o", "--output"
    effect: Effect
    why: str
    value_runs: bool = False  # the value is a program the program runs (sort --compress-program=PROG)


Extra = Callable[[list[Token], Context], list[Finding]]
Custom = Callable[[list[str], Context], list[Finding]]


@dataclass(frozen=True, slots=True)
class Program:
    why: str  # why it is on the list (what it does)
    spec: OptSpec = field(default_factory=OptSpec)
    options: tuple[Option, ...] = ()
    extra: Extra | None = None  # operand rules (sed's script, uniq's OUTPUT), given the precise reading
    custom: Custom | None = None  # a reading of its own (git, find, xxd, tree)


# --- program-specific rules --------------------------------------------------------------


def _sed_scripts(toks: list[Token], ctx: Context) -> list[Finding]:
    scripts = [t.value or "" for t in toks if (t.kind, t.name) in (("short", "e"), ("long", "expression"))]
    has_file = any((t.kind, t.name) in (("short", "f"), ("long", "file")) for t in toks)
    if not scripts and not has_file and operands(toks):
        scripts = [operands(toks)[0].name]
    out: list[Finding] = []
    for script in scripts:
        for eff in sed_script.effects(script):
            if eff.kind == "runs":
                reason = "runs a shell command (sed's e command or s///e flag)"
                out.append(Finding(eff.what, "runs", reason, code=eff.command))
            elif eff.kind == "writes":
                out.append(Finding(eff.what, "writes", "writes a file (sed's w/W command or s///w flag)"))
            else:
                out.append(Finding(eff.what, "unknown", "is a sed script tooldeck cannot read"))
    return out


def _second_operand_writes(program: str) -> Extra:
    def rule(toks: list[Token], ctx: Context) -> list[Finding]:
        ops = operands(toks)
        if len(ops) >= 2:
            return [Finding(ops[1].name, "writes", f"is {program}'s OUTPUT file, which it writes")]
        return []

    return rule


def _date_operand(toks: list[Token], ctx: Context) -> list[Finding]:
    return [
        Finding(t.name, "writes", "sets the system clock (a date operand without +)")
        for t in operands(toks)
        if not t.name.startswith("+")
    ]


def _rg_zip(toks: list[Token], ctx: Context) -> list[Finding]:
    """-z runs gzip, xz, ... found on the runtime's PATH: harmless unless a PATH
    directory is one a model can write."""
    if not any((t.kind, t.name) in (("short", "z"), ("long", "search-zip")) for t in toks):
        return []
    dirs = [d for d in ctx.path_env.split(":") if d]
    if any(os.path.realpath(d) == r or os.path.realpath(d).startswith(r.rstrip("/") + "/") for d in dirs
           for r in ctx.roots):  # fmt: skip
        return [Finding("--search-zip", "runs", "runs decompressors from a PATH directory inside a root")]
    return []


def _git(args: list[str], ctx: Context) -> list[Finding]:
    return [Finding(f.arg, f.effect, f.reason) for f in git_args.check(args, ctx.cwd, ctx.roots)]  # type: ignore[arg-type]


_FIND_RUNS = ("-exec", "-execdir", "-ok", "-okdir")
_FIND_WRITES = ("-fprint", "-fprint0", "-fprintf", "-fls")


def _placeholders(words: list[str], marker: str) -> tuple[str, ...]:
    """``{}`` (a found path: never starts with "-") stands for text filled in at run time."""
    return tuple(OPEN if w == marker else w.replace(marker, OPEN) for w in words)


def _find(args: list[str], ctx: Context) -> list[Finding]:
    out: list[Finding] = []
    i = 0
    while i < len(args):
        a = args[i]
        if OPEN in a:
            out.append(Finding(a, "runs", "is filled in at run time (find's expression could run anything)"))
        elif a in _FIND_RUNS:
            j = i + 1
            while j < len(args) and args[j] not in (";", "+"):
                j += 1
            inner = list(args[i + 1 : j])
            if a in ("-execdir", "-okdir") and inner and "/" in inner[0] and not inner[0].startswith("/"):
                out.append(Finding(a, "runs", "runs a relative path from every directory find visits"))
            else:
                out.append(Finding(a, "runs", "runs a command for every file found", runs=_placeholders(inner, "{}")))
            i = j
        elif a == "-delete":
            out.append(Finding(a, "writes", "deletes the files found (judged as rm -r -f)",
                               runs=("rm", "-r", "-f", "--", OPEN)))  # fmt: skip
        elif a in _FIND_WRITES:
            out.append(Finding(a, "writes", "writes a file"))
        i += 1
    return out


_XXD_VALUE = {"-c", "-cols", "-g", "-groupsize", "-l", "-len", "-o", "-offset", "-s", "-seek", "-skip", "-n",
              "-name", "-R"}  # fmt: skip


def _xxd(args: list[str], ctx: Context) -> list[Finding]:
    """xxd [options] [infile [outfile]]: options (its own syntax, values
    attached or in the next word) end at the first operand; an outfile is written."""
    i = 0
    while i < len(args) and args[i].startswith("-") and args[i] != "-":
        word = "-" + args[i][2:] if args[i].startswith("--") and len(args[i]) > 2 else args[i]
        if args[i] == "--":
            i += 1
            break
        i += 2 if word in _XXD_VALUE else 1
    rest = args[i:]
    if len(rest) >= 2:
        return [Finding(rest[1], "writes", "is xxd's outfile, which it writes")]
    return []


def _tree(args: list[str], ctx: Context) -> list[Finding]:
    """tree reads its short options letter by letter (values come from the next
    words), so every letter of every short word is looked at."""
    out: list[Finding] = []
    for a in args:
        if a == "--":
            break
        if a.startswith("-") and not a.startswith("--"):
            if "o" in a[1:]:
                out.append(Finding(a, "writes", "writes the listing to a file (-o)"))
            if "R" in a[1:]:
                out.append(Finding(a, "writes", "runs tree again in every directory, writing 00Tree.html (-R)"))
            if OPEN in a:
                out.append(Finding(a, "writes", "is filled in at run time"))
    return out


# --- the table -----------------------------------------------------------------------------

_READS = "reads files or its input and prints; no option runs a program or writes a file"
PLAIN: dict[str, str] = {
    "basename": "prints part of a name", "dirname": "prints part of a name", "echo": "prints its arguments",
    "printf": "prints its arguments (coreutils printf has no %n)", "true": "does nothing", "false": "does nothing",
    "pwd": "prints the directory", "id": "prints user ids", "whoami": "prints the user",
    "uname": "prints the system name", "seq": "prints numbers", "yes": "prints a line forever (the output "
    "limit stops it)", "which": "looks names up on PATH", "readlink": "prints link targets",
    "realpath": "prints resolved names", "stat": "prints file metadata (--printf formats only)",
    "ls": "lists directories", "du": "sums sizes", "df": "prints mounts (--output lists fields, not a file)",
    "cat": _READS, "head": _READS, "tail": _READS, "tac": _READS, "nl": _READS, "od": _READS, "wc": _READS,
    "cut": _READS, "tr": "translates its input", "comm": _READS, "cmp": _READS,
    "diff": _READS + " (-l runs the fixed pr program to paginate)", "grep": _READS, "egrep": _READS,
    "fgrep": _READS, "md5sum": _READS + " (-c reads a list)", "sha1sum": _READS, "sha256sum": _READS,
    "jq": "filters JSON (jq has no command execution; modules are jq code)",
}  # fmt: skip

PROGRAMS: dict[str, Program] = {name: Program(why) for name, why in PLAIN.items()}
PROGRAMS.update({
    "sed": Program(
        "edits a stream to stdout",
        OptSpec(short_value="efl", short_optional="i", long_value=frozenset({"expression", "file", "line-length"}),
                long_optional=frozenset({"in-place"}),
                long_flags=frozenset({"quiet", "silent", "debug", "follow-symlinks", "posix", "regexp-extended",
                                      "separate", "sandbox", "unbuffered", "null-data", "zero-terminated", "binary",
                                      "help", "version"})),
        (Option(("-i", "--in-place"), "writes", "edits the files in place"),
         Option(("-f", "--file"), "runs", "reads the script from a file tooldeck does not check (it could hold e)")),
        extra=_sed_scripts,
    ),
    "sort": Program(
        "sorts lines to stdout",
        OptSpec(short_value="koStT", long_value=frozenset({"key", "output", "buffer-size", "field-separator",
                "temporary-directory", "compress-program", "files0-from", "parallel", "random-source",
                "batch-size", "sort"}), long_optional=frozenset({"check"})),
        (Option(("-o", "--output"), "writes", "writes the result to a file"),
         Option(("--compress-program",), "runs", "runs a program to compress temporary files", value_runs=True)),
    ),
    "uniq": Program(
        "filters repeated lines",
        OptSpec(short_value="fsw", long_value=frozenset({"skip-fields", "skip-chars", "check-chars"}),
                long_optional=frozenset({"all-repeated", "group"})),
        extra=_second_operand_writes("uniq"),
    ),
    "date": Program(
        "prints the date",
        OptSpec(short_value="dfrs", short_optional="I", long_value=frozenset({"date", "file", "reference", "set",
                "rfc-3339"}), long_optional=frozenset({"iso-8601"})),
        (Option(("-s", "--set"), "writes", "sets the system clock"),),
        extra=_date_operand,
    ),
    "file": Program(
        "names file types",
        OptSpec(short_value="efFmP", long_value=frozenset({"exclude", "exclude-quiet", "files-from", "separator",
                                                           "magic-file", "parameter"})),
        (Option(("-C", "--compile"), "writes", "writes a compiled magic file"),
         Option(("-p", "--preserve-date"), "writes", "sets the files' access times back")),
    ),
    "rg": Program(
        "searches files",
        OptSpec(short_value="ABCdEefgjMmrtT", long_value=frozenset({"pre", "pre-glob", "hostname-bin", "regexp",
                "file", "glob", "iglob", "type", "type-not", "type-add", "type-clear", "max-depth", "max-count",
                "context", "after-context", "before-context", "encoding", "replace", "threads", "ignore-file",
                "max-columns", "max-filesize", "sort", "sortr", "colors", "color", "engine", "path-separator",
                "context-separator", "dfa-size-limit", "regex-size-limit", "hyperlink-format"})),
        (Option(("--pre",), "runs", "runs a program on every file searched", value_runs=True),
         Option(("--pre-glob",), "unknown", "selects the files --pre runs on"),
         Option(("--hostname-bin",), "runs", "runs a program to get the host name", value_runs=True)),
        extra=_rg_zip,
    ),
    "git": Program("reads a repository (read subcommands only; see git_args)", custom=_git),
    "find": Program("lists files by name and attributes", custom=_find),
    "xxd": Program("dumps bytes as hex", custom=_xxd),
    "tree": Program("lists a directory tree", custom=_tree),
})  # fmt: skip


def _generic(prog: Program, args: list[str], ctx: Context) -> list[Finding]:
    out: list[Finding] = []
    worst: Effect | None = None
    for opt in prog.options:
        worst = opt.effect if worst is None or opt.effect == "runs" else worst
    for tok in option_words(args, prog.spec):
        if OPEN in tok.name:
            if worst is not None:
                out.append(Finding(args[tok.index], worst, "is filled in at run time (it could be any option)"))
            continue
        for opt in prog.options:
            longs = tuple(n[2:] for n in opt.names if n.startswith("--"))
            hit = (tok.kind == "short" and f"-{tok.name}" in opt.names) or is_prefix_of(tok, longs)
            if hit:
                runs = (tok.value,) if opt.value_runs and tok.value is not None else None
                out.append(Finding(args[tok.index], opt.effect, opt.why, runs=runs))
    if prog.extra is not None:
        out.extend(prog.extra(scan(args, prog.spec), ctx))
    return out


def check(program: str, args: Sequence[str], ctx: Context) -> list[Finding] | None:
    """Every reason ``program ARGS`` may run code or write; ``[]`` when it only
    reads; None when the program has no rules here (nothing is vouched for)."""
    prog = PROGRAMS.get(program)
    if prog is None:
        return None
    if prog.custom is not None:
        return prog.custom(list(args), ctx)
    return _generic(prog, list(args), ctx)


def runs_code(program: str) -> bool:
    """Whether some argument can make ``program`` run another program."""
    prog = PROGRAMS.get(program)
    if prog is None:
        return False
    return prog.custom in (_git, _find) or prog.extra is _sed_scripts or any(o.effect == "runs" for o in prog.options)
