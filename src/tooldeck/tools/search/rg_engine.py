"""``file_search``'s ripgrep engine: two lean passes instead of parsing a
flood of JSON. rg itself runs through :mod:`tooldeck.workspace.ripgrep` (the
one module that runs it, confined); this module builds the flags and reads
the output.

Pass 1, ``rg --count --null``, searches the whole scope in parallel and prints
one short line per matching file: the exact totals, which file holds which
match, and so where any page starts, with no JSON to parse. Pass 2, ``rg
--json``, runs only on the files of the current page, capped per file with
``--max-count``, and gives the line texts, match offsets and context. A page of
a search with 100,000 hits therefore costs one counting scan plus a search of a
few files, and the cursor is just an offset: stateless and deterministic.

Ignore rules match the workspace walker: nested ``.gitignore`` even outside a
git repository (``--no-require-git``), ``.git/info/exclude``, the root's
``.tooldeckignore`` (``--ignore-file``, relative to the root, which is the
working directory), the built-in deny list as ``--glob '!…'``, hidden files
included (``--hidden``: ``.github/`` is code). ``.ignore`` files and the
user's global git excludes are not rules of tooldeck's, so they are off.
Extensions use ``--type-add``/``--type`` rather than include globs, because an
include glob would override ``.gitignore`` and resurrect ignored files.

The JSON printer ignores ``--max-columns`` (checked with rg 15.2), so long
minified lines are cut when rendered; pass 2 reads only the page's files, and
only ``--max-count`` lines of each, so they stay cheap.
"""

from __future__ import annotations

import base64
import json
import os
import subprocess
from collections.abc import Callable

from tooldeck.core import invalid_arguments
from tooldeck.tools.search.model import ContentQuery, InvalidPattern, Line
from tooldeck.tools.search.scope import Target
from tooldeck.workspace import ripgrep
from tooldeck.workspace.roots import Root

RG_TIMEOUT = 300.0
LONG_LINE = 240  # lines longer than this get a match span (render cuts a window around it)


def _text(obj: dict[str, str]) -> str:
    """rg's JSON ``{"text": ...}`` or ``{"bytes": base64}`` (non-UTF-8 data)."""
    if "text" in obj:
        return obj["text"]
    return base64.b64decode(obj["bytes"]).decode("utf-8", "replace")


def _path(obj: dict[str, str]) -> str:
    if "text" in obj:
        return obj["text"].removeprefix("./")
    return os.fsdecode(base64.b64decode(obj["bytes"])).removeprefix("./")


def parse_counts(out: bytes) -> list[tuple[str, int]]:
    """``path\\0count\\n`` records (``--null`` keeps odd file names intact)."""
    chunks = out.split(b"\0")
    result: list[tuple[str, int]] = []
    path = chunks[0]
    for chunk in chunks[1:]:
        number, _, following = chunk.partition(b"\n")
        result.append((os.fsdecode(path).removeprefix("./"), int(number)))
        path = following
    return result


def _char_span(text: str, raw: bytes | None, start: int, end: int) -> tuple[int, int]:
    """rg reports byte offsets; render needs character offsets."""
    data = raw if raw is not None else text.encode("utf-8")
    if len(data) == len(text):
        return start, end
    a = len(data[:start].decode("utf-8", "replace"))
    return a, a + len(data[start:end].decode("utf-8", "replace"))


def _stderr_line(err: bytes) -> str:
    lines = [ln.strip() for ln in err.decode("utf-8", "replace").splitlines() if ln.strip()]
    for ln in lines:
        if ln.startswith("error:"):
            return ln.removeprefix("error:").strip()
    return (lines[0].removeprefix("rg:").strip() if lines else "ripgrep failed")[:300]


class RipgrepEngine:
    name = "ripgrep"

    def __init__(self, exe: str) -> None:
        self.exe = exe
        self.stop: Callable[[], None] | None = None  # a cancelled call's check: kills rg mid-search

    # argv -----------------------------------------------------------------
    @staticmethod
    def pattern_args(q: ContentQuery) -> list[str]:
        args = ["--engine", "auto"]
        if q.literal:
            args.append("--fixed-strings")
        if q.whole_word:
            args.append("--word-regexp")
        return [*args, "--regexp", q.pattern]

    @staticmethod
    def filter_args(root: Root, q: ContentQuery) -> list[str]:
        args = ripgrep.ignore_args(root.path)
        for glob in q.exclude:
            args += ["--glob", f"!{glob}"]
        if q.extensions:
            for ext in q.extensions:
                args += ["--type-add", f"tdkext:*.{ext}"]
            args += ["--type", "tdkext"]
        return args

    def _run(self, argv: list[str], cwd: str, stdin: bytes | None = None) -> subprocess.CompletedProcess[bytes]:
        return ripgrep.run(
            self.exe, cwd, argv, stdin=stdin, timeout=RG_TIMEOUT, stop=self.stop, hint="; narrow the search with filter"
        )

    def _pattern_error(self, q: ContentQuery, cwd: str) -> str | None:
        """Whether rg rejects the pattern itself: search empty stdin with it."""
        proc = self._run([*self.pattern_args(q), "-"], cwd=cwd, stdin=b"")
        return _stderr_line(proc.stderr) if proc.returncode == 2 else None

    # pass 1 ---------------------------------------------------------------
    def count(self, target: Target, q: ContentQuery) -> tuple[list[tuple[str, int]], list[str]]:
        """(rel path, matching lines) for every matching file, plus warnings."""
        argv = ["--count", "--with-filename", "--null", *self.filter_args(target.root, q), *self.pattern_args(q)]
        argv += ["--", *target.rels]
        proc = self._run(argv, target.root.path)
        warnings: list[str] = []
        if proc.returncode == 2:
            if not proc.stdout:
                problem = self._pattern_error(q, target.root.path)
                if problem is not None:
                    raise InvalidPattern(problem)
                line = _stderr_line(proc.stderr)
                if "glob" in line.lower():
                    raise invalid_arguments(f"field `filter.exclude`: {line}", field="filter.exclude")
            warnings.append(_stderr_line(proc.stderr))
        return parse_counts(proc.stdout), warnings

    # pass 2 ---------------------------------------------------------------
    def lines(self, root: Root, q: ContentQuery, rels: list[str], max_count: int) -> dict[str, list[Line]]:
        """Match and context lines of ``rels`` (at most ``max_count`` matches each)."""
        argv = ["--json", "--max-count", str(max_count)]
        if q.context:
            argv += ["--context", str(q.context)]
        argv += [*self.pattern_args(q), "--", *rels]
        proc = self._run(argv, root.path)
        result: dict[str, list[Line]] = {}
        for raw in proc.stdout.splitlines():
            if raw.startswith(b'{"type":"match"'):
                is_match = True
            elif raw.startswith(b'{"type":"context"'):
                is_match = False
            else:
                continue
            data = json.loads(raw)["data"]
            lines_obj = data["lines"]
            text = _text(lines_obj).removesuffix("\n")
            span = None
            subs = data.get("submatches") or ()
            if is_match and subs and len(text) > LONG_LINE:
                raw_bytes = base64.b64decode(lines_obj["bytes"]) if "bytes" in lines_obj else None
                span = _char_span(text, raw_bytes, subs[0]["start"], subs[0]["end"])
            result.setdefault(_path(data["path"]), []).append(Line(data["line_number"], text, is_match, span))
        return result
