"""ChatMD text -> Elements (no I/O: imports are resolved by ``document.py``).

Why hand-written and not an XML parser: ChatMD is not XML. Message bodies are
prose in which an unknown ``<tag>`` is just text, ``RAW| ... |RAW`` blocks
hold anything verbatim, attributes may be unquoted or bare flags, and an
error must name the line and column the person sees in an editor.

Three kinds of content:

* top level: whitespace, comments, prose (kept as text, ignored by the
  loader) and elements of the closed tag set; any other tag is an error;
* message bodies (``user``, ``assistant``, ``tool_call``...): text in which
  only the inline tags (``doc``, ``img``, ``agent``, ``summary``...) are
  elements; anything else, closed-set tags included, is literal text;
* declaration bodies (``tool``, ``shell_access``...): nested elements of any
  name (``<read/>``, ``<command>``, ``<arg/>``) and text.
"""

from __future__ import annotations

import bisect
import re
from pathlib import Path

from tooldeck.markup.element import ChatmdError, Element, Position

#: The closed tag set of SPEC §5.
TAGS: frozenset[str] = frozenset(
    {
        "config", "msg", "user", "assistant", "system", "developer", "tool_call", "tool_response",
        "reasoning", "summary", "tool", "shell_access", "import", "doc", "img", "agent", "script",
    }
)  # fmt: skip
#: Tags whose body is conversation text.
MESSAGE_TAGS: frozenset[str] = frozenset(
    {"msg", "user", "assistant", "system", "developer", "tool_call", "tool_response", "reasoning", "summary", "agent"}
)
#: Tags whose body is verbatim text up to the closing tag (like HTML's script).
VERBATIM_TAGS: frozenset[str] = frozenset({"script"})
#: Tags that are elements inside a message body (everything else there is text).
INLINE_TAGS: frozenset[str] = frozenset({"doc", "img", "agent", "summary", "import"})

ENTITIES: dict[str, str] = {"lt": "<", "gt": ">", "amp": "&", "quot": '"', "apos": "'"}
_ENTITY_RE = re.compile(r"&(lt|gt|amp|quot|apos|#[0-9]{1,7}|#x[0-9A-Fa-f]{1,6});")
_NAME_RE = re.compile(r"[A-Za-z_][A-Za-z0-9_.:-]*")
_UNQUOTED_RE = re.compile(r"[^\s\"'=<>`]+")
RAW_OPEN, RAW_CLOSE = "RAW|", "|RAW"


def decode_entities(text: str) -> str:
    """The five XML entities plus numeric references; anything else stays literal."""
    if "&" not in text:
        return text

    def sub(m: re.Match[str]) -> str:
        body = m.group(1)
        if body[0] != "#":
            return ENTITIES[body]
        code = int(body[2:], 16) if body[1] in "xX" else int(body[1:])
        if code == 0 or code > 0x10FFFF or 0xD800 <= code <= 0xDFFF:
            return m.group(0)
        return chr(code)

    return _ENTITY_RE.sub(sub, text)


