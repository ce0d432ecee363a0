"""The package ``tooldeck.core`` loads its public names on first use."""

from __future__ import annotations

import importlib
import subprocess
import sys

import tooldeck.core as core


def test_every_public_name_is_the_defining_modules_object() -> None:
    for name in core.__all__:
        home = importlib.import_module(f"tooldeck.core.{core._HOMES[name]}")
        assert getattr(core, name) is getattr(home, name), name
    assert set(core._HOMES) == set(core.__all__)
    assert set(core.__all__) <= set(dir(core))


def test_unknown_name_is_an_attribute_error() -> None:
    try:
        core.NoSuchName  # noqa: B018
    except AttributeError as exc:
        assert "NoSuchName" in str(exc)
    else:
        raise AssertionError("an unknown name resolved")


def test_importing_the_package_or_a_light_module_loads_no_pydantic() -> None:
    code = "import sys, tooldeck.core, tooldeck.core.workers; print('pydantic' in sys.modules)"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "False"
    # the tool model and a hand-built tool need no pydantic either (read_file is one: tools/files/read_args.py)
    code = (
        "import sys; from tooldeck.core import Toolbox, create_function, parse_arguments\n"
        "schema = {'type': 'object'}\n"
        "t = create_function(name='echo', description='', parameters=schema, run=str, decode=parse_arguments)\n"
        "print('pydantic' in sys.modules, Toolbox([t]).call_sync('echo', '{}').text)"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "False {}"
    # a tool built from a typed function loads it then
    code = (
        "import sys; from tooldeck.core import tool\n"
        "before = 'pydantic' in sys.modules\n"
        "@tool\n"
        "def echo(text: str) -> str:\n"
        "    return text\n"
        "print(before, 'pydantic' in sys.modules)"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "False True"


def test_the_decorator_tool_is_not_hidden_by_its_module() -> None:
    code = "import tooldeck.core.tool, tooldeck.core as c; print(callable(c.tool), type(c.tool).__name__)"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "True function"
