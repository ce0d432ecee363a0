"""JSON Schema and argument decoding for typed tool inputs (pydantic models).

The schema a model sees is the pydantic model's JSON Schema with the noise
removed (``title`` on every node costs tokens and tells the model nothing the
property name does not). Decoding turns the raw argument string (or an already
parsed mapping, as MCP delivers) into the model, and turns every validation
failure into ``invalid_arguments`` naming the field.

Two repairs happen here, once for every tool, before a call is refused:

* an array or object sent as a JSON *string* (``"paths": "[\"a.py\"]"``)
  where the schema wants an array or object is parsed. MCP clients whose
  argument forms only take strings (the Inspector CLI's ``--tool-arg``) and
  models both do it; a field that accepts a string keeps it as sent;
* a ``null`` for a field that does not accept null means "not given": the
  field takes its default. Strict function calling (the provider request
  marks every property required and optional ones nullable, see
  :mod:`tooldeck.llm.strict`) makes models send exactly that.
"""

from __future__ import annotations

import copy
import json
import re
from collections.abc import Mapping
from typing import Any, TypeVar, get_args

from pydantic import BaseModel, ConfigDict, ValidationError, model_validator

from tooldeck.core.errors import invalid_arguments

M = TypeVar("M", bound=BaseModel)


def _takes_int_not_bool(annotation: Any) -> bool:
    """Whether a field's type admits ``int`` but not ``bool`` (``int``,
    ``int | None``, ``Annotated[int, ...]``...)."""
    if annotation is bool:
        return False
    if annotation is int:
        return True
    args = get_args(annotation)
    if not args or bool in args:
        return False
    return any(_takes_int_not_bool(a) for a in args if a is not type(None))


class ToolInput(BaseModel):
    """Base class for tool input models: unknown fields are an error, so a
    misspelt argument is reported instead of silently ignored.

    Booleans are not integers: pydantic's lax mode (and Python) would take
    ``"limit": true`` as 1, so integer fields refuse ``true``/``false``."""

    model_config = ConfigDict(extra="forbid", populate_by_name=True)

    @model_validator(mode="before")
    @classmethod
    def _no_bool_for_int(cls, data: Any) -> Any:
        if isinstance(data, Mapping):
            for name, info in cls.model_fields.items():
                for key in (name, info.alias):
                    if key and isinstance(data.get(key), bool) and _takes_int_not_bool(info.annotation):
                        raise ValueError(
                            f"field `{name}`: expects an integer, got the boolean {str(data[key]).lower()}; "
                            "send a number"
                        )
        return data


def _strip_titles(node: Any, *, in_properties: bool = False) -> Any:
    if isinstance(node, dict):
        out: dict[str, Any] = {}
        for key, value in node.items():
            if key == "title" and not in_properties and isinstance(value, str):
                continue
            out[key] = _strip_titles(value, in_properties=key in ("properties", "$defs", "definitions"))
        return out
    if isinstance(node, list):
        return [_strip_titles(v) for v in node]
    return node


def model_schema(model: type[BaseModel]) -> dict[str, Any]:
    """The JSON Schema a model advertises for ``model`` (titles removed)."""
    schema = _strip_titles(model.model_json_schema())
    schema.setdefault("type", "object")
    schema.setdefault("properties", {})
    return schema


def parse_arguments(raw: str | bytes | Mapping[str, Any] | None) -> dict[str, Any]:
    """Raw arguments → a JSON object. Empty input means ``{}``."""
    if raw is None:
        return {}
    if isinstance(raw, Mapping):
        return dict(raw)
    if isinstance(raw, bytes):
        try:
            raw = raw.decode("utf-8")
        except UnicodeDecodeError as exc:
            raise invalid_arguments("arguments are not valid UTF-8") from exc
    if not raw.strip():
        return {}
    try:
        data = json.loads(raw)
    except json.JSONDecodeError as exc:
        raise invalid_arguments(
            f"arguments are not valid JSON ({exc.msg} at line {exc.lineno} column {exc.colno}); "
            "send a single JSON object"
        ) from exc
    except RecursionError as exc:
        raise invalid_arguments("arguments are nested too deeply; send a flat JSON object") from exc
    if not isinstance(data, dict):
        raise invalid_arguments(f"arguments must be a JSON object, got {type(data).__name__}")
    return data


