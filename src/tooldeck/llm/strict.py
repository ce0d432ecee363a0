"""Tool schemas in the strict subset providers accept with ``"strict": true``.

Why: a tool's ``strict`` (default true, seed 001) asks the provider to
constrain the model's arguments to the schema (OpenAI structured outputs).
The provider then accepts only a subset of JSON Schema: every object lists
all of its properties in ``required`` and sets ``additionalProperties:
false``, an optional property is expressed as nullable instead of absent, no
``default``, and a few keywords (``oneOf``, ``not``, ``if``,
``patternProperties``, open maps...) do not exist. :func:`strict_schema`
rewrites a tool's schema into that subset, or answers None when the schema
cannot be expressed there (a free-form object, an open map): the tool is
then sent with ``"strict": false``, its schema unchanged.

The decoder makes the round trip work: a ``null`` for a field whose type does
not take null means "not given" and the field takes its default
(:mod:`tooldeck.core.schema`). A property's default is kept for the model in
its description ("Default: 5.").

Why not the SDK's ``openai.lib._pydantic.to_strict_json_schema``: it is
private, takes a pydantic model (hand-written schemas and remote MCP tools
have none) and leaves an optional non-null field required-but-not-nullable,
which would force the model to invent a value where the tool has a default.
"""

from __future__ import annotations

import copy
import json
from typing import Any

# keywords a strict schema may not carry; dropping them only widens what the
# schema says, and the tool's own decoder still checks every argument
_DROPPED = frozenset({
    "default", "title", "examples", "minLength", "maxLength", "uniqueItems", "minProperties",
    "maxProperties", "contains", "minContains", "maxContains", "unevaluatedItems", "discriminator",
    "readOnly", "writeOnly", "deprecated", "$schema", "$id", "$comment",
})  # fmt: skip
# keywords that change what an instance may be in ways the subset cannot say
_IMPOSSIBLE = frozenset({
    "not", "if", "then", "else", "dependentRequired", "dependentSchemas", "patternProperties",
    "unevaluatedProperties", "propertyNames", "prefixItems",
})  # fmt: skip
_FORMATS = frozenset({"date-time", "time", "date", "duration", "email", "hostname", "ipv4", "ipv6", "uuid"})
MAX_DEPTH = 10  # providers refuse deeper nesting
MAX_PROPERTIES = 5000


class _NotStrict(ValueError):
    """The schema has no strict equivalent (the reason is for debugging)."""


def strict_schema(schema: dict[str, Any]) -> dict[str, Any] | None:
    """``schema`` rewritten for strict mode (a copy), or None when it has none."""
    if not isinstance(schema, dict) or schema.get("type") != "object" or "anyOf" in schema:
        return None
    try:
        out = _node(copy.deepcopy(schema), 0, [0])
    except (_NotStrict, RecursionError):
        return None
    return out


def _node(node: Any, depth: int, count: list[int]) -> dict[str, Any]:
    if not isinstance(node, dict):
        raise _NotStrict("a schema that is not an object")
    if depth > MAX_DEPTH:
        raise _NotStrict("nested too deeply")
    if _IMPOSSIBLE & node.keys():
        raise _NotStrict(f"keywords {sorted(_IMPOSSIBLE & node.keys())}")
    default = node.get("default")
    out = {k: v for k, v in node.items() if k not in _DROPPED}
    if default is not None:
        out["description"] = _with_default(out.get("description"), default)
    if out.get("format") is not None and out["format"] not in _FORMATS:
        out.pop("format")
    if "oneOf" in out:  # pydantic's tagged unions: any-of is what the subset has
        out["anyOf"] = out.pop("oneOf")
    all_of = out.pop("allOf", None)
    if all_of is not None:
        if len(all_of) != 1:
            raise _NotStrict("allOf with several schemas")
        merged = _node(all_of[0], depth, count)
        out = {**merged, **out}
    for key in ("$defs", "definitions"):
        if isinstance(out.get(key), dict):
            out[key] = {name: _node(sub, depth + 1, count) for name, sub in out[key].items()}
    if isinstance(out.get("anyOf"), list):
        out["anyOf"] = [_node(sub, depth + 1, count) for sub in out["anyOf"]]
    if "items" in out:
        if not isinstance(out["items"], dict):
            raise _NotStrict("tuple items")
        out["items"] = _node(out["items"], depth + 1, count)
    if not _typed(out):
        raise _NotStrict("a schema without a type (any value)")
    if _is_object(out):
        out = _object(out, depth, count)
    if "$ref" in out and len(out) > 1:  # a reference takes no sibling keywords in the subset
        if "anyOf" in out:
            raise _NotStrict("$ref beside anyOf")
        ref = out.pop("$ref")
        out["anyOf"] = [{"$ref": ref}]
    return out


def _typed(node: dict[str, Any]) -> bool:
    return any(k in node for k in ("type", "anyOf", "$ref", "enum", "const"))


def _is_object(node: dict[str, Any]) -> bool:
    t = node.get("type")
    return t == "object" or (isinstance(t, list) and "object" in t)


def _object(node: dict[str, Any], depth: int, count: list[int]) -> dict[str, Any]:
    extra = node.get("additionalProperties", False)
    if extra is not False:
        raise _NotStrict("an object that takes other properties (a map)")
    props = node.get("properties")
    if not isinstance(props, dict):
        raise _NotStrict("an object without declared properties")
    count[0] += len(props)
    if count[0] > MAX_PROPERTIES:
        raise _NotStrict("too many properties")
    required = set(node.get("required") or ())
    fixed: dict[str, Any] = {}
    for name, sub in props.items():
        converted = _node(sub, depth + 1, count)
        fixed[name] = converted if name in required else _nullable(converted)
    node["properties"] = fixed
    node["required"] = list(props)
    node["additionalProperties"] = False
    return node


def _nullable(node: dict[str, Any]) -> dict[str, Any]:
    """``node`` that also admits null (how strict mode says "optional")."""
    if _admits_null(node):
        return node
    t = node.get("type")
    if isinstance(t, str) and "$ref" not in node and "anyOf" not in node:
        out = {**node, "type": [t, "null"]}
        if isinstance(node.get("enum"), list):
            out["enum"] = [*node["enum"], None]
        return out
    if isinstance(t, list):
        out = {**node, "type": [*t, "null"]}
        if isinstance(node.get("enum"), list):
            out["enum"] = [*node["enum"], None]
        return out
    if isinstance(node.get("anyOf"), list):
        return {**node, "anyOf": [*node["anyOf"], {"type": "null"}]}
    description = node.get("description")
    inner = {k: v for k, v in node.items() if k != "description"}
    out = {"anyOf": [inner, {"type": "null"}]}
    if description is not None:
        out["description"] = description
    return out


def _admits_null(node: dict[str, Any]) -> bool:
    t = node.get("type")
    if t == "null" or (isinstance(t, list) and "null" in t):
        return True
    return any(isinstance(s, dict) and s.get("type") == "null" for s in node.get("anyOf") or ())


def _with_default(description: Any, default: Any) -> str:
    try:
        shown = json.dumps(default, ensure_ascii=False)
    except (TypeError, ValueError):
        shown = repr(default)
    note = f"Default: {shown if len(shown) <= 80 else shown[:79] + '…'}."
    return f"{description} {note}" if isinstance(description, str) and description else note


def function_schema(parameters: dict[str, Any], strict: bool) -> tuple[dict[str, Any], bool]:
    """(the schema to send, the ``strict`` flag to send) for a function tool."""
    if not strict:
        return parameters, False
    converted = strict_schema(parameters)
    return (converted, True) if converted is not None else (parameters, False)
