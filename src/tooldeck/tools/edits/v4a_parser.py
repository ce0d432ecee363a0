"""V4A patch text → typed operations. No I/O.

The dialect is the one Codex models are trained on::

    *** Begin Patch
    *** Add File: path            every following line starts with "+"
    *** Delete File: path
    *** Update File: path
    *** Move to: new/path         optional, right after Update
    @@ anchor                      optional line that narrows the search
     context / -removed / +added
    *** End of File                optional: the chunk ends the file
    *** End Patch

Leniencies, each one a mistake models are seen to make:

* the whole text may be wrapped in a shell heredoc (``<<'EOF'`` … ``EOF``,
  optionally ``apply_patch <<'EOF'``) or a Markdown code fence;
* markers are recognised with surrounding whitespace and in any case;
* the first chunk of an Update may omit its ``@@`` line; a unified-diff
  header ``@@ -12,7 +12,8 @@ def f():`` counts as the anchor ``def f():``;
* several ``@@`` lines in a row stack: each anchor is searched after the
  previous one, narrowing the place (both seeds' instructions describe this);
* an empty line inside a chunk is an empty context line, and an empty line
  inside an Add File section is an empty line of the new file;
* an Update with only ``*** Move to:`` is a plain rename;
* ``[hash=H]`` after a path is the content hash the model read (read_file
  prints it); the file must still have it.

Inside a chunk a line starting with exactly one space is always context, even
when the rest looks like a marker: files that contain patches (tests, docs)
stay patchable.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass
from typing import NamedTuple

from tooldeck.core.errors import ErrorCode, ToolError
from tooldeck.tools.edits.plain import PlainChunks, PlainSection, anchor_of, plain_sections

BEGIN = "*** Begin Patch"
END = "*** End Patch"
ADD = "*** Add File:"
DELETE = "*** Delete File:"
UPDATE = "*** Update File:"
MOVE = "*** Move to:"
END_OF_FILE = "*** End of File"

_FILE_MARKERS = (ADD, DELETE, UPDATE)
_HEREDOC_RE = re.compile(r"^(?:\S*apply_?patch\s+)?<<-?\s*(['\"]?)([A-Za-z_][A-Za-z0-9_]*)\1\s*$")
_HASH_RE = re.compile(r"^(.*?)\s*\[(?:hash|sha)\s*[=:]\s*([0-9a-fA-F]{8,64})\]$")


class Chunk(NamedTuple):
    """One ``@@`` section: anchors to find first, then lines to replace.

    ``lines`` keeps the patch's lines in order, each starting with its op
    (``" "`` context, ``"-"`` removed, ``"+"`` added) — the patch's own
    strings, not copies; ``ops`` splits them as (op, text) so that context
    lines can be taken from the file, not from the patch. ``old`` and ``new``
    are the chunk's lines without their op (context and removed; context and
    added), built by the parser in the loop that reads the lines anyway: the
    exact fast path needs nothing else, and a context line's text is one
    string shared by both. All tuples of strings: the garbage collector stops
    tracking such a tuple (and then the chunk holding only them) the first
    time it looks, so thousands of chunks do not make every later collection
    walk them; a list would stay tracked. A named tuple: a big patch makes
    thousands, and a frozen dataclass costs a call per field to build."""

    anchors: tuple[str, ...]
    lines: tuple[str, ...]
    end_of_file: bool
    line: int  # 1-based line of the chunk in the patch text
    old: tuple[str, ...]
    new: tuple[str, ...]

    @property
    def ops(self) -> tuple[tuple[str, str], ...]:
        return tuple((x[0], x[1:]) for x in self.lines)

    @property
    def old_lines(self) -> list[str]:
        return list(self.old)

    @property
    def new_lines(self) -> list[str]:
        return list(self.new)


_new_chunk = tuple.__new__  # a Chunk without the Python-level __new__ of a named tuple


@dataclass(frozen=True, slots=True)
class AddFile:
    path: str
    lines: tuple[str, ...]
    line: int
    expected_hash: str | None = None


@dataclass(frozen=True, slots=True)
class DeleteFile:
    path: str
    line: int
    expected_hash: str | None = None


class UpdateFile:
    """An Update. ``plain``: its chunks as the bulk parse of :mod:`plain`
    gave them (the exact path's input); ``chunks`` are then parsed line by
    line from the section's text only if asked for (the ladder, a test)."""

    __slots__ = ("_chunks", "_source", "expected_hash", "line", "move_to", "path", "plain")

    def __init__(
        self,
        path: str,
        move_to: str | None,
        chunks: tuple[Chunk, ...] | None,
        line: int,
        expected_hash: str | None = None,
        plain: PlainChunks | None = None,
        source: bytes = b"",
    ) -> None:
        self.path, self.move_to, self.line, self.expected_hash = path, move_to, line, expected_hash
        self._chunks, self.plain, self._source = chunks, plain, source

    @property
    def chunks(self) -> tuple[Chunk, ...]:
        if self._chunks is None:
            lines = (UPDATE + " " + self._source.decode("utf-8")).split("\n")
            self._chunks = _Parser(lines, self.line)._update(lines[0][len(UPDATE) :].strip()).chunks
        return self._chunks


FileOp = AddFile | DeleteFile | UpdateFile


@dataclass(frozen=True, slots=True)
class Patch:
    ops: tuple[FileOp, ...]


def syntax_error(line: int | None, message: str) -> ToolError:
    where = f"patch line {line}: " if line is not None else ""
    return ToolError(
        ErrorCode.PATCH_SYNTAX,
        f"{where}{message}. Nothing was changed; fix the patch and send it again.",
        {"line": line} if line is not None else None,
    )


# ---------------------------------------------------------------------------
# the input envelope


def unwrap_input(raw: object) -> tuple[str, dict[str, str]]:
    """The patch text and any expected hashes from what a host delivered: the
    raw text, a JSON string, or ``{"input" | "patch": ..., "expected_hashes": {...}}``."""
    expected: dict[str, str] = {}
    if isinstance(raw, bytes):
        try:
            raw = raw.decode("utf-8")
        except UnicodeDecodeError as exc:
            raise ToolError(ErrorCode.INVALID_ARGUMENTS, "the patch is not valid UTF-8 text") from exc
    if isinstance(raw, str) and raw.lstrip()[:1] in ('"', "{"):  # lstrip: no copy of a patch (no leading space)
        try:
            decoded = json.loads(raw.strip(), strict=False)
        except json.JSONDecodeError:
            decoded = None
        if isinstance(decoded, str | dict):
            raw = decoded
    if isinstance(raw, dict):
        text = raw.get("input", raw.get("patch"))
        hashes = raw.get("expected_hashes") or {}
        unknown = set(raw) - {"input", "patch", "expected_hashes"}
        if unknown or not isinstance(text, str) or not isinstance(hashes, dict):
            raise ToolError(
                ErrorCode.INVALID_ARGUMENTS,
                'send the patch as raw text, or as {"input": "*** Begin Patch..."} '
                '(optionally with "expected_hashes": {"path": "hash"})',
                {"fields": sorted(unknown)} if unknown else None,
            )
        expected = {str(k): str(v) for k, v in hashes.items()}
        raw = text
    if raw is None:
        raw = ""
    if not isinstance(raw, str):
        raise ToolError(ErrorCode.INVALID_ARGUMENTS, "the patch must be a string")
    return raw, expected


def _strip_wrappers(lines: list[str]) -> tuple[list[str], int]:
    """Remove a heredoc or code-fence wrapper; returns (lines, lines dropped in front)."""
    dropped = 0
    for _ in range(2):  # a fence inside a heredoc, or the other way round
        if len(lines) < 3:
            break
        first, last = lines[0].strip(), lines[-1].strip()
        m = _HEREDOC_RE.match(first)
        heredoc = bool(m) and last.endswith(m.group(2))
        fence = first.startswith("```") and last == "```"
        if not (heredoc or fence):
            break
        lines, dropped = lines[1:-1], dropped + 1
        while lines and not lines[0].strip():
            lines, dropped = lines[1:], dropped + 1
        while lines and not lines[-1].strip():
            lines = lines[:-1]
    return lines, dropped


# ---------------------------------------------------------------------------
# markers


def _marker(line: str, marker: str) -> str | None:
    """The text after ``marker`` if ``line`` (trimmed, any case) starts with it."""
    s = line.strip()
    if s[: len(marker)].lower() == marker.lower():
        return s[len(marker) :].strip()
    return None


def _is_marker_line(line: str) -> bool:
    if "***" not in line[:8]:  # fast path: markers start with "***" after at most a little padding
        return False
    s = line.strip().lower()
    return s.startswith("*** ") and (
        any(s.startswith(m.lower()) for m in (*_FILE_MARKERS, MOVE)) or s in (END.lower(), END_OF_FILE.lower())
    )


def _is_context_line(line: str) -> bool:
    """A single leading space marks context, whatever follows it."""
    return line.startswith(" ") and not line[1:2].isspace()


def _path_and_hash(rest: str, line: int, what: str) -> tuple[str, str | None]:
    path, digest = rest, None
    m = _HASH_RE.match(rest)
    if m:
        path, digest = m.group(1).strip(), m.group(2).lower()
    if len(path) >= 2 and path[0] == path[-1] and path[0] in "\"'`":
        path = path[1:-1]
    if not path:
        raise syntax_error(line, f"'{what}' needs a file path after it")
    return path, digest


# ---------------------------------------------------------------------------
# the parser


def parse_patch(text: str, *, bulk: bool = True) -> Patch:
    """Parse a V4A patch or raise ``patch_syntax`` naming the line (``bulk``: the usual patch in bulk)."""
    if not text or text.isspace():  # (not a stripped copy of a big patch)
        raise syntax_error(None, "the patch is empty; send '*** Begin Patch', file operations, '*** End Patch'")
    text = (text.replace("\r\n", "\n") if "\r" in text else text).lstrip("\ufeff")
    plain = plain_sections(text) if bulk else None
    if plain is not None:
        return Patch(tuple(_plain_update(s) for s in plain))
    all_lines = text.split("\n")
    lead = 0
    while all_lines and not all_lines[0].strip():
        all_lines.pop(0)
        lead += 1
    while all_lines and not all_lines[-1].strip():
        all_lines.pop()
    lines, dropped = _strip_wrappers(all_lines)
    offset = lead + dropped  # patch line number of lines[0] is offset + 1
    if not lines or lines[0].strip().lower() != BEGIN.lower():
        raise syntax_error(offset + 1, f"the first line of the patch must be '{BEGIN}'")
    if len(lines) < 2 or lines[-1].strip().lower() != END.lower():
        raise syntax_error(
            offset + len(lines), f"the last line of the patch must be '{END}' (was the patch cut short?)"
        )
    parser = _Parser(lines[1:-1], offset + 2)
    ops = parser.parse()
    if not ops:
        raise syntax_error(offset + 1, "the patch contains no file operations (empty patch)")
    return Patch(tuple(ops))


def _plain_update(s: PlainSection) -> UpdateFile:
    path, digest = _path_and_hash(s.head.strip(), s.line, UPDATE)
    return UpdateFile(path, None, None, s.line, digest, s.chunks, s.text)


class _Parser:
    def __init__(self, lines: list[str], first_line: int) -> None:
        self.lines = lines
        self.first = first_line
        self.i = 0

    def lineno(self, i: int | None = None) -> int:
        return self.first + (self.i if i is None else i)

    def parse(self) -> list[FileOp]:
        ops: list[FileOp] = []
        while self.i < len(self.lines):
            line = self.lines[self.i]
            if not line.strip():
                self.i += 1
                continue
            if (rest := _marker(line, ADD)) is not None:
                ops.append(self._add(rest))
            elif (rest := _marker(line, DELETE)) is not None:
                path, digest = _path_and_hash(rest, self.lineno(), DELETE)
                ops.append(DeleteFile(path, self.lineno(), digest))
                self.i += 1
            elif (rest := _marker(line, UPDATE)) is not None:
                ops.append(self._update(rest))
            elif _marker(line, END) is not None and line.strip().lower() == END.lower():
                raise syntax_error(self.lineno(), f"'{END}' may only be the last line of the patch")
            else:
                raise syntax_error(
                    self.lineno(),
                    f"{line.strip()[:80]!r} is not a file operation; expected '{ADD} path', "
                    f"'{DELETE} path' or '{UPDATE} path'",
                )
        return ops

    def _add(self, rest: str) -> AddFile:
        start = self.lineno()
        path, digest = _path_and_hash(rest, start, ADD)
        self.i += 1
        content: list[str] = []
        while self.i < len(self.lines):
            line = self.lines[self.i]
            if line.startswith("+"):
                content.append(line[1:])
            elif not line.strip():
                if not self._more_added_lines():
                    break
                content.append("")
            elif _is_marker_line(line):
                if _marker(line, END_OF_FILE) is not None and line.strip().lower() == END_OF_FILE.lower():
                    self.i += 1
                break
            else:
                raise syntax_error(
                    self.lineno(), f"every line of an added file must start with '+' (got {line[:60]!r})"
                )
            self.i += 1
        return AddFile(path, tuple(content), start, digest)

    def _more_added_lines(self) -> bool:
        for line in self.lines[self.i + 1 :]:
            if line.strip():
                return line.startswith("+")
        return False

    def _update(self, rest: str) -> UpdateFile:
        start = self.lineno()
        path, digest = _path_and_hash(rest, start, UPDATE)
        self.i += 1
        move_to: str | None = None
        j = self.i
        while j < len(self.lines) and not self.lines[j].strip():
            j += 1
        if j < len(self.lines) and (dest := _marker(self.lines[j], MOVE)) is not None:
            move_to, _ = _path_and_hash(dest, self.lineno(j), MOVE)
            self.i = j + 1
        chunks: list[Chunk] = []
        lines, n = self.lines, len(self.lines)
        while self.i < n:
            line = lines[self.i]
            if line[:2] != "@@":  # a chunk's header needs no other look
                if not line.strip() and (not chunks or line == ""):
                    self.i += 1
                    continue
                if _is_marker_line(line) and not _is_context_line(line):
                    break
            chunks.append(self._chunk(not chunks))
        if not chunks and move_to is None:
            raise syntax_error(start, f"'{UPDATE} {path}' has no changes (add @@ chunks or '{MOVE} new/path')")
        return UpdateFile(path, move_to, tuple(chunks), start, digest)

    def _chunk(self, first: bool) -> Chunk:
        lines, n, i = self.lines, len(self.lines), self.i  # locals: this runs once per chunk of a big patch
        start = self.first + i
        anchors: list[str] = []
        while i < n:
            line = lines[i]
            if line[:2] != "@@":
                head = line[:1]  # an op line is no header: say so without calling _is_header
                if head == "+" or head == "-" or (head == " " and not line[1:2].isspace()) or not _is_header(line):
                    break
            anchor = anchor_of(line)
            if anchor:
                anchors.append(anchor)
            i += 1
        if i == self.i and not first:
            raise syntax_error(start, f"expected a '@@' line to start the next chunk, got {lines[i][:60]!r}")
        body: list[str] = []  # the chunk's lines, each starting with its op
        old: list[str] = []
        new: list[str] = []
        trailing_empty = 0  # raw empty lines at the end: separators, not context
        end_of_file = False
        while i < n:
            j = _plain_run(lines, i, old, new)  # the common case, in one tight loop
            if j > i:
                body += lines[i:j]
                trailing_empty = 0
                i = j
                if i >= n:
                    break
            line = lines[i]
            if line == "":
                body.append(" ")
                old.append("")
                new.append("")
                trailing_empty += 1
                i += 1
                continue
            if line[:2] == "@@":  # the next chunk's header
                break
            if _is_marker_line(line) and not _is_context_line(line):
                if line.strip().lower() == END_OF_FILE.lower():
                    end_of_file = True
                    i += 1
                break
            if _is_header(line):
                break
            if line[0] in " +-":
                _take(line, body, old, new)
            elif line.startswith("\\"):  # "\ No newline at end of file", a unified-diff habit
                pass
            elif line[0] == "\t":  # a tab-indented context line sent without its marker space
                _take(" " + line, body, old, new)
            else:
                self.i = i
                raise syntax_error(
                    self.lineno(),
                    f"unexpected line {line[:60]!r} in an update chunk; every line must start with "
                    "' ' (context), '-' (removed) or '+' (added)",
                )
            trailing_empty = 0
            i += 1
        self.i = i
        if trailing_empty:  # empty context lines: in old and new alike
            del body[-trailing_empty:], old[-trailing_empty:], new[-trailing_empty:]
        if not body:
            raise syntax_error(start, "this chunk has no lines to change (a '@@' must be followed by ' ', '-' or '+')")
        return _new_chunk(Chunk, (tuple(anchors), tuple(body), end_of_file, start, tuple(old), tuple(new)))


def _take(line: str, body: list[str], old: list[str], new: list[str]) -> None:
    """Add one op line (not met by :func:`_plain_run`) to the chunk."""
    body.append(line)
    text = line[1:]
    if line[0] != "+":
        old.append(text)
    if line[0] != "-":
        new.append(text)


def _plain_run(lines: list[str], i: int, old: list[str], new: list[str]) -> int:
    """The index of the first line from ``i`` that is not plainly an op
    (``+x``, ``-x``, `` x`` unless the space pads a marker or ``@@``); the
    text of each line read goes to ``old`` and/or ``new``. The hot loop of a
    big patch: locals only, no call per line, a marker looked for only in a
    line that contains one."""
    n = len(lines)
    to_old, to_new = old.append, new.append
    while i < n:
        line = lines[i]
        head = line[:1]
        if head == " ":
            if ("***" in line or "@@" in line) and line[1:2] in (" ", "\t"):
                rest = line.lstrip()
                if rest[:3] == "***" or rest[:2] == "@@":
                    return i
            text = line[1:]
            to_old(text)
            to_new(text)
        elif head == "-":
            to_old(line[1:])
        elif head == "+":
            to_new(line[1:])
        else:
            return i
        i += 1
    return i


def _is_header(line: str) -> bool:
    """A ``@@`` chunk header (a single leading space would make it context)."""
    return line.lstrip().startswith("@@") and not _is_context_line(line)

