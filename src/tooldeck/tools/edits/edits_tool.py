"""apply_edits (seed 004): search/replace edits or a full rewrite of one file.

Exactly one mode per call: ``rewrite`` (+ ``on_missing``), ``search`` /
``replace`` (+ ``all``), or ``edits: [{search, replace, all}]``. Edits apply
in order to the text in memory, each through the matching ladder of
:mod:`match`; the file is written once, atomically, only when every edit
found its place. CRLF files stay CRLF (matching happens on ``\\n`` text).
"""

from __future__ import annotations

import difflib
import hashlib
from dataclasses import dataclass, field
from typing import Literal

from pydantic import BaseModel, ConfigDict, Field, model_validator

from tooldeck.core import ToolError, ToolInput
from tooldeck.core.errors import ErrorCode
from tooldeck.core.schema import decode_model
from tooldeck.core.tool import RawArguments, Tool, ToolAnnotations, create_function
from tooldeck.runtime import Runtime
from tooldeck.settings import setting
from tooldeck.tools.common import check_expected_hash, join_spelling, split_spelling
from tooldeck.tools.edits.match import LADDER, Span, find
from tooldeck.tools.edits.recover import recover
from tooldeck.workspace import journal
from tooldeck.workspace.atomic import AtomicBatch, retrying
from tooldeck.workspace.content import HASH_CHARS, decode_text, read_bytes
from tooldeck.workspace.roots import ResolvedPath

HASH_DOC = "Hash from read_file; refused with `conflict` if the file changed since."
MAX_DIFF_LINES = 200
LARGE_CHARS = 8 * 2**20  # above this, no whole-file diff: memory stays near twice the file


class EditSpec(BaseModel):
    model_config = ConfigDict(extra="forbid")

    search: str = Field(description="Exact text to find.")
    replace: str = Field(description="Replacement text.")
    all: bool = Field(False, description="Replace every occurrence.")


class ApplyEditsInput(ToolInput):
    path: str = Field(description="File to edit.")
    search: str | None = Field(None, description="Text to find (single edit).")
    replace: str | None = Field(None, description="Replacement text (single edit).")
    all: bool = Field(False, description="With search/replace: replace every occurrence.")
    edits: list[EditSpec] | None = Field(None, description="Several edits, applied in order.")
    rewrite: str | None = Field(None, description="The complete new content of the file.")
    on_missing: Literal["error", "create"] = Field("error", description="With rewrite: when the file is missing.")
    verbose: bool | None = Field(
        None, description="Add a unified diff to the result (default: setting editing.verbose, off)."
    )
    expected_hash: str | None = Field(None, description=HASH_DOC)

    @model_validator(mode="after")
    def _one_mode(self) -> ApplyEditsInput:
        single = self.search is not None or self.replace is not None
        modes = [
            name
            for name, on in (
                ("rewrite", self.rewrite is not None),
                ("search/replace", single),
                ("edits", self.edits is not None),
            )
            if on
        ]
        if len(modes) != 1:
            raise ValueError(
                "give exactly one of `rewrite`, `search`+`replace`, or `edits`"
                + (f" (got {' and '.join(modes)})" if modes else "")
            )
        if single and (self.search is None or self.replace is None):
            raise ValueError("`search` and `replace` go together (replace may be an empty string)")
        if self.all and not single:
            raise ValueError("`all` applies to search/replace; inside `edits` give `all` per edit")
        if self.edits is not None and not self.edits:
            raise ValueError("`edits` is empty; give at least one {search, replace}")
        return self

    def edit_list(self) -> list[EditSpec]:
        if self.edits is not None:
            return self.edits
        return [EditSpec(search=self.search or "", replace=self.replace or "", all=self.all)]


def decode(raw: RawArguments) -> ApplyEditsInput:
    return decode_model(ApplyEditsInput, recover(raw))


DESCRIPTION = """\
Edit one file: search + replace, several edits in order (all or nothing), or rewrite the whole file. \
Copy the search text exactly (a clearly unique near match is tried; the replacement is re-indented). \
For several files use apply_patch."""


def build(rt: Runtime) -> Tool:
    def apply_edits(args: ApplyEditsInput) -> str:
        # a writer that lost a race recomputes the edit on the new content
        with journal.after_reply():  # the write's cleanup waits for the reply
            return retrying(lambda _attempt: _apply(rt, args))

    return create_function(
        name="apply_edits",
        description=DESCRIPTION,
        parameters=ApplyEditsInput,
        run=apply_edits,
        decode=decode,
        annotations=ToolAnnotations(title="Search/replace edits or a rewrite of one file", destructive=True),
    )


def _read_current(rt: Runtime, args: ApplyEditsInput) -> tuple[ResolvedPath, str, str | None, bytes | None]:
    """(resolved, shown name, current text or None when missing, its SHA-256).
    Only the text is kept, not the bytes too: a big file is held once."""
    ws = rt.workspace  # per call: manage_workspaces can switch it
    rp = ws.resolve(args.path, must_exist=args.rewrite is None, write=True)
    name = ws.display(rp.abs)
    if not rp.exists:
        if args.expected_hash:
            raise ToolError(ErrorCode.CONFLICT, f"{name} no longer exists; read the directory again")
        return rp, name, None, None
    fb = read_bytes(rp.abs, name, root=rp.root.path)
    data = fb.data
    del fb
    check_expected_hash(args.expected_hash, data, name)
    digest = hashlib.sha256(data).digest()
    text = decode_text(data, name)
    del data
    return rp, name, text, digest


@dataclass
class _Doc:
    """The text being edited, held in one place so the old version is freed
    the moment an edit replaces it (a big file is never held three times)."""

    body: str
    counts: list[int] = field(default_factory=lambda: [0, 0])  # +lines, -lines (large files)