class _Scanner:
    """Cursor over the source with offset -> (line, col) for error positions."""

    def __init__(self, text: str, file: Path | None) -> None:
        self.text = text
        self.file = file
        self.i = 0
        self._starts = [0] + [m.end() for m in re.finditer("\n", text)]

    def pos(self, offset: int | None = None) -> Position:
        off = self.i if offset is None else offset
        line = bisect.bisect_right(self._starts, off) - 1
        return Position(self.file, line + 1, off - self._starts[line] + 1)

    def error(self, message: str, offset: int | None = None) -> ChatmdError:
        return ChatmdError(self.pos(offset), message)

    def startswith(self, s: str) -> bool:
        return self.text.startswith(s, self.i)

    def skip_ws(self) -> None:
        n = len(self.text)
        while self.i < n and self.text[self.i].isspace():
            self.i += 1

    # comments and raw blocks ---------------------------------------------------
    def comment(self) -> None:
        start = self.i
        end = self.text.find("-->", self.i + 4)
        if end < 0:
            raise self.error("comment `<!--` is never closed with `-->`", start)
        self.i = end + 3

    def raw(self) -> str:
        start = self.i
        end = self.text.find(RAW_CLOSE, self.i + len(RAW_OPEN))
        if end < 0:
            raise self.error("`RAW|` block is never closed with `|RAW`", start)
        body = self.text[self.i + len(RAW_OPEN) : end]
        self.i = end + len(RAW_CLOSE)
        return body

    # tags ----------------------------------------------------------------------
    def at_tag(self) -> str | None:
        """The name of the opening tag at the cursor, or None if ``<`` starts no tag."""
        if not self.startswith("<"):
            return None
        m = _NAME_RE.match(self.text, self.i + 1)
        return m.group(0) if m else None

    def closing_tag(self, name: str) -> bool:
        """Consume ``</name>`` (spaces allowed before ``>``) if it is at the cursor."""
        m = re.compile(r"</" + re.escape(name) + r"\s*>").match(self.text, self.i)
        if m is None:
            return False
        self.i = m.end()
        return True

    def open_tag(self) -> tuple[str, dict[str, str | None], bool, int]:
        """Parse ``<name attrs... >`` or ``.../>``: (name, attrs, self_closing, start)."""
        start = self.i
        m = _NAME_RE.match(self.text, self.i + 1)
        assert m is not None
        name = m.group(0)
        self.i = m.end()
        attrs: dict[str, str | None] = {}
        while True:
            self.skip_ws()
            if self.i >= len(self.text):
                raise self.error(f"tag <{name}> is never closed with `>`", start)
            if self.startswith("/>"):
                self.i += 2
                return name, attrs, True, start
            if self.startswith(">"):
                self.i += 1
                return name, attrs, False, start
            self._attribute(name, attrs)

    def _attribute(self, tag: str, attrs: dict[str, str | None]) -> None:
        at = self.i
        m = _NAME_RE.match(self.text, self.i)
        if m is None:
            raise self.error(
                f"unexpected {self.text[self.i]!r} in tag <{tag}>; expected an attribute name, `>` or `/>`"
            )
        key = m.group(0)
        if key in attrs:
            raise self.error(f"attribute `{key}` is given twice in <{tag}>", at)
        self.i = m.end()
        self.skip_ws()
        if not self.startswith("="):
            attrs[key] = None  # a flag: ``local``, ``strict``, ``show_tool_call``
            return
        self.i += 1
        self.skip_ws()
        quote = self.text[self.i] if self.i < len(self.text) else ""
        if quote in ("'", '"'):
            end = self.text.find(quote, self.i + 1)
            if end < 0:
                raise self.error(f"the value of `{key}` in <{tag}> has no closing {quote}", self.i)
            attrs[key] = decode_entities(self.text[self.i + 1 : end])
            self.i = end + 1
            return
        u = _UNQUOTED_RE.match(self.text, self.i)
        if u is None:
            raise self.error(f"attribute `{key}` in <{tag}> has no value after `=`")
        value = u.group(0)
        if value.endswith("/") and self.text.startswith(">", u.end()):
            value = value[:-1]  # ``<tool name=read_file/>``: the slash closes the tag
            if not value:
                raise self.error(f"attribute `{key}` in <{tag}> has no value after `=`")
            self.i = u.end() - 1
        else:
            self.i = u.end()
        attrs[key] = decode_entities(value)


