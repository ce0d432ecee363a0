"""Rendering a codemap as the text shown to models.

::

    src/app.py  (python)
    imports: os, typing.Any, .models.User
    class Server(Base)  L12
      def __init__(self, host: str, port: int = 80)  L15
      prop timeout: float = 3.0  L13
    def main(argv: list[str]) -> int  L40

One line per definition: its signature, then ``L<line>``; members indented
under their parent. Bodies never appear (extraction never keeps them).
"""

from __future__ import annotations

from tooldeck.codemap.model import Codemap

MAX_IMPORTS = 40


def render(cm: Codemap, *, shown_path: str | None = None) -> str:
    lines = [f"{shown_path or cm.path}  ({cm.language})"]
    if cm.imports:
        shown = cm.imports[:MAX_IMPORTS]
        more = len(cm.imports) - len(shown)
        lines.append("imports: " + ", ".join(shown) + (f", … {more} more" if more > 0 else ""))
    last: tuple[int, str] | None = None
    for sym in cm.symbols:
        key = (sym.line, sym.signature)
        if key == last:  # one statement defining several names (attr_reader :a, :b)
            continue
        last = key
        lines.append(f"{'  ' * sym.depth}{sym.signature}  L{sym.line}")
    if len(lines) == 1 or (len(lines) == 2 and cm.imports):
        lines.append("(no definitions)")
    return "\n".join(lines)
