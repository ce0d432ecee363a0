"""apply_edits (seed 004): search/replace edits or a full rewrite of one file.

Exactly one mode per call: ``rewrite`` (+ ``on_missing``), ``search`` /
``replace`` (+ ``all``), or ``edits: [{search, replace, all}]``. Edits apply
in order to the text in memory, each through the matching ladder of
:mod:`match`; the file is written once, atomically, only when every edit
found its place. CRLF files stay CRLF (matching happens on ``\\n`` text).
"""

from __future__ import annotations

import difflib
from typing import Literal

from pydantic import BaseModel, ConfigDict, Field, model_validator

from tooldeck.core import ToolError, ToolInput
from tooldeck.core.errors import ErrorCode
from tooldeck.core.schema import decode_model
from tooldeck.core.tool import RawArguments, Tool, ToolAnnotations, create_function
from tooldeck.runtime import Runtime
from tooldeck.tools.common import check_expected_hash
from tooldeck.tools.edits.match import LADDER, Span, find
from tooldeck.tools.edits.recover import recover
from tooldeck.tools.edits.textfile import TextFile
from tooldeck.workspace.atomic import AtomicBatch
from tooldeck.workspace.content import content_hash, decode_text, read_bytes

HASH_DOC = "Hash from read_file; refused with `conflict` if the file changed since."
MAX_DIFF_LINES = 200


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
    verbose: bool = Field(False, description="Add a unified diff to the result.")
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
Edit one file. Give exactly one of: search + replace (all=true for every occurrence); edits: [{search, replace, \
all}] applied in order, all or nothing; rewrite: the whole new content (on_missing="create" makes a new file). \
Copy the search text exactly; if it is not found as given, escapes, indentation and a clearly unique near match \
are tried and the replacement is re-indented. Several matches are an error listing their lines. verbose=true \
adds a diff. For several files use apply_patch."""


def build(rt: Runtime) -> Tool:
    def apply_edits(args: ApplyEditsInput) -> str:
        ws = rt.workspace  # per call: manage_workspaces can switch it
        rp = ws.resolve(args.path, must_exist=args.rewrite is None, write=True)
        name = ws.display(rp.abs)
        before: bytes | None = None
        if rp.exists:
            fb = read_bytes(rp.abs, name, root=rp.root.path)
            before = fb.data
            check_expected_hash(args.expected_hash, before, name)
        elif args.expected_hash:
            raise ToolError(ErrorCode.CONFLICT, f"{name} no longer exists; read the directory again")

        notes: list[str] = []
        if args.rewrite is not None:
            if before is None and args.on_missing != "create":
                raise ToolError(
                    ErrorCode.NOT_FOUND,
                    f'{name} does not exist; pass on_missing="create" to create it with this content',
                )
            old_text = decode_text(before, name) if before is not None else ""
            tf = TextFile.parse(old_text)
            content = args.rewrite.replace("\r\n", "\n")
            new_text = tf.render_body(content.removeprefix(tf.bom) if tf.bom else content)
            head = f"{'Rewrote' if before is not None else 'Created'} {name}"
        else:
            assert before is not None
            old_text = decode_text(before, name)
            tf = TextFile.parse(old_text)
            body = tf.body
            edits = args.edit_list()
            for i, edit in enumerate(edits, 1):
                label = f"edit {i} of {len(edits)}: " if len(edits) > 1 else ""
                try:
                    spans = find(
                        body,
                        edit.search.replace("\r\n", "\n"),
                        edit.replace.replace("\r\n", "\n"),
                        all=edit.all,
                        name=name,
                    )
                except ToolError as exc:
                    raise ToolError(exc.code, label + exc.message, exc.details) from exc
                body = _splice(body, spans)
                notes.append(_note(i, spans) if len(edits) > 1 or spans[0].level else "")
            new_text = tf.render_body(body)
            head = f"Applied {len(edits)} edit{'s' if len(edits) != 1 else ''} to {name}"

        data = new_text.encode("utf-8")
        if data != before:
            batch = AtomicBatch()
            batch.write(rp.root.path, rp.rel, data, expect=before, expect_absent=before is None)
            batch.commit()
        old_lines = old_text.splitlines()
        new_lines = new_text.splitlines()
        diff = list(difflib.unified_diff(old_lines, new_lines, f"a/{name}", f"b/{name}", n=2, lineterm=""))
        ins = sum(1 for x in diff if x.startswith("+") and not x.startswith("+++"))
        dels = sum(1 for x in diff if x.startswith("-") and not x.startswith("---"))
        unchanged = " (no change: the file already had this content)" if data == before else ""
        out = [f"{head}: +{ins} -{dels} lines{unchanged} [hash={content_hash(data)}]"]
        out.extend(n for n in notes if n)
        if args.verbose and diff:
            out.extend(diff[:MAX_DIFF_LINES])
            if len(diff) > MAX_DIFF_LINES:
                out.append(f"... {len(diff) - MAX_DIFF_LINES} more diff lines not shown")
        return "\n".join(out)

    return create_function(
        name="apply_edits",
        description=DESCRIPTION,
        parameters=ApplyEditsInput,
        run=apply_edits,
        decode=decode,
        annotations=ToolAnnotations(title="Search/replace edits or a rewrite of one file", destructive=True),
    )


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
