"""file_search (seed 004): find files by path and/or content.

The stages live in their own modules: ``scope`` (where to look), ``paths``
(path ranking), ``content`` + an engine (``ripgrep`` or ``pysearch``) for
text, ``render`` (what the model reads), ``cursor`` (continuations). This
module only picks the mode and wires them together.
"""

from __future__ import annotations

import json
import os
from collections.abc import Callable

from pydantic import ValidationError

from tooldeck.core import Invocation, invalid_arguments, tool
from tooldeck.core.tool import Tool
from tooldeck.runtime import Runtime
from tooldeck.tools.search import cursor
from tooldeck.tools.search.content import Engine, count_matches, page_blocks
from tooldeck.tools.search.model import ContentQuery, FileSearchInput, SearchFilter
from tooldeck.tools.search.paths import STRONG, looks_like_glob, looks_like_path, path_kind, rank_paths, regex_error
from tooldeck.tools.search.pysearch import PythonEngine
from tooldeck.tools.search.render import (
    content_header,
    content_page,
    continue_note,
    count_lines,
    n,
    path_lines,
    remaining,
    showing,
)
from tooldeck.tools.search.rg_engine import RipgrepEngine
from tooldeck.tools.search.scope import Target, resolve_targets
from tooldeck.workspace.ripgrep import find_rg, lazy_stall_check
from tooldeck.workspace.rulefiles import RuleFilesStall, stalling_rule_files

ENGINE_SETTING = "search_engine"  # "auto" (default), "ripgrep" or "python"
# fields a cursor's search may change on the way: they do not change what matches
_PAGE_FIELDS = {"max_results", "context_lines"}
NO_MATCH_HINT = (
    "[no match; ignored files (.gitignore, .tooldeckignore, the deny list such as node_modules/) "
    "and binary files are not searched]"
)

DESCRIPTION = (
    "Search (grep) the code and files of the workspace by content and/or path (ripgrep; ignored and binary "
    "files skipped). mode: content (regex; an invalid one is searched literally), path (fuzzy/glob/regex, best "
    "first), both, auto (the result says which). Content hits grouped by file: `N:` match, `N-` context. "
    'The last line says how many more and gives {"cursor": ...} to continue.'
)


def choose_mode(args: FileSearchInput) -> tuple[str, str]:
    """The mode to run and, for ``auto``, why."""
    if args.mode != "auto":
        return args.mode, ""
    p = args.pattern or ""
    if looks_like_glob(p) and not any(c.isspace() for c in p):
        return "path", "the pattern looks like a glob"
    if looks_like_path(p):
        return "both", "the pattern looks like a file path: paths first, then content"
    return "content", "a text pattern searches file contents"


def apply_cursor(args: FileSearchInput) -> tuple[FileSearchInput, str | None, int]:
    """(the search to run, section being continued or None, offset)."""
    if args.cursor is None:
        return args, None, 0
    query, section, offset = cursor.decode(args.cursor)
    try:
        base = FileSearchInput.model_validate(query)
    except ValidationError as exc:
        raise invalid_arguments(
            "field `cursor`: not a valid file_search cursor; start a new search", field="cursor"
        ) from exc
    given, stored = args.model_dump(), base.model_dump()
    for name in sorted(args.model_fields_set - {"cursor"}):
        if name in _PAGE_FIELDS:
            stored[name] = given[name]
        elif given[name] != stored[name]:
            raise invalid_arguments(
                f"field `cursor` continues a different search (`{name}` differs); send the cursor alone, "
                "or drop it to start this new search",
                field="cursor",
            )
    return FileSearchInput.model_validate(stored), section, offset


def pick_engine(rt: Runtime) -> Engine:
    """ripgrep when available (or forced), else the pure-Python engine."""
    wanted = str(rt.settings.get(ENGINE_SETTING) or os.environ.get("TOOLDECK_SEARCH_ENGINE") or "auto")
    python = python_engine(rt)
    if wanted == "python":
        return python
    exe = find_rg()
    if exe is None:
        return python
    # a FIFO named .gitignore would stall rg until its timeout: looked for now, or (in the
    # launcher) only if rg runs long (ripgrep.run raises RuleFilesStall, see _content)
    if not lazy_stall_check() and any(stalling_rule_files(root.path) for root in rt.workspace.roots):
        return python
    return RipgrepEngine(exe)


def python_engine(rt: Runtime) -> Engine:
    return PythonEngine(lambda root: rt.workspace.rules(root))


