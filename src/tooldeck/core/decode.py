"""Argument decoding without pydantic: raw arguments → a JSON object, then a
validator's verdict → the typed input or ``invalid_arguments`` naming the field.

:func:`decode_with` is the whole decoding path of :func:`tooldeck.core.schema.decode_model`
(the repairs, the messages, the fields named), for any validator that raises
``pydantic_core.ValidationError``: a pydantic model's ``model_validate`` or a
``pydantic_core.SchemaValidator`` built from a core schema by hand. The
second (:func:`schema_validator`) lets a tool decode its arguments without
importing pydantic (its import and first model cost ~70 ms of a server's
start; ``pydantic_core`` ~17, its compiled module alone ~3): ``read_file``
does, so the first call a client sends right after the handshake is answered
sooner (docs/mcp.md). This module imports neither at its top.

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
import importlib.machinery
import importlib.util
import json
import os
import re
import sys
from collections.abc import Callable, Iterable, Mapping
from typing import Any, TypeVar

from tooldeck.core.errors import invalid_arguments

T = TypeVar("T")

_BACKTICKED = re.compile(r"`([A-Za-z_][A-Za-z0-9_.]*)`")
_AS_LIST = frozenset({"list_type", "tuple_type", "set_type", "frozen_set_type", "iterable_type"})
_AS_OBJECT = frozenset({"dict_type", "model_type", "model_attributes_type", "dataclass_type"})
MAX_REPAIR_ROUNDS = 4  # a string holding a string holding an array... is not worth more


def schema_validator(schema: dict[str, Any], config: dict[str, Any] | None = None) -> Any:
    """A ``pydantic_core.SchemaValidator`` of a core schema written by hand.

    Where ``pydantic_core`` is not imported yet, only its compiled module is
    loaded (:func:`_compiled`, ~3 ms): the package's ``__init__`` also
    imports ``core_schema``, a module of TypedDicts for type checkers that
    costs ~12 ms more, of a server's start; see the module docstring. The
    package imported later (by pydantic) finds the same compiled module, so
    there is one ``ValidationError`` class."""
    main = sys.modules.get("pydantic_core")
    if main is not None and hasattr(main, "SchemaValidator"):
        return main.SchemaValidator(schema, config)
    try:
        compiled = _compiled()
    except Exception:  # an unusual install: the package's own import
        import pydantic_core as compiled  # lazy: the rare path of a failed light load

    return compiled.SchemaValidator(schema, config)


_COMPILED = "pydantic_core._pydantic_core"


def validation_error() -> type[Exception]:
    """``pydantic_core.ValidationError`` (pydantic's too), loaded as
    :func:`schema_validator` loads the validator."""
    main = sys.modules.get("pydantic_core")
    if main is not None and hasattr(main, "ValidationError"):
        return main.ValidationError  # type: ignore[no-any-return]
    try:
        return _compiled().ValidationError  # type: ignore[no-any-return]
    except Exception:  # an unusual install: the package's own import
        import pydantic_core  # lazy: the rare path of a failed light load

        return pydantic_core.ValidationError


def _compiled() -> Any:
    """``pydantic_core._pydantic_core``, loaded without its package's
    ``__init__``, under the lock the importer takes for that name (a thread
    importing pydantic meanwhile waits for it, then finds it in
    ``sys.modules``; one that got there first is found here)."""
    from importlib import _bootstrap  # lazy: the importer's module lock, on this path only

    with _bootstrap._ModuleLockManager(_COMPILED):  # type: ignore[attr-defined]
        module = sys.modules.get(_COMPILED)
        if module is not None:
            return module
        package = importlib.util.find_spec("pydantic_core")  # finds, does not import
        folders = package.submodule_search_locations if package is not None else None
        for folder in folders or ():
            for suffix in importlib.machinery.EXTENSION_SUFFIXES:
                path = os.path.join(folder, "_pydantic_core" + suffix)
                if os.path.isfile(path):
                    loader = importlib.machinery.ExtensionFileLoader(_COMPILED, path)
                    spec = importlib.util.spec_from_file_location(_COMPILED, path, loader=loader)
                    assert spec is not None
                    module = importlib.util.module_from_spec(spec)
                    sys.modules[_COMPILED] = module
                    loader.exec_module(module)
                    return module
        raise ImportError(f"no compiled {_COMPILED} found")


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


def describe_errors(errors: list[Any], accepted: Iterable[str] | None = None) -> str:
    """One clause per problem (``ValidationError.errors(include_url=False)``),
    each naming the field, e.g. ``field `paths.0`: Input should be a valid
    string``; misspelt fields are reported together with the fields the tool
    does accept (``accepted``)."""
    lines: list[str] = []
    unknown: list[str] = []
    for err in errors:
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
        known = f" (accepted: {', '.join(accepted)})" if accepted is not None else ""
        names = ", ".join(f"`{u}`" for u in unknown)
        lines.append(f"unknown field {names}; check the spelling against the tool's schema{known}")
    return "; ".join(lines[:10]) + (f"; and {len(lines) - 10} more" if len(lines) > 10 else "")


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


def repair(data: dict[str, Any], errors: list[Any]) -> bool:
    """Apply the repairs of the module docstring to ``data`` (a private copy)
    where ``errors`` found fault; True when anything changed."""
    changed = False
    for err in errors:
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


def validate_repaired(validate: Callable[[dict[str, Any]], T], data: dict[str, Any]) -> T:
    """``validate(data)``, retried after :func:`repair` while it helps."""
    ValidationError = validation_error()

    try:
        return validate(data)
    except ValidationError as first:
        error = first
    try:
        fixed = copy.deepcopy(data)  # the caller's mapping (an MCP request's arguments) stays as sent
    except RecursionError:
        raise error from None
    for _ in range(MAX_REPAIR_ROUNDS):
        if not repair(fixed, error.errors(include_url=False)):
            break
        try:
            return validate(fixed)
        except ValidationError as again:
            error = again
    raise error


def decode_with(
    validate: Callable[[dict[str, Any]], T], accepted: tuple[str, ...], raw: str | bytes | Mapping[str, Any] | None
) -> T:
    """Raw arguments → ``validate``'s result (which raises
    ``pydantic_core.ValidationError`` for bad input; ``accepted``: the field
    names, in order), every failure an ``invalid_arguments`` naming its fields."""
    ValidationError = validation_error()

    data = parse_arguments(raw)
    try:
        return validate_repaired(validate, data)
    except ValidationError as exc:
        errors = exc.errors(include_url=False)
        message = describe_errors(errors, accepted)
        fields = {".".join(str(p) for p in e.get("loc", ())) for e in errors}
        fields.discard("")
        if not fields:  # a model-level check: the fields it names
            fields = {f for f in _BACKTICKED.findall(message) if f.split(".")[0] in accepted}
        raise invalid_arguments(message, fields=sorted(fields)) from exc
    except (ValueError, TypeError) as exc:  # a validator raised outside pydantic's wrapping
        raise invalid_arguments(str(exc)) from exc