def _apply(rt: Runtime, args: ApplyEditsInput) -> str:
    rp, name, old_text, digest = _read_current(rt, args)
    large = old_text is not None and len(old_text) > LARGE_CHARS
    notes: list[str] = []
    bom, eol, body = split_spelling(old_text or "")
    doc = _Doc(body)
    del body
    if large:
        old_text = None  # only the body is kept
    if args.rewrite is not None:
        if digest is None and args.on_missing != "create":
            raise ToolError(
                ErrorCode.NOT_FOUND,
                f'{name} does not exist; pass on_missing="create" to create it with this content',
            )
        content = args.rewrite.replace("\r\n", "\n")
        new_body = content.removeprefix(bom) if bom else content
        if large:
            doc.counts = [new_body.count("\n"), doc.body.count("\n")]
            notes.append(f"(whole-file line counts: no diff is computed for files over {LARGE_CHARS // 2**20} MB)")
        doc.body = new_body
        del new_body
        head = f"{'Rewrote' if digest is not None else 'Created'} {name}"
    else:
        edits = args.edit_list()
        _apply_all(doc, edits, name, notes, large, float(setting(rt, "editing.fuzzy_threshold")))
        head = f"Applied {len(edits)} edit{'s' if len(edits) != 1 else ''} to {name}"
    diff: list[str] = []
    if large:
        counts = doc.counts
        data = join_spelling(bom, eol, doc.body).encode("utf-8")
    else:
        new_text = join_spelling(bom, eol, doc.body)
        diff = _diff(old_text or "", new_text, name)
        counts = _counted(diff)
        data = new_text.encode("utf-8")
    del doc
    new_hash = hashlib.sha256(data)
    if changed := digest is None or new_hash.digest() != digest:
        batch = AtomicBatch(rt.state_dir)
        batch.write(rp.root.path, rp.rel, data, expect_digest=digest, expect_absent=digest is None)
        batch.commit()
    note = "" if changed else " (no change: the file already had this content)"
    out = [f"{head}: +{counts[0]} -{counts[1]} lines{note} [hash={new_hash.hexdigest()[:HASH_CHARS]}]"]
    out.extend(n for n in notes if n)
    verbose = args.verbose if args.verbose is not None else bool(setting(rt, "editing.verbose"))
    if verbose and diff:
        out.extend(diff[:MAX_DIFF_LINES])
        if len(diff) > MAX_DIFF_LINES:
            out.append(f"... {len(diff) - MAX_DIFF_LINES} more diff lines not shown")
    return "\n".join(out)


def _apply_all(
    doc: _Doc, edits: list[EditSpec], name: str, notes: list[str], large: bool, threshold: float
) -> None:
    """Apply ``edits`` in order to ``doc.body``. For a large file the lines
    each edit adds and removes come from a diff of its own region only."""
    for i, edit in enumerate(edits, 1):
        label = f"edit {i} of {len(edits)}: " if len(edits) > 1 else ""
        try:
            spans = find(
                doc.body,
                edit.search.replace("\r\n", "\n"),
                edit.replace.replace("\r\n", "\n"),
                all=edit.all,
                name=name,
                threshold=threshold,
            )
        except ToolError as exc:
            raise ToolError(exc.code, label + exc.message, exc.details) from exc
        if large:
            for region_old, region_new in _regions(doc.body, spans):
                plus, minus = _counted(_diff(region_old, region_new, name))
                doc.counts[0] += plus
                doc.counts[1] += minus
        if spans[0].level <= 1:  # literal matches: one allocation, no pieces
            doc.body = doc.body.replace(doc.body[spans[0].start : spans[0].end], spans[0].text, len(spans))
        else:
            doc.body = _splice(doc.body, spans)
        notes.append(_note(i, spans) if len(edits) > 1 or spans[0].level else "")


def _regions(body: str, spans: list[Span]) -> list[tuple[str, str]]:
    """Each span widened to whole lines, before and after the edit."""
    out: list[tuple[str, str]] = []
    for s in spans:
        a = body.rfind("\n", 0, s.start) + 1
        b = body.find("\n", s.end)
        b = len(body) if b < 0 else b
        out.append((body[a:b], body[a : s.start] + s.text + body[s.end : b]))
    return out


def _diff(old: str, new: str, name: str) -> list[str]:
    return list(difflib.unified_diff(old.splitlines(), new.splitlines(), f"a/{name}", f"b/{name}", n=2, lineterm=""))


def _counted(diff: list[str]) -> list[int]:
    ins = sum(1 for x in diff if x.startswith("+") and not x.startswith("+++"))
    dels = sum(1 for x in diff if x.startswith("-") and not x.startswith("---"))
    return [ins, dels]


def _splice(text: str, spans: list[Span]) -> str:
    out: list[str] = []
    pos = 0
    for s in sorted(spans, key=lambda s: s.start):
        out.append(text[pos : s.start])
        out.append(s.text)
        pos = s.end
    out.append(text[pos:])
    return "".join(out)


def _note(index: int, spans: list[Span]) -> str:
    level = spans[0].level
    where = ", ".join(
        f"line {s.first_line}" if s.first_line == s.last_line else f"lines {s.first_line}-{s.last_line}"
        for s in spans[:10]
    )
    how = LADDER[level]
    if level == 3:
        how += f" ({spans[0].similarity:.0%} similar)"
    extra = "; replacement re-indented to the matched lines" if level >= 2 else ""
    count = f" ({len(spans)} occurrences)" if len(spans) > 1 else ""
    return f"- edit {index}: {how} match at {where}{count}{extra}"