class _Search:
    """One call: the resolved arguments and what every section needs."""

    def __init__(self, rt: Runtime, args: FileSearchInput, section: str | None, offset: int) -> None:
        self.rt, self.args, self.section, self.offset = rt, args, section, offset
        self.ws = rt.workspace
        flt = args.filter or SearchFilter()
        self.extensions = tuple(flt.extensions or ())
        self.exclude = tuple(flt.exclude or ())
        self.targets: list[Target] = resolve_targets(self.ws, flt.paths)
        self.query = args.query_fields()
        self.budget_chars = max(4000, rt.budget_tokens * 2)

    def display(self, root_index: int, rel: str) -> str:
        return self.ws.display(os.path.join(self.ws.roots[root_index].path, rel))

    @property
    def pattern(self) -> str:
        assert self.args.pattern is not None
        return self.args.pattern

    def paths(self, both: bool) -> list[str]:
        args, offset = self.args, (self.offset if self.section == "path" else 0)
        kind = path_kind(self.pattern, args.regex)
        out: list[str] = []
        if kind == "regex" and (problem := regex_error(self.pattern)) is not None:
            kind = "text"
            out.append(f"[pattern is not a valid regex ({problem}); matched it as plain text]")
        hits = rank_paths(
            self.targets,
            self.ws.rules,
            self.pattern,
            kind,
            extensions=self.extensions,
            exclude=self.exclude,
            min_score=STRONG if both else 1,
        )
        label = {"glob": "glob", "regex": "regex", "text": "fuzzy"}[kind]
        head = f"path matches for {json.dumps(self.pattern, ensure_ascii=False)} ({label}) — "
        head += n(len(hits), "path") if hits else "none"
        if args.count_only:
            return [head, *out]
        shown = _fit(path_lines(hits[offset : offset + args.max_results], self.display), self.budget_chars)
        head += showing(offset, len(shown), len(hits))
        rest = len(hits) - offset - len(shown)
        lines = [head, *out, *shown]
        if rest > 0:
            lines.append(continue_note(n(rest, "more path"), cursor.encode(self.query, "path", offset + len(shown))))
        return lines

    def content(self, engine: Engine) -> list[str]:
        args, offset = self.args, (self.offset if self.section == "content" else 0)
        q = ContentQuery(
            self.pattern,
            literal=not args.regex,
            whole_word=args.whole_word,
            context=args.context_lines,
            extensions=self.extensions,
            exclude=self.exclude,
        )
        search = count_matches(engine, self.targets, q)
        blocks = None
        if args.count_only or not search.counts.files:
            search.settle()
        else:  # the page pass runs while the counted files are checked (it settles the counts)
            blocks = page_blocks(engine, self.targets, search, offset, args.max_results)
        counts = search.counts
        notes = [f"[warning: {w}]" for w in counts.warnings[:3]]
        if search.invalid_regex is not None:
            notes.insert(0, f"[pattern is not a valid regex ({search.invalid_regex}); searched for the literal text]")
        head = content_header(search.query, counts, engine.name)
        if counts.total == 0:
            return [head, *notes, NO_MATCH_HINT]
        if args.count_only:
            rows = _fit(count_lines(counts, offset, args.max_results, self.display), self.budget_chars)
            lines = [head + showing(offset, len(rows), len(counts.files), " files"), *notes, *rows]
            rest = len(counts.files) - offset - len(rows)
            if rest > 0:
                nxt = cursor.encode(self.query, "content", offset + len(rows))
                lines.append(continue_note(n(rest, "more file"), nxt))
            return lines
        assert blocks is not None
        page = content_page(blocks, self.display, self.budget_chars, gaps=q.context > 0)
        lines = [head + showing(offset, page.shown, counts.total), *notes, *page.lines]
        more, files = remaining(counts, offset + page.shown)
        if more > 0:
            what = f"{n(more, 'more matching line')} in {n(files, 'file')}"
            lines.append(continue_note(what, cursor.encode(self.query, "content", offset + page.shown)))
        return lines


def _fit(lines: list[str], budget_chars: int) -> list[str]:
    """The leading lines that fit the character budget (at least one)."""
    used = 0
    for i, line in enumerate(lines):
        used += len(line) + 1
        if used > budget_chars and i:
            return lines[:i]
    return lines


def build(rt: Runtime, engine_factory: Callable[[Runtime], Engine] = pick_engine) -> Tool:
    def file_search(args: FileSearchInput, inv: Invocation) -> str:
        args, section, offset = apply_cursor(args)
        mode, why = choose_mode(args)
        search = _Search(rt, args, section, offset)
        lines: list[str] = [f"[mode auto → {mode}: {why}]"] if why and section is None else []
        if mode in ("path", "both") and section in (None, "path"):
            lines += search.paths(both=mode == "both")
        if mode in ("content", "both") and section in (None, "content"):
            if lines and mode == "both":
                lines.append("")
            engine = engine_factory(rt)
            if hasattr(engine, "stop"):
                engine.stop = inv.check_cancelled  # a cancelled call kills its rg
            try:
                lines += search.content(engine)
            except RuleFilesStall:  # rg was killed on a FIFO rule file: the walker's rules skip it
                lines += search.content(python_engine(rt))
        return "\n".join(lines)

    return tool(file_search, description=DESCRIPTION, read_only=True, idempotent=True)
