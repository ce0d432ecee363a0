"""manage_selection (seed 004): the files the current compose tab hands to a model.

``op``: get | add | remove | set | clear | preview | promote | demote;
``mode``: full | slices | codemap_only; ``view``: summary | files | content |
codemaps. Folders expand recursively under the ignore rules. Adding a file in
full or as slices adds, as automatic codemaps, the files it imports and the
files defining names it uses; changing codemaps by hand (codemap_only
add/remove, promote, demote) turns that off. ``preview`` is ``add`` without
saving. The rules live in :mod:`tooldeck.selection.service`.
"""

from __future__ import annotations

from typing import Literal

from pydantic import Field, field_validator, model_validator

from tooldeck.core import ToolInput, invalid_arguments, tool
from tooldeck.core.tool import Tool
from tooldeck.runtime import Runtime
from tooldeck.selection.service import Item, selection_service
from tooldeck.state.selections import LineRange
from tooldeck.state.workspaces import workspace_service
from tooldeck.tools.selection import views


class RangeInput(ToolInput):
    start_line: int = Field(ge=1, description="1-based first line.")
    end_line: int | None = Field(None, ge=1, description="Last line, inclusive (default: start_line).")
    description: str = Field("", max_length=500, description="Why these lines matter (shown above them).")

    @model_validator(mode="after")
    def _order(self) -> RangeInput:
        if self.end_line is not None and self.end_line < self.start_line:
            raise ValueError(f"end_line ({self.end_line}) is before start_line ({self.start_line})")
        return self

    def to_range(self) -> LineRange:
        return LineRange(self.start_line, self.end_line or self.start_line, self.description.strip())


class SliceInput(ToolInput):
    path: str
    ranges: list[RangeInput] = Field(min_length=1, max_length=200)


class ManageSelectionInput(ToolInput):
    op: Literal["get", "add", "remove", "set", "clear", "preview", "promote", "demote"] = "get"
    paths: list[str] = Field(default_factory=list, description="Files or folders (folders expand recursively).")
    mode: Literal["full", "slices", "codemap_only"] = Field(
        "full", description="For add/set/preview of `paths`: full content or signatures only (codemap_only)."
    )
    slices: list[SliceInput] = Field(
        default_factory=list,
        description="Line ranges to select (add/set/preview) or to cut from a slices entry (remove).",
    )
    view: Literal["summary", "files", "content", "codemaps"] = "summary"
    auto_codemaps: bool | None = Field(None, description="Turn automatic codemaps on or off with this change.")

    @field_validator("paths", "slices", mode="before")
    @classmethod
    def _lenient(cls, value: object) -> object:
        if value is None:  # null means "none given"
            return []
        return [value] if isinstance(value, (str, dict)) else value  # one path / one slice

    @model_validator(mode="after")
    def _consistent(self) -> ManageSelectionInput:
        has_paths, has_slices = bool(self.paths), bool(self.slices)
        if self.mode == "slices" and has_paths:
            raise ValueError("mode=slices selects line ranges: give them in `slices` [{path, ranges}], not `paths`")
        if self.op in ("add", "set", "preview") and not (has_paths or has_slices):
            raise ValueError(f"op={self.op} needs `paths` or `slices`")
        if self.op == "remove" and not (has_paths or has_slices):
            raise ValueError("op=remove needs `paths` (or `slices` to cut line ranges)")
        if self.op in ("promote", "demote"):
            if not has_paths:
                raise ValueError(f"op={self.op} needs `paths`")
            if has_slices:
                raise ValueError(f"op={self.op} takes `paths` only")
        if self.op in ("get", "clear") and (has_paths or has_slices):
            hint = "; to drop some files use op=remove" if self.op == "clear" else ""
            raise ValueError(f"op={self.op} takes no `paths` or `slices`{hint}")
        if self.op == "get" and self.auto_codemaps is not None:
            raise ValueError("op=get changes nothing; pass auto_codemaps with add, set, remove or clear")
        return self

    def items(self) -> list[Item]:
        mode = "codemap" if self.mode == "codemap_only" else "full"
        out = [Item(p, mode) for p in self.paths or []]
        out.extend(Item(s.path, "slices", tuple(r.to_range() for r in s.ranges)) for s in self.slices or [])
        return out


DESCRIPTION = (
    "Choose the files of the model context: the current tab's file selection. op: get | add | remove | set | "
    "clear | preview | promote (codemap → full) | demote (→ codemap). mode: full | slices (line ranges) | "
    "codemap_only. Folders expand recursively. Full files bring what they use as auto codemaps."
)


def build(rt: Runtime) -> Tool:
    def manage_selection(args: ManageSelectionInput) -> str:
        svc = selection_service(rt)
        ws = rt.workspace
        text = ""
        if args.op == "get":
            sel = svc.snapshot()
        elif args.op in ("add", "preview"):
            ch, sel = svc.add(args.items(), auto_codemaps=args.auto_codemaps, dry_run=args.op == "preview")
            text = views.change(ch, ws)
            if args.op == "preview":
                before = svc.breakdown().total
                after = svc.breakdown(sel).total
                text += f"\ntokens: {before:,} → {after:,} ({after - before:+,}); nothing was saved"
        elif args.op == "set":
            ch, sel = svc.set(args.items(), auto_codemaps=args.auto_codemaps)
            text = views.change(ch, ws)
        elif args.op == "clear":
            ch, sel = svc.clear(auto_codemaps=args.auto_codemaps)
            text = views.change(ch, ws)
        elif args.op == "remove":
            cuts = [Item(s.path, "slices", tuple(r.to_range() for r in s.ranges)) for s in args.slices or []]
            ch, sel = svc.remove(args.paths or [], cuts, auto_codemaps=args.auto_codemaps)
            text = views.change(ch, ws)
        elif args.op == "promote":
            ch, sel = svc.promote(args.paths or [], auto_codemaps=args.auto_codemaps)
            text = views.change(ch, ws)
        elif args.op == "demote":
            ch, sel = svc.demote(args.paths or [], auto_codemaps=args.auto_codemaps)
            text = views.change(ch, ws)
        else:  # pragma: no cover - the Literal rules it out
            raise invalid_arguments(f"unknown op {args.op!r}", field="op")
        cur = workspace_service(rt).current()
        if args.view in ("content", "codemaps"):
            pkg, _ = svc.package(sel, include_tree=False, include_codemaps=True)
            body = pkg.of("files", "slices") if args.view == "content" else pkg.of("codemaps")
            what = "full or slices" if args.view == "content" else "codemap"
            body = body or f"(no {what} files selected)"
        else:
            bd = svc.breakdown(sel)
            render = views.summary if args.view == "summary" else views.files
            body = render(bd, cur, sel.auto_codemaps)
        return f"{text}\n\n{body}" if text else body

    return tool(manage_selection, description=DESCRIPTION)
