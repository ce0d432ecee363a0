"""Chain mode: a conservative command-line grammar, parsed here, never by /bin/sh.

Accepted: words (bare, 'single-quoted', "double-quoted" with \\" \\\\ escapes,
backslash escapes), pipelines ``a | b``, and lists with ``;``, ``&&``, ``||``
(a newline counts as ``;``). Everything that gives a shell more power is
refused with a message saying what to do instead: redirection and heredocs,
``$(...)``, backticks, ``$VAR``, globs, brace and tilde expansion, background
``&``, subshells and groups, comments, ``!`` and ``NAME=value`` prefixes.
Why refuse rather than approximate: a command the model believes means one
thing must not run as another, and a refusal costs the model one retry.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Literal

Op = Literal[";", "&&", "||"]
ASSIGNMENT = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*=")

REFUSALS: dict[str, str] = {
    ">": "redirection (>) is not supported: the tool returns stdout; to write a file use the file tools",
    "<": "redirection and heredocs (<, <<) are not supported: pass input with the `stdin` field or a file argument",
    "$(": "command substitution $(...) is not supported: run the inner command first and pass its output literally",
    "`": "backticks (command substitution) are not supported: run the inner command first, then use its output",
    "$": "variable expansion ($NAME) is not supported: write the value literally (single quotes keep a literal $)",
    "glob": "globs (* ? [ ]) are not expanded: list the files explicitly, or quote the pattern for a program "
    "that expands it itself (e.g. find -name '*.py')",
    "{": "brace expansion/groups ({ }) are not supported: write the words out, or run the commands one by one",
    "}": "brace groups ({ }) are not supported: run the commands one by one",
    "~": "tilde expansion (~) is not supported: write the absolute path",
    "&": "background jobs (&) are not supported: commands run in the foreground; use ; or && to sequence them",
    "(": "subshells ( ) are not supported: run the commands directly, sequenced with ; && ||",
    ")": "subshells ( ) are not supported: run the commands directly, sequenced with ; && ||",
    "#": "comments (#) are not supported: remove the comment, or quote a literal #",
    "!": "pipeline negation (!) is not supported: use || or check the exit code",
    "=": "NAME=value assignments are not supported: the runtime's environment is fixed",
}


class ChainSyntaxError(ValueError):
    """A command line outside the chain grammar; the message says what to do instead."""

    def __init__(self, message: str, offset: int) -> None:
        super().__init__(f"{message} (at character {offset + 1})")
        self.offset = offset


@dataclass(frozen=True, slots=True)
class Step:
    op: Op | None  # how this pipeline joins the previous one (None for the first)
    pipeline: tuple[tuple[str, ...], ...]  # one argv per stage


@dataclass(frozen=True, slots=True)
class Chain:
    steps: tuple[Step, ...]

    def argvs(self) -> list[tuple[str, ...]]:
        return [argv for step in self.steps for argv in step.pipeline]


def _refuse(key: str, offset: int) -> ChainSyntaxError:
    return ChainSyntaxError(REFUSALS[key], offset)


def _double_quoted(text: str, i: int) -> tuple[str, int]:
    """Parse from just after an opening ``"``; returns (value, index after the closing quote)."""
    out: list[str] = []
    while i < len(text):
        c = text[i]
        if c == '"':
            return "".join(out), i + 1
        if c == "\\" and i + 1 < len(text) and text[i + 1] in '"\\$`\n':
            out.append(text[i + 1])
            i += 2
            continue
        if c == "`":
            raise _refuse("`", i)
        if c == "$":
            raise _refuse("$(" if text.startswith("$(", i) else "$", i)
        out.append(c)
        i += 1
    raise ChainSyntaxError('unterminated double quote: close it with "', i)


def _scan_word(text: str, i: int) -> tuple[str, int]:
    """Parse one word starting at ``i``; returns (value, index after it)."""
    out: list[str] = []
    n = len(text)
    at_start = True
    while i < n:
        c = text[i]
        if c in " \t\r\n;|&":
            if c == "&" and text[i : i + 2] != "&&":
                raise _refuse("&", i)
            break
        if c == "'":
            end = text.find("'", i + 1)
            if end < 0:
                raise ChainSyntaxError("unterminated single quote: close it with '", i)
            out.append(text[i + 1 : end])
            i = end + 1
        elif c == '"':
            value, i = _double_quoted(text, i + 1)
            out.append(value)
        elif c == "\\":
            if i + 1 >= n:
                raise ChainSyntaxError("a trailing backslash escapes nothing: remove it", i)
            if text[i + 1] != "\n":
                out.append(text[i + 1])
            i += 2
        else:
            _check_bare(text, i, at_start)
            out.append(c)
            i += 1
        at_start = False
    return "".join(out), i


def _check_bare(text: str, i: int, at_start: bool) -> None:
    c = text[i]
    if c in "><":
        raise _refuse(c, i)
    if c == "$":
        raise _refuse("$(" if text.startswith("$(", i) else "$", i)
    if c in "*?[]":
        raise _refuse("glob", i)
    if c in "`{}()":
        raise _refuse(c, i)
    if at_start and c in "~#!":
        raise _refuse(c, i)


def parse_chain(text: str) -> Chain:
    """Parse ``text``; raises :class:`ChainSyntaxError` outside the grammar."""
    if "\x00" in text:
        raise ChainSyntaxError("NUL bytes are not allowed in a command", text.index("\x00"))
    steps: list[Step] = []
    pipeline: list[tuple[str, ...]] = []
    argv: list[str] = []
    op: Op | None = None
    dangling: tuple[str, int] | None = None  # an operator still waiting for its right-hand command
    for kind, value, offset in _tokens(text):
        assert value is not None
        if kind == "word":
            if not argv and ASSIGNMENT.match(value) and not _quoted_at(text, offset):
                raise _refuse("=", offset)
            argv.append(value)
            dangling = None
            continue
        if not argv:
            if value == ";" and not pipeline and op in (None, ";"):
                continue  # blank lines, "a ; ; b", a trailing newline
            raise ChainSyntaxError(f"{value!r} needs a command on both sides", offset)
        pipeline.append(tuple(argv))
        argv = []
        dangling = (value, offset) if value != ";" else None
        if value == "|":
            continue
        steps.append(Step(op, tuple(pipeline)))
        pipeline, op = [], value  # type: ignore[assignment]
    if dangling is not None:
        raise ChainSyntaxError(f"{dangling[0]!r} needs a command after it", dangling[1])
    if argv:
        pipeline.append(tuple(argv))
    if pipeline:
        steps.append(Step(op, tuple(pipeline)))
    if not steps:
        raise ChainSyntaxError("the command is empty: give a program and its arguments", 0)
    return Chain(tuple(steps))


def _quoted_at(text: str, offset: int) -> bool:
    return text[offset] in "'\"\\"


def _tokens(text: str) -> list[tuple[str, str | None, int]]:
    tokens: list[tuple[str, str | None, int]] = []
    i, n = 0, len(text)
    while i < n:
        c = text[i]
        if c in " \t\r":
            i += 1
        elif c in "\n;":
            tokens.append(("op", ";", i))
            i += 1
        elif text[i : i + 2] in ("&&", "||"):
            tokens.append(("op", text[i : i + 2], i))
            i += 2
        elif c == "|":
            tokens.append(("op", "|", i))
            i += 1
        elif c == "&":
            raise _refuse("&", i)
        else:
            value, end = _scan_word(text, i)
            tokens.append(("word", value, i))
            i = end
    return tokens
