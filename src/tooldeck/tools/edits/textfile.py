"""A text file as lines, remembering how it was spelt on disk.

Edits work on lines without terminators; writing back must not change what
the edit did not touch. So the file's line ending (CRLF only when *every*
newline is CRLF, so an LF file that merely contains a stray ``\\r\\n`` is not
rewritten) and a leading byte-order mark are kept aside and restored by
:meth:`TextFile.render`. Pure: no I/O.
"""

from __future__ import annotations

from dataclasses import dataclass

from tooldeck.tools.common import join_spelling, split_spelling


@dataclass(frozen=True, slots=True)
class TextFile:
    lines: list[str]
    eol: str = "\n"
    bom: str = ""
    ends_with_newline: bool = True

    @classmethod
    def parse(cls, text: str) -> TextFile:
        bom, eol, text = split_spelling(text)
        if not text:
            return cls([], eol, bom, True)
        lines = text.split("\n")
        ends = lines[-1] == ""
        if ends:
            lines.pop()
        return cls(lines, eol, bom, ends)

    @property
    def body(self) -> str:
        """The text with ``\\n`` line ends and no BOM (what search/replace sees)."""
        if not self.lines:
            return ""
        return "\n".join(self.lines) + ("\n" if self.ends_with_newline else "")

    def render(self, lines: list[str]) -> str:
        """``lines`` written the way this file was: same line ending and BOM,
        always ending with one newline (an empty list stays empty)."""
        if not lines:
            return self.bom
        return self.bom + self.eol.join(lines) + self.eol

    def render_body(self, body: str) -> str:
        """A ``\\n``-separated text written back with this file's line ending and BOM."""
        return join_spelling(self.bom, self.eol, body)
