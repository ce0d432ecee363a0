"""read_file's arguments: its JSON Schema and its decoder, without pydantic.

``read_file`` is the call a client sends first, often right after the
handshake, while the server is still starting; pydantic's import and its
first model are ~70 ms of that start (docs/mcp.md), so this tool does not
use them. Its one table, :data:`FIELDS`, gives both

* the JSON Schema the model sees (:func:`parameters`): exactly what pydantic
  generated for the model this replaced (``ReadFileInput``, a ``ToolInput``);
* a ``pydantic_core.SchemaValidator`` (:func:`decoder`) of the core schema
  pydantic built for it, the same validation code: field errors, their
  messages and the lax conversions are pydantic's own; the two model-level
  checks (no boolean for an integer, one dialect) run as the model's
  validators did, with the same messages. The whole path around it (the
  repairs, the error text, the fields named) is the core's
  (:func:`tooldeck.core.decode.decode_with`).

``tests/tools/files/test_read_args.py`` keeps the pydantic model as the
reference: the same schema, and the same result or error for each input.
"""

from __future__ import annotations

import functools
from collections.abc import Callable, Mapping
from typing import Any

from tooldeck.core.decode import decode_with, schema_validator

# (name, JSON type, minimum or None, description), in the schema's order
FIELDS: tuple[tuple[str, str, int | None, str], ...] = (
    ("file", "string", None, "File path, relative to a root or absolute. `path` is an alias."),
    ("path", "string", None, "Alias of `file`."),
    ("root", "string", None, "Root id; `file` must then be relative to that root."),
    ("offset", "integer", 0, "0-based first line to read."),
    ("line_count", "integer", 0, "Maximum number of lines to read."),
    ("start_line", "integer", None, "1-based first line; a negative value -N reads the last N lines (like tail -n)."),
    ("limit", "integer", 0, "Maximum number of lines (same as line_count)."),
)
NAMES: tuple[str, ...] = tuple(f[0] for f in FIELDS)
_INTEGERS = tuple(f[0] for f in FIELDS if f[1] == "integer")


class ReadArgs:
    """read_file's decoded arguments (every field optional, None when not given)."""

    __slots__ = NAMES
    file: str | None
    path: str | None
    root: str | None
    offset: int | None
    line_count: int | None
    start_line: int | None
    limit: int | None

    def __init__(self, **values: Any) -> None:
        for name in NAMES:
            setattr(self, name, values.pop(name, None))
        if values:
            raise TypeError(f"unknown read_file argument {next(iter(values))!r}")

    @property
    def target(self) -> str:
        return self.file if self.file is not None else self.path  # type: ignore[return-value]

    def fields(self) -> dict[str, Any]:
        return {name: getattr(self, name) for name in NAMES}

    def __eq__(self, other: object) -> bool:
        return isinstance(other, ReadArgs) and self.fields() == other.fields()

    __hash__ = None  # type: ignore[assignment]

    def __repr__(self) -> str:
        given = ", ".join(f"{k}={v!r}" for k, v in self.fields().items() if v is not None)
        return f"ReadArgs({given})"


def parameters() -> dict[str, Any]:
    """The JSON Schema (a fresh copy: the tool sets the ``root`` enum in it)."""
    props: dict[str, Any] = {}
    for name, kind, minimum, description in FIELDS:
        member: dict[str, Any] = {"type": kind} if minimum is None else {"minimum": minimum, "type": kind}
        props[name] = {"anyOf": [member, {"type": "null"}], "default": None, "description": description}
    return {"additionalProperties": False, "properties": props, "type": "object"}


def _no_bool_for_int(data: Any) -> Any:
    """Booleans are not integers (pydantic's lax mode takes ``true`` as 1)."""
    if isinstance(data, Mapping):
        for name in _INTEGERS:
            if isinstance(data.get(name), bool):
                raise ValueError(
                    f"field `{name}`: expects an integer, got the boolean {str(data[name]).lower()}; send a number"
                )
    return data


def _one_dialect(validated: Any) -> Any:
    """The checks across fields: one file, one way of saying where to start."""
    args = validated[0]  # model-fields: (fields, extra, fields set)
    file, path = args["file"], args["path"]
    if (file is None) == (path is None):
        if file is None:
            raise ValueError("field `file` (or `path`) is required")
        if file != path:
            raise ValueError("give the file once: `file` or `path`, not both")
    if args["offset"] is not None and args["start_line"] is not None:
        raise ValueError("use either `offset` (0-based) or `start_line` (1-based), not both")
    if args["start_line"] == 0:
        raise ValueError("field `start_line` is 1-based: use 1 for the first line or -N for the last N")
    if args["line_count"] is not None and args["limit"] is not None and args["line_count"] != args["limit"]:
        raise ValueError("use either `line_count` or `limit`, not both")
    return validated


def core_schema() -> dict[str, Any]:
    """The core schema pydantic built for the model (its class and JSON Schema
    hooks left out): the fields, the check before them, the checks after."""
    fields: dict[str, Any] = {}
    for name, kind, minimum, _description in FIELDS:
        inner: dict[str, Any] = {"type": "str"} if kind == "string" else {"type": "int"}
        if minimum is not None:
            inner["ge"] = minimum
        fields[name] = {
            "type": "model-field",
            "schema": {"type": "default", "default": None, "schema": {"type": "nullable", "schema": inner}},
        }
    model_fields = {"type": "model-fields", "fields": fields, "model_name": "ReadFileInput", "computed_fields": []}
    before = {"type": "function-before", "function": {"type": "no-info", "function": _no_bool_for_int}}
    after = {"type": "function-after", "function": {"type": "no-info", "function": _one_dialect}}
    return {**after, "schema": {**before, "schema": model_fields}}


CONFIG = {  # the model's core config
    "extra_fields_behavior": "forbid",
    "title": "ReadFileInput",
    "validate_by_alias": True,
    "validate_by_name": True,
}


def decoder() -> Callable[[Any], ReadArgs]:
    """Raw arguments → :class:`ReadArgs`, or ``invalid_arguments`` as the
    model's decoder said it (:func:`tooldeck.core.decode.decode_with`). The
    validator is built here, with the tool (the load of ``pydantic_core``'s
    compiled module, where nothing loaded it yet: during a server's start
    the tool is built before the start-up thread goes on)."""
    validator = schema_validator(core_schema(), CONFIG)

    def validate(data: dict[str, Any]) -> ReadArgs:
        return ReadArgs(**validator.validate_python(data)[0])

    return functools.partial(decode_with, validate, NAMES)
