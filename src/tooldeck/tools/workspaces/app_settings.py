"""app_settings (seed 004): read and change tooldeck's own settings.

Only keys in :data:`tooldeck.settings.REGISTRY` exist here; values are checked
against their declared type and bounds. Keys that are authority (SPEC §3: the
model endpoint ``models.base_url``, the key ``models.api_key``; see each
setting's ``person_only``) are listed and read here but never set: a model
gets ``denied`` naming the person's command (``tooldeck settings set``).
Secrets are never read back: list/get show only whether they are set.
"""

from __future__ import annotations

import json
from typing import Any, Literal

from pydantic import Field, field_validator, model_validator

from tooldeck.core import Output, ToolInput, invalid_arguments, tool
from tooldeck.core.tool import Tool
from tooldeck.runtime import Runtime
from tooldeck.settings import GROUPS, REGISTRY, lookup, nearest, settings_service

Group = Literal["output", "tree", "code_maps", "context_builder", "tokens", "editing", "prompt_packaging", "models"]
NO_BACKENDS = (
    "tooldeck reaches models through OpenAI-compatible endpoints, not CLI agent backends, so `agent` filters "
    "nothing here"
)


class AppSettingsInput(ToolInput):
    op: Literal["list", "get", "set", "options"] = "list"
    group: Group | None = Field(None, description="Filter for list; selector for get.")
    key: str | None = Field(None, description="Fully-qualified key, e.g. output.budget_tokens (set, options, get).")
    keys: list[str] | None = Field(None, max_length=50, description="Batch get (not with key or group).")
    value: bool | int | float | str | None = Field(
        None, description="set: the new value (checked against the key's type); null restores the default."
    )
    limit: int = Field(60, ge=1, le=200, description="options: at most this many candidates.")
    detailed: bool = Field(False, description="options: include the setting's description.")
    agent: str | None = Field(
        None, max_length=100, description="options: RepoPrompt's CLI backend filter (accepted; tooldeck has none)."
    )

    @field_validator("group", mode="before")
    @classmethod
    def _known_group(cls, value: Any) -> Any:
        if isinstance(value, str) and value not in GROUPS:
            near = nearest(value, tuple(GROUPS))
            hint = f"; nearest: {near}" if near else ""
            raise ValueError(f"unknown group {value!r}{hint}. The groups are: {', '.join(GROUPS)}")
        return value

    @field_validator("value", mode="plain")
    @classmethod
    def _keep(cls, value: Any) -> Any:
        # no coercion: "true" stays a string, 1 stays an int; the registry validates
        if value is not None and not isinstance(value, (bool, int, float, str)):
            raise ValueError("value must be a boolean, number, string or null")
        return value

    @model_validator(mode="after")
    def _shape(self) -> AppSettingsInput:
        given = self.model_fields_set
        if self.keys is not None and (self.key is not None or self.group is not None):
            raise ValueError("`keys` is exclusive with `key` and `group`")
        if self.op == "set":
            if self.key is None:
                raise ValueError("op=set needs `key`")
            if "value" not in given:
                raise ValueError("op=set needs `value` (null restores the default)")
        elif "value" in given:
            raise ValueError("`value` is only for op=set")
        if self.op == "options" and self.key is None:
            raise ValueError("op=options needs `key`")
        if self.op == "list" and (self.key is not None or self.keys is not None):
            raise ValueError("op=list filters by `group` only; use op=get for keys")
        return self


def _line(d: dict[str, Any]) -> str:
    shown = ("<secret: set>" if d["is_set"] else "<secret: not set>") if "is_set" in d else json.dumps(d["value"])
    bits = [d["type"]]
    if "choices" in d:
        bits.append("|".join(d["choices"]))
    if "range" in d:
        lo, hi = d["range"]
        bits.append(f"{lo:g}..{hi:g}")
    if d["source"] != "default":
        bits.append(f"from {d['source']}")
    if "applies" in d:
        bits.append(f"applies at {d['applies']}")
    if "person_only" in d:
        bits.append("person-only: `tooldeck settings set`")
    desc = f" — {d['description']}" if "description" in d else ""
    return f"  {d['key']} = {shown}  ({', '.join(bits)}){desc}"


def listing_text(rows: list[dict[str, Any]]) -> str:
    """Rows of :meth:`Settings.describe` as lines under their group headers
    (also the person's ``tooldeck settings list``)."""
    lines: list[str] = []
    group = None
    for d in rows:
        g = d["key"].split(".", 1)[0]
        if g != group:
            group = g
            lines.append(f"[{g}] {GROUPS.get(g, '')}".rstrip())
        lines.append(_line(d))
    return "\n".join(lines) or "(no settings)"


def build(rt: Runtime) -> Tool:
    def listing(keys: list[str]) -> Output:
        svc = settings_service(rt)
        rows = [svc.describe(k) for k in keys]
        return Output.text(listing_text(rows), {"settings": rows})

    def app_settings(args: AppSettingsInput) -> Output:
        svc = settings_service(rt)
        if args.op == "list" or (args.op == "get" and args.key is None and args.keys is None):
            keys = [k for k, s in REGISTRY.items() if args.group is None or s.group == args.group]
            return listing(sorted(keys, key=lambda k: (list(GROUPS).index(REGISTRY[k].group), k)))
        if args.op == "get":
            keys = args.keys if args.keys is not None else [args.key or ""]
            for k in keys:
                lookup(k)  # not_found naming the close keys
            if args.group is not None and args.key is not None and REGISTRY[args.key].group != args.group:
                raise invalid_arguments(f"{args.key} is not in group {args.group}", field="group")
            return listing(keys)
        key = args.key or ""
        spec = lookup(key)
        if args.op == "set":
            svc.set(key, args.value, by="tool")  # a person-only key: denied, naming the person's command
            d = svc.describe(key, detailed=False)
            note = ""
            if d["source"] == "env":
                note = f" (note: environment variable {spec.env} is set and takes precedence)"
            elif d["source"] == "config":
                note = " (note: a config file sets it and takes precedence over the stored value)"
            elif spec.applies != "now":
                note = f" (takes effect at the {spec.applies})"
            shown = "(hidden)" if spec.secret else json.dumps(d["value"])
            what = "restored to its default" if args.value is None else "set"
            return Output.text(f"{key} {what}: {shown}{note}")
        # options
        if spec.type == "enum":
            candidates: list[Any] = list(spec.choices)
        elif spec.type == "bool":
            candidates = [True, False]
        else:
            candidates = []
        lines = [f"{key}: {spec.type}" + (f" — {spec.description}" if args.detailed else "")]
        if candidates:
            lines.extend(f"  {json.dumps(c)}" for c in candidates[: args.limit])
        elif spec.type in ("int", "float"):
            lines.append(f"  any number from {spec.minimum:g} to {spec.maximum:g}")
        else:
            lines.append(
                "  free text" + (" (write-only secret)" if spec.secret else "") + (", or null" if spec.nullable else "")
            )
        if spec.person_only:
            lines.append(f"  set by the person only ({spec.person_only}): `tooldeck settings set {key} ...`")
        if args.agent is not None:
            lines.append(f"  ({NO_BACKENDS})")
        return Output.text("\n".join(lines), {"key": key, "candidates": candidates[: args.limit]})

    return tool(
        app_settings,
        description="Read and change tooldeck's own configuration settings (an allowlist; the model endpoint "
        "and key are the person's). op: list | get | set (null restores the default) | options.",
    )