def parse(text: str, file: Path | str | None = None) -> list[Element | str]:
    """Parse a whole document: top-level elements (and the prose between them).

    Raises :class:`ChatmdError` naming file, line and column."""
    s = _Scanner(text, Path(file) if file is not None else None)
    out: list[Element | str] = []
    buf: list[str] = []

    def flush() -> None:
        if buf and "".join(buf).strip():
            out.append("".join(buf))
        buf.clear()

    while s.i < len(text):
        if s.startswith("<!--"):
            s.comment()
            continue
        if s.startswith("</"):
            m = _NAME_RE.match(text, s.i + 2)
            if m is not None:
                raise s.error(f"closing tag </{m.group(0)}> has no matching opening tag")
        name = s.at_tag()
        if name is None:
            buf.append(text[s.i])
            s.i += 1
            continue
        if name not in TAGS:
            raise s.error(f"unknown tag <{name}> at top level; known tags: {', '.join(sorted(TAGS))}")
        flush()
        out.append(_element(s))
    flush()
    return out


def _element(s: _Scanner) -> Element:
    name, attrs, closed, start = s.open_tag()
    el = Element(name, attrs, [], s.pos(start))
    if closed:
        return el
    if name in VERBATIM_TAGS:
        end = re.compile(r"</" + re.escape(name) + r"\s*>").search(s.text, s.i)
        if end is None:
            raise _unclosed(s, el, start)
        if end.start() > s.i:
            el.children.append(s.text[s.i : end.start()])
        s.i = end.end()
    elif name in MESSAGE_TAGS:
        _message_body(s, el, start)
    else:
        _declaration_body(s, el, start)
    return el


def _unclosed(s: _Scanner, el: Element, start: int) -> ChatmdError:
    return s.error(f"<{el.tag}> is never closed with </{el.tag}>", start)


def _message_body(s: _Scanner, el: Element, start: int) -> None:
    """Text up to ``</tag>``: inline tags are elements, other tags literal text."""
    text = s.text
    buf: list[str] = []
    mark = s.i  # start of the pending literal run

    def flush(upto: int) -> None:
        if upto > mark:
            buf.append(decode_entities(text[mark:upto]))
        if buf:
            joined = "".join(buf)
            if el.children and isinstance(el.children[-1], str):
                el.children[-1] += joined
            else:
                el.children.append(joined)
            buf.clear()

    while True:
        nxt = _next_special(text, s.i)
        if nxt < 0:
            raise _unclosed(s, el, start)
        s.i = nxt
        if s.startswith(RAW_OPEN):
            flush(nxt)
            buf.append(s.raw())
        elif s.startswith("<!--"):
            flush(nxt)
            s.comment()
        elif s.closing_tag(el.tag):
            flush(nxt)
            return
        elif (name := s.at_tag()) is not None and name in INLINE_TAGS and name != el.tag:
            flush(nxt)
            el.children.append(_element(s))
        else:
            s.i += 1
            continue
        mark = s.i


def _next_special(text: str, i: int) -> int:
    """Offset of the next ``<`` or ``RAW|`` at or after ``i`` (-1 if none)."""
    lt = text.find("<", i)
    raw = text.find(RAW_OPEN, i)
    if lt < 0:
        return raw
    if raw < 0:
        return lt
    return min(lt, raw)


def _declaration_body(s: _Scanner, el: Element, start: int) -> None:
    """Nested elements of any name, text, comments and raw blocks up to ``</tag>``."""
    text = s.text
    buf: list[str] = []

    def flush() -> None:  # whitespace between declaration elements is layout, not content
        if buf and "".join(buf).strip():
            el.children.append(decode_entities("".join(buf)))
        buf.clear()

    while True:
        if s.i >= len(text):
            raise _unclosed(s, el, start)
        if s.startswith(RAW_OPEN):
            flush()
            el.children.append(s.raw())
        elif s.startswith("<!--"):
            s.comment()
        elif s.closing_tag(el.tag):
            flush()
            return
        elif s.startswith("</"):
            m = _NAME_RE.match(text, s.i + 2)
            shown = m.group(0) if m else ""
            raise s.error(f"</{shown}> closes nothing here; <{el.tag}> (line {el.pos.line}) is still open")
        elif s.at_tag() is not None:
            flush()
            el.children.append(_element(s))
        else:
            buf.append(text[s.i])
            s.i += 1
