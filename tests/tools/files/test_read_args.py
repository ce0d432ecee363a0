"""read_file decodes its arguments without pydantic (read_args.py): the same
schema and the same verdict, input for input, as the pydantic model it
replaced, kept here as the reference."""

from __future__ import annotations

import json
import subprocess
import sys

from hypothesis import given, settings
from hypothesis import strategies as st
from pydantic import Field, model_validator

from tooldeck.core import ToolError, ToolInput, decode_model, model_schema
from tooldeck.tools.files import read_args


class ReadFileInput(ToolInput):  # read_window.py's model before read_args.py, verbatim
    file: str | None = Field(None, description="File path, relative to a root or absolute. `path` is an alias.")
    path: str | None = Field(None, description="Alias of `file`.")
    root: str | None = Field(None, description="Root id; `file` must then be relative to that root.")
    offset: int | None = Field(None, ge=0, description="0-based first line to read.")
    line_count: int | None = Field(None, ge=0, description="Maximum number of lines to read.")
    start_line: int | None = Field(
        None, description="1-based first line; a negative value -N reads the last N lines (like tail -n)."
    )
    limit: int | None = Field(None, ge=0, description="Maximum number of lines (same as line_count).")

    @model_validator(mode="after")
    def _one_dialect(self) -> ReadFileInput:
        if (self.file is None) == (self.path is None):
            if self.file is None:
                raise ValueError("field `file` (or `path`) is required")
            if self.file != self.path:
                raise ValueError("give the file once: `file` or `path`, not both")
        if self.offset is not None and self.start_line is not None:
            raise ValueError("use either `offset` (0-based) or `start_line` (1-based), not both")
        if self.start_line == 0:
            raise ValueError("field `start_line` is 1-based: use 1 for the first line or -N for the last N")
        if self.line_count is not None and self.limit is not None and self.line_count != self.limit:
            raise ValueError("use either `line_count` or `limit`, not both")
        return self


def verdict(decode, raw):  # type: ignore[no-untyped-def]
    """What a decoder makes of ``raw``: the fields, or the whole error."""
    try:
        got = decode(raw)
    except ToolError as exc:
        return ("error", exc.code, exc.message, exc.details)
    if isinstance(got, read_args.ReadArgs):
        return ("ok", got.fields(), got.target)
    return ("ok", got.model_dump(), got.file if got.file is not None else got.path)


DECODE = read_args.decoder()


def both(raw):  # type: ignore[no-untyped-def]
    return verdict(DECODE, raw), verdict(lambda r: decode_model(ReadFileInput, r), raw)


def test_the_schema_is_the_models() -> None:
    assert read_args.parameters() == model_schema(ReadFileInput)
    assert json.dumps(read_args.parameters()) == json.dumps(model_schema(ReadFileInput))  # key order too


BAD_AND_GOOD: list[object] = [
    None,
    "",
    "  ",
    "{",
    "[1, 2]",
    '"a.txt"',
    b"\xff",
    {},
    {"path": "a.txt"},
    {"file": "a.txt", "path": "a.txt"},
    {"file": "a.txt", "path": "b.txt"},
    {"pth": "a.txt"},
    {"path": "a.txt", "lines": 3, "colour": 1},
    {"path": "a.txt", "offset": -1},
    {"path": "a.txt", "offset": "3"},
    {"path": "a.txt", "offset": "three"},
    {"path": "a.txt", "offset": 2.0},
    {"path": "a.txt", "offset": 2.5},
    {"path": "a.txt", "offset": True},
    {"path": "a.txt", "limit": False},
    {"path": "a.txt", "start_line": True},
    {"path": "a.txt", "start_line": 0},
    {"path": "a.txt", "start_line": -5},
    {"path": "a.txt", "offset": 1, "start_line": 2},
    {"path": "a.txt", "line_count": 3, "limit": 4},
    {"path": "a.txt", "line_count": 3, "limit": 3},
    {"path": "a.txt", "line_count": 0, "limit": 0},
    {"path": "a.txt", "line_count": -3, "limit": "x"},
    {"path": 7},
    {"path": ["a.txt"]},
    {"path": '["a.txt"]'},
    {"path": None, "file": "a.txt", "offset": None},
    {"path": "a.txt", "root": 3},
    {"path": "a.txt", "root": "r1", "offset": 10**30},
    '{"path": "a.txt", "offset": 0, "line_count": 5}',
    b'{"file": "a.txt"}',
]


def test_each_input_gets_the_models_verdict() -> None:
    for raw in BAD_AND_GOOD:
        mine, model = both(raw)
        assert mine == model, raw


VALUES = st.one_of(
    st.none(),
    st.booleans(),
    st.integers(min_value=-3, max_value=3),
    st.floats(allow_nan=False, allow_infinity=False, width=16),
    st.sampled_from(["", "a.txt", "3", "-1", "x", "[1]", "{}", " 2 "]),
    st.lists(st.integers(0, 2), max_size=2),
)
KEYS = st.sampled_from([*read_args.NAMES, "lines", "Path"])


@settings(max_examples=400, deadline=None)
@given(st.dictionaries(KEYS, VALUES, max_size=5))
def test_any_arguments_get_the_models_verdict(raw: dict[str, object]) -> None:
    mine, model = both(raw)
    assert mine == model


def test_read_file_builds_and_decodes_without_pydantic() -> None:
    code = (
        "import sys\n"
        "from tooldeck.tools.files import read\n"
        "from tooldeck.tools.files.read_args import decoder\n"
        "from tooldeck.core.toolbox import Toolbox\n"
        "decoder()({'path': 'a.txt', 'offset': 1})\n"
        "print(sorted(m for m in sys.modules if m.split('.')[0] == 'pydantic'))\n"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    assert out.strip() == "[]"
