"""Input schemas as a client hands them to the model: lean, the same contract.

pydantic writes an optional field as ``anyOf: [X, {"type": "null"}]`` with
``default: null``; every client sends that to the model with every request.
Optional is already said by the field not being ``required``, and the
decoder accepts a null as before, so the wire form is ``X`` alone (with the
field's description and a non-null default). A ``$ref`` branch is kept inside
``anyOf`` (a sibling of ``$ref`` is ignored by older JSON Schema drafts).

Two more words every client repeats to the model and no model needs:
``additionalProperties: false`` (the decoder refuses an unknown field with an
``invalid_arguments`` error naming it either way) and a boolean's
``default: false`` (an absent flag is off).
"""

from __future__ import annotations

from typing import Any

NULL = {"type": "null"}


def compact_schema(schema: Any) -> Any:
    """``schema`` with nullable-optional fields written as their non-null type."""
    if isinstance(schema, list):
        return [compact_schema(s) for s in schema]
    if not isinstance(schema, dict):
        return schema
    out = {k: compact_schema(v) for k, v in schema.items() if not (k == "additionalProperties" and v is False)}
    if out.get("type") == "boolean" and out.get("default") is False:
        del out["default"]
    any_of = out.get("anyOf")
    if isinstance(any_of, list) and NULL in any_of and "default" in out and out["default"] is None:
        rest = [a for a in any_of if a != NULL]
        del out["default"]
        if len(rest) == 1 and isinstance(rest[0], dict) and "$ref" not in rest[0]:
            del out["anyOf"]
            out = {**rest[0], **out}
    return out
