"""JSON Schema and argument decoding for typed tool inputs (pydantic models).

The schema a model sees is the pydantic model's JSON Schema with the noise
removed (``title`` on every node costs tokens and tells the model nothing the
property name does not). Decoding turns the raw argument string (or an already
parsed mapping, as MCP delivers) into the model, and turns every validation
failure into ``invalid_arguments`` naming the field.

Decoding (:func:`decode_model`) is :func:`tooldeck.core.decode.decode_with`
over the model's ``model_validate``: the repairs of a JSON string for an array
or object and of a ``null`` for "not given" are described there.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, TypeVar, get_args

from pydantic import BaseModel, ConfigDict, ValidationError, model_validator

from tooldeck.core.decode import decode_with, describe_errors
from tooldeck.core.decode import parse_arguments as parse_arguments  # re-exported: its home before decode.py

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


def describe_validation_error(exc: ValidationError, model: type[BaseModel] | None = None) -> str:
    """One clause per problem, each naming the field, e.g.
    ``field `paths.0`: Input should be a valid string``; misspelt fields are
    reported together with the fields the tool does accept."""
    return describe_errors(exc.errors(include_url=False), list(model.model_fields) if model is not None else None)


def decode_model(model: type[M], raw: str | bytes | Mapping[str, Any] | None) -> M:
    """Raw arguments → ``model``, every failure an ``invalid_arguments``
    naming its fields (:func:`tooldeck.core.decode.decode_with`)."""
    return decode_with(model.model_validate, tuple(model.model_fields), raw)