def describe_validation_error(exc: ValidationError, model: type[BaseModel] | None = None) -> str:
    """One clause per problem, each naming the field, e.g.
    ``field `paths.0`: Input should be a valid string``; misspelt fields are
    reported together with the fields the tool does accept."""
    lines: list[str] = []
    unknown: list[str] = []
    for err in exc.errors(include_url=False):
        loc = ".".join(str(p) for p in err.get("loc", ()) if p != "__root__")
        msg = err.get("msg", "invalid")
        if err.get("type") == "extra_forbidden":
            unknown.append(loc)
            continue
        if err.get("type") == "value_error":
            msg = msg.removeprefix("Value error, ")
        # a model-level check names its fields itself
        lines.append(f"field `{loc}`: {msg}" if loc else msg)
    if unknown:
        known = f" (accepted: {', '.join(model.model_fields)})" if model is not None else ""
        names = ", ".join(f"`{u}`" for u in unknown)
        lines.append(f"unknown field {names}; check the spelling against the tool's schema{known}")
    return "; ".join(lines[:10]) + (f"; and {len(lines) - 10} more" if len(lines) > 10 else "")


_BACKTICKED = re.compile(r"`([A-Za-z_][A-Za-z0-9_.]*)`")


_AS_LIST = frozenset({"list_type", "tuple_type", "set_type", "frozen_set_type", "iterable_type"})
_AS_OBJECT = frozenset({"dict_type", "model_type", "model_attributes_type", "dataclass_type"})
MAX_REPAIR_ROUNDS = 4  # a string holding a string holding an array... is not worth more


def _target(data: Any, loc: tuple[Any, ...]) -> tuple[Any, Any] | None:
    """(container, key) of the deepest value of ``data`` that ``loc`` names.
    Parts of ``loc`` that name no data are pydantic's union member tags
    (``("edits", "list[Edit]", 0, "all")``) and are skipped."""
    parent: Any = None
    key: Any = None
    node = data
    for part in loc:
        in_dict = isinstance(node, dict) and isinstance(part, str) and part in node
        if in_dict or (isinstance(node, list) and isinstance(part, int) and 0 <= part < len(node)):
            parent, key, node = node, part, node[part]
    return (parent, key) if parent is not None else None


def _json_container(text: str, want: type) -> Any:
    stripped = text.strip()
    if not stripped or stripped[0] not in "[{":
        return None
    try:
        value = json.loads(stripped)
    except (ValueError, RecursionError):
        return None
    return value if isinstance(value, want) else None


def _repair(data: dict[str, Any], exc: ValidationError) -> bool:
    """Apply the repairs of the module docstring to ``data`` (a private copy)
    where ``exc`` found fault; True when anything changed."""
    changed = False
    for err in exc.errors(include_url=False):
        found = _target(data, tuple(err.get("loc", ())))
        if found is None:
            continue
        parent, key = found
        value, kind = parent[key], err.get("type", "")
        if isinstance(value, str) and kind in _AS_LIST | _AS_OBJECT:
            parsed = _json_container(value, list if kind in _AS_LIST else dict)
            if parsed is not None:
                parent[key] = parsed
                changed = True
        elif value is None and kind not in ("missing", "extra_forbidden") and isinstance(parent, dict):
            del parent[key]
            changed = True
    return changed


def _validate(model: type[M], data: dict[str, Any]) -> M:
    """``model.model_validate(data)``, retried after :func:`_repair` while it helps."""
    try:
        return model.model_validate(data)
    except ValidationError as first:
        error = first
    try:
        fixed = copy.deepcopy(data)  # the caller's mapping (an MCP request's arguments) stays as sent
    except RecursionError:
        raise error from None
    for _ in range(MAX_REPAIR_ROUNDS):
        if not _repair(fixed, error):
            break
        try:
            return model.model_validate(fixed)
        except ValidationError as again:
            error = again
    raise error


def decode_model(model: type[M], raw: str | bytes | Mapping[str, Any] | None) -> M:
    data = parse_arguments(raw)
    try:
        return _validate(model, data)
    except ValidationError as exc:
        message = describe_validation_error(exc, model)
        fields = {".".join(str(p) for p in e.get("loc", ())) for e in exc.errors(include_url=False)}
        fields.discard("")
        if not fields:  # a model-level check: the fields it names
            fields = {f for f in _BACKTICKED.findall(message) if f.split(".")[0] in model.model_fields}
        raise invalid_arguments(message, fields=sorted(fields)) from exc
    except (ValueError, TypeError) as exc:  # a validator raised outside pydantic's wrapping
        raise invalid_arguments(str(exc)) from exc
