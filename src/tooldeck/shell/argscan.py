"""Reading an argv the way getopt_long reads it, to find the options that matter.

Why a scanner of our own: the policy must see ``-iS 'rm v'`` as ``-i -S 'rm v'``,
``--compress-prog=sh`` as ``--compress-program=sh`` (getopt accepts any unique
prefix of a long option) and ``-rn 1 rm`` as ``-r -n 1`` followed by ``rm``,
exactly as the program will. :func:`scan` does that for one option grammar
(:class:`OptSpec`); the callers decide what the tokens mean.

Two readings serve two purposes. The *precise* reading consumes option values
the way the program does, so operands (a sed script, uniq's OUTPUT, git's
subcommand) are found where the program finds them. The *loose* reading
consumes nothing, so every word is also looked at as if it were an option:
a mistake in a table of which options take values can then only make the
policy stricter, never blind (:func:`option_words`).
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import Literal

OPEN = "\x00"  # stands for text filled in at run time (xargs' stdin, find's {}); never in a real argument


@dataclass(frozen=True, slots=True)
class OptSpec:
    """One program's option grammar (the parts that change how words are read)."""

    short_value: str = ""  # letters whose value is the rest of the word, or else the next word
    short_optional: str = ""  # letters whose value, if any, is attached (sed -i.bak, xargs -i{})
    long_value: frozenset[str] = frozenset()  # long options that take a value (--x=v or --x v)
    long_optional: frozenset[str] = frozenset()  # long options whose value is only ever attached (--x=v)
    long_flags: frozenset[str] = frozenset()  # long options without a value (to resolve abbreviations)
    stop_at_operand: bool = False  # options end at the first operand (getopt's "+", env, xargs, nice...)
    dash_alone_is_option: bool = False  # a lone "-" is an option (env: "-" means -i)

    @property
    def long_names(self) -> frozenset[str]:
        return self.long_value | self.long_optional | self.long_flags


@dataclass(frozen=True, slots=True)
class Token:
    kind: Literal["short", "long", "operand", "end"]  # "end": the "--" that ends the options
    name: str  # the letter, the long option's full name (abbreviation resolved), or the operand
    value: str | None  # the option's value, if it has one
    index: int  # where the word that holds it is in the args
    written: str = ""  # the long option as written (before "="), for prefix checks
    exact: bool = False  # the long option as written is a whole option name of the program

    @property
    def shown(self) -> str:
        """The option as a person would write it, for messages."""
        if self.kind == "short":
            return f"-{self.name}"
        if self.kind == "long":
            return f"--{self.name}"
        return self.name


def resolve_long(written: str, spec: OptSpec) -> str:
    """The long option getopt_long would take ``written`` for: an exact name,
    else the only name it is a prefix of; otherwise ``written`` itself (getopt
    would reject it, and the caller's prefix checks still see it)."""
    names = spec.long_names
    if written in names:
        return written
    hits = [n for n in names if n.startswith(written)]
    return hits[0] if len(hits) == 1 else written


@dataclass(slots=True)
class _Scan:
    args: list[str]
    spec: OptSpec
    loose: bool
    out: list[Token] = field(default_factory=list)

    def long(self, i: int) -> int:
        word = self.args[i][2:]
        written, eq, value = word.partition("=")
        name = resolve_long(written, self.spec)
        exact = written in self.spec.long_names
        if eq:
            self.out.append(Token("long", name, value, i, written, exact))
            return i + 1
        if name in self.spec.long_value and not self.loose:
            nxt = self.args[i + 1] if i + 1 < len(self.args) else None
            self.out.append(Token("long", name, nxt, i, written, exact))
            return i + 2
        self.out.append(Token("long", name, None, i, written, exact))
        return i + 1

    def short(self, i: int) -> int:
        word = self.args[i]
        for j in range(1, len(word)):
            c = word[j]
            rest = word[j + 1 :]
            if c in self.spec.short_value:
                if rest or self.loose:
                    self.out.append(Token("short", c, rest or None, i))
                    return i + 1
                nxt = self.args[i + 1] if i + 1 < len(self.args) else None
                self.out.append(Token("short", c, nxt, i))
                return i + 2
            if c in self.spec.short_optional:
                self.out.append(Token("short", c, rest or None, i))
                return i + 1
            self.out.append(Token("short", c, None, i))
        return i + 1

    def run(self) -> list[Token]:
        i, n = 0, len(self.args)
        while i < n:
            a = self.args[i]
            if a == "--":
                self.out.append(Token("end", "--", None, i))
                self.out.extend(Token("operand", w, None, k) for k, w in enumerate(self.args[i + 1 :], i + 1))
                break
            if a == "-" and self.spec.dash_alone_is_option:
                self.out.append(Token("short", "-", None, i))
                i += 1
            elif a.startswith("--"):
                i = self.long(i)
            elif a.startswith("-") and a != "-":
                i = self.short(i)
            else:
                if self.spec.stop_at_operand:
                    self.out.extend(Token("operand", w, None, k) for k, w in enumerate(self.args[i:], i))
                    break
                self.out.append(Token("operand", a, None, i))
                i += 1
        return self.out


def scan(args: list[str] | tuple[str, ...], spec: OptSpec, *, loose: bool = False) -> list[Token]:
    """The tokens of ``args`` (the words after the program name) under ``spec``."""
    return _Scan(list(args), spec, loose).run()


def operands(tokens: list[Token]) -> list[Token]:
    return [t for t in tokens if t.kind == "operand"]


def option_words(args: list[str] | tuple[str, ...], spec: OptSpec) -> Iterator[Token]:
    """Every option token of the precise reading and of the loose one (see the
    module docstring): what a check for dangerous options must look at."""
    seen: set[tuple[str, str, int]] = set()
    for tok in (*scan(args, spec), *scan(args, spec, loose=True)):
        key = (tok.kind, tok.name, tok.index)
        if tok.kind in ("short", "long") and key not in seen:
            seen.add(key)
            yield tok


def is_prefix_of(tok: Token, names: tuple[str, ...] | frozenset[str]) -> str | None:
    """The dangerous long option ``tok`` may stand for: ``tok`` as written is
    a prefix of it (getopt's abbreviations), or resolved to it."""
    if tok.kind != "long":
        return None
    for name in names:
        if tok.name == name or (tok.written and not tok.exact and name.startswith(tok.written)):
            return name
    return None


def shown(text: str) -> str:
    """``text`` for a message: run-time placeholders spelled out."""
    return text.replace(OPEN, "<filled in at run time>")
