"""core/decode.py builds validators without pydantic, and without the
``pydantic_core`` package's ``__init__`` where nothing imported it yet; what
imports them afterwards (pydantic, the SDK) finds the same compiled module."""

from __future__ import annotations

import subprocess
import sys
import textwrap

import pytest

from tooldeck.core import ToolError
from tooldeck.core.decode import decode_with, schema_validator

INT = {"type": "model-fields", "fields": {"n": {"type": "model-field", "schema": {"type": "int", "ge": 0}}}}


def run(code: str) -> str:
    return subprocess.run(
        [sys.executable, "-c", textwrap.dedent(code)], capture_output=True, text=True, check=True
    ).stdout.strip()


def test_a_hand_built_validator_decodes_and_names_the_field() -> None:
    validator = schema_validator(INT, {"extra_fields_behavior": "forbid"})

    def validate(data: dict) -> int:
        return validator.validate_python(data)[0]["n"]

    assert decode_with(validate, ("n",), '{"n": "3"}') == 3
    with pytest.raises(ToolError) as err:
        decode_with(validate, ("n",), {"n": -1, "m": 2})
    assert err.value.message == (
        "field `n`: Input should be greater than or equal to 0; "
        "unknown field `m`; check the spelling against the tool's schema (accepted: n)"
    )
    assert err.value.details == {"fields": ["m", "n"]}


def test_the_light_load_leaves_one_pydantic_core_for_pydantic_and_the_sdk() -> None:
    out = run(
        f"""
        import sys
        from tooldeck.core.decode import schema_validator, validation_error
        v = schema_validator({INT!r})
        try:
            v.validate_python({{"n": -1}})
        except validation_error() as exc:
            err = exc
        print(sorted(m for m in sys.modules if m.startswith("pydantic")))
        import pydantic, pydantic_core
        import pydantic_core._pydantic_core as compiled
        from pydantic_core._pydantic_core import _schema_gather
        class M(pydantic.BaseModel):
            n: int
        print(M(n="4").n, isinstance(err, pydantic.ValidationError), compiled.SchemaValidator is type(v))
        import mcp.server.lowlevel
        print(pydantic.version.version_info().count("pydantic-core version"))
        """
    )
    assert out.splitlines() == ["['pydantic_core._pydantic_core']", "4 True True", "1"]


def test_threads_loading_it_and_importing_pydantic_at_once_all_succeed() -> None:
    out = run(
        f"""
        import threading
        from tooldeck.core.decode import schema_validator
        errors, got = [], []
        def light():
            try:
                got.append(type(schema_validator({INT!r})))
            except BaseException as exc:
                errors.append(exc)
        def heavy():
            try:
                import pydantic
                got.append(pydantic.ValidationError)
            except BaseException as exc:
                errors.append(exc)
        threads = [threading.Thread(target=f) for f in (light, heavy, light, heavy)]
        for t in threads:
            t.start()
        for t in threads:
            t.join()
        import pydantic_core
        print(errors, all(g in (pydantic_core.SchemaValidator, pydantic_core.ValidationError) for g in got), len(got))
        """
    )
    assert out == "[] True 4"
