"""What a sed script does beyond reading: the commands that run or write.

GNU sed can run a command (``e command``, ``e`` on the pattern space, the
``e`` flag of ``s``) and write files (``w``/``W``, the ``w`` flag of ``s``).
:func:`effects` reads the script the way GNU sed's compiler does (addresses,
``s`` and ``y`` with any delimiter, text of ``a``/``i``/``c`` to the end of
the line, labels, file names) and reports those commands; a script it cannot
read is reported as such, never guessed at.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

_NO_ARG = frozenset("=dDgGhHnNpPxzF")
_LABEL = frozenset("btT")
_TEXT = frozenset("aic")
_FILE_READ = frozenset("rR")
_FILE_WRITE = frozenset("wW")
_NUMBER = frozenset("qQlL")
_S_FLAGS = frozenset("gpiImM0123456789")


@dataclass(frozen=True, slots=True)
class Effect:
    kind: Literal["runs", "writes", "unreadable"]
    what: str  # the command as written (for the message)
    command: str | None = None  # for ``e command``: the shell text it runs


class SedScriptError(ValueError):
    pass


class _Reader:
    def __init__(self, text: str) -> None:
        self.t = text
        self.i = 0
        self.out: list[Effect] = []

    def peek(self) -> str:
        return self.t[self.i] if self.i < len(self.t) else ""

    def take(self) -> str:
        c = self.peek()
        self.i += 1
        return c

    def skip_blanks(self) -> None:
        while self.peek() in (" ", "\t"):
            self.i += 1

    def to_eol(self) -> str:
        """The rest of the line (file names, ``e`` commands)."""
        end = self.t.find("\n", self.i)
        end = len(self.t) if end < 0 else end
        text, self.i = self.t[self.i : end], end
        return text

    def text_block(self) -> None:
        """``a``/``i``/``c`` text: to the end of the line; a line ending in a
        backslash continues it (GNU one-liner and classic forms alike)."""
        while self.i < len(self.t):
            c = self.take()
            if c == "\\":
                self.i += 1  # an escaped character, an escaped newline continues the text
            elif c == "\n":
                return

    def delimited(self, delim: str) -> str:
        """Up to the next unescaped ``delim`` (GNU's match_slash: no bracket rules)."""
        out: list[str] = []
        while True:
            c = self.take()
            if c == "":
                raise SedScriptError(f"unterminated `{delim}`")
            if c == "\\":
                nxt = self.take()
                if nxt == "":
                    raise SedScriptError("trailing backslash")
                out.append(c + nxt)
            elif c == delim:
                return "".join(out)
            elif c == "\n" and delim != "\n":
                raise SedScriptError("newline inside a regex or replacement")
            else:
                out.append(c)

    def address(self) -> None:
        c = self.peek()
        if c.isdigit():
            while self.peek().isdigit():
                self.i += 1
            if self.peek() == "~":
                self.i += 1
                while self.peek().isdigit():
                    self.i += 1
        elif c == "$":
            self.i += 1
        elif c in ("/", "\\"):
            self.i += 1
            delim = "/" if c == "/" else self.take()
            if delim in ("", "\n", "\\"):
                raise SedScriptError("bad regex delimiter")
            self.delimited(delim)
            while self.peek() in ("I", "M"):
                self.i += 1
        else:
            return
        self.skip_blanks()

    def addresses(self) -> None:
        self.address()
        if self.peek() == ",":
            self.i += 1
            self.skip_blanks()
            if self.peek() in ("+", "~"):
                self.i += 1
                while self.peek().isdigit():
                    self.i += 1
            else:
                self.address()
        self.skip_blanks()
        while self.peek() == "!":
            self.i += 1
            self.skip_blanks()

    def substitute(self, start: int) -> None:
        delim = self.take()
        if delim in ("", "\n", "\\"):
            raise SedScriptError("bad s delimiter")
        self.delimited(delim)
        self.delimited(delim)
        while True:
            c = self.peek()
            if c in _S_FLAGS:
                self.i += 1
            elif c == "e":
                self.i += 1
                self.out.append(Effect("runs", self.t[start : self.i]))  # runs the pattern space
            elif c == "w":
                self.i += 1
                self.out.append(Effect("writes", self.t[start : self.i] + self.to_eol()))
                return
            else:
                return

    def command(self) -> None:
        start = self.i
        c = self.take()
        if c in _NO_ARG or c in "{}":
            return
        if c == "#":
            self.to_eol()
        elif c == ":" or c in _LABEL:
            self.skip_blanks()
            self.label()
        elif c in _TEXT:
            self.text_block()
        elif c in _FILE_READ:
            self.to_eol()
        elif c in _FILE_WRITE:
            self.out.append(Effect("writes", c + self.to_eol()))
        elif c == "e":
            self.skip_blanks()
            cmd = self.to_eol().strip()
            self.out.append(Effect("runs", ("e " + cmd) if cmd else "e", cmd or None))
        elif c == "s":
            self.substitute(start)
        elif c == "y":
            delim = self.take()
            if delim in ("", "\n", "\\"):
                raise SedScriptError("bad y delimiter")
            self.delimited(delim)
            self.delimited(delim)
        elif c in _NUMBER:
            self.skip_blanks()
            while self.peek().isdigit():
                self.i += 1
        elif c == "v":
            self.label()
        else:
            raise SedScriptError(f"unknown command {c!r}")

    def label(self) -> None:
        while self.peek() not in ("", "\n", ";") and not self.peek().isspace():
            self.i += 1

    def run(self) -> list[Effect]:
        while self.i < len(self.t):
            c = self.peek()
            if c in " \t\n;":
                self.i += 1
                continue
            self.addresses()
            if self.peek() in ("", "\n", ";"):
                raise SedScriptError("an address without a command")
            opened = self.peek() == "{"
            self.command()
            self.skip_blanks()
            if opened:
                continue  # a block's first command may follow its { directly
            if self.peek() not in ("", "\n", ";", "}", "#"):
                raise SedScriptError(f"unexpected {self.peek()!r} after a command")
        return self.out


def effects(script: str) -> list[Effect]:
    """Every command in ``script`` that runs something or writes a file; a
    script outside what this reader understands is one ``unreadable`` effect
    (when it holds no ``e`` it cannot run anything, and says so)."""
    if "\x00" in script:  # filled in at run time (xargs, find {}): could be any script
        return [Effect("runs", script)]
    try:
        return _Reader(script).run()
    except SedScriptError as exc:
        kind: Literal["runs", "unreadable"] = "runs" if "e" in script else "unreadable"
        return [Effect(kind, f"{script!r} ({exc})")]
