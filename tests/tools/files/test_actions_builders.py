"""file_actions, append_to_file and find_and_replace are built one per
builder (issue 9: functions that read top to bottom, none over 80 lines)."""

from __future__ import annotations

import ast
import inspect

from tooldeck.runtime import Runtime
from tooldeck.tools.files import actions


def test_one_builder_per_tool(runtime: Runtime) -> None:
    built = {
        "file_actions": actions.build_file_actions(runtime),
        "append_to_file": actions.build_append_to_file(runtime),
        "find_and_replace": actions.build_find_and_replace(runtime),
    }
    assert {name: t.name for name, t in built.items()} == {name: name for name in built}
    assert [t.name for t in actions.build(runtime)] == list(built)


def test_no_function_of_the_module_is_over_80_lines() -> None:
    tree = ast.parse(inspect.getsource(actions))
    long = {
        n.name: n.end_lineno - n.lineno + 1
        for n in ast.walk(tree)
        if isinstance(n, ast.FunctionDef | ast.AsyncFunctionDef) and n.end_lineno - n.lineno + 1 > 80
    }
    assert long == {}
