"""Random JSON at every tool of the catalog, through the Toolbox.

The tool list comes from ``build_toolbox(rt)``, so tools other domains add
later are fuzzed too. For every call: no ``internal_error`` (a crash), a call
that fails changes nothing in the root, and nothing outside the root (a
sibling with secrets, a sibling whose name extends the root's, the parent)
is ever written or its secrets shown.
"""

from __future__ import annotations

import json
import os
import re
import tempfile
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from tests.fuzz_strategies import hostile_arguments, raw_text_arguments, shaped_arguments
from tests.support.openai_server import Reply, ScriptedOpenAI
from tooldeck.catalog import build_toolbox
from tooldeck.core.errors import ToolError
from tooldeck.runtime import Runtime

SECRET = "FUZZ-SECRET-OUTSIDE"


def _tool_names() -> list[str]:
    with tempfile.TemporaryDirectory(prefix="tdk-fuzz-names-") as d:
        root = Path(d) / "root"
        root.mkdir()
        return [t.name for t in build_toolbox(Runtime.for_dirs([root], state_dir=Path(d) / "state"))]


TOOLS = _tool_names()


def state_of(base: Path, skip: set[Path]) -> dict[str, Any]:
    out: dict[str, Any] = {}
    for dirpath, dirnames, filenames in os.walk(base):
        d = Path(dirpath)
        dirnames[:] = [n for n in dirnames if d / n not in skip]
        for name in dirnames + filenames:
            p = d / name
            if p.is_symlink():
                out[str(p.relative_to(base))] = ("link", os.readlink(p))
            elif p.is_file():
                out[str(p.relative_to(base))] = ("file", p.read_bytes(), p.stat().st_mode)
            else:
                out[str(p.relative_to(base))] = ("dir",)
    return out


def names_a_field(error: ToolError, fields: set[str]) -> bool:
    """An invalid_arguments error says which argument is wrong: in its details,
    or by naming one of the tool's fields (backticked or not; a nested field
    such as `edits[0].search` counts by its first segment)."""
    if error.details.get("fields") or error.details.get("field"):
        return True
    quoted = {re.split(r"[.\[]", q, maxsplit=1)[0] for q in re.findall(r"`([^`]+)`", error.message)}
    words = set(re.findall(r"[A-Za-z_][A-Za-z0-9_]*", error.message))
    return bool((quoted | words) & fields) or "arguments" in words


@pytest.fixture(scope="module")
def model_server() -> Iterator[ScriptedOpenAI]:
    """Model-backed tools (meta_refine, chat_send, agents...) get their random
    arguments too, and talk to this scripted server, which answers every request."""
    with ScriptedOpenAI(default=Reply.answer("a scripted answer")) as server:
        yield server


@pytest.fixture
def fuzz_env(tmp_path: Path, model_server: ScriptedOpenAI, monkeypatch: pytest.MonkeyPatch) -> tuple[Path, Path, Path]:
    monkeypatch.setenv("OPENAI_BASE_URL", model_server.url)
    base = tmp_path / "arena"
    root, outside, evil, state = base / "root", base / "outside", base / "root-evil", tmp_path / "state"
    for d in (root / "sub", outside, evil, state):
        d.mkdir(parents=True)
    (root / "a.txt").write_text("alpha\nbeta\nalpha\n")
    (root / "sub" / "b.py").write_text("def f(x):\n    return x + 1\n")
    (root / "link_out").symlink_to(outside)
    (outside / "secret.txt").write_text(SECRET + "\n")
    (evil / "secret.txt").write_text(SECRET + " evil\n")
    return base, root, state


@pytest.mark.timeout(600)
@pytest.mark.parametrize("name", TOOLS)
def test_random_arguments_never_crash_or_escape(name: str, fuzz_env: tuple[Path, Path, Path]) -> None:
    base, root, state = fuzz_env
    rt = Runtime.for_dirs([root], state_dir=state)
    box = build_toolbox(rt, timeout=20)
    tool = box.get(name)
    assert tool is not None
    outside_before = state_of(base, {root})
    fields = set(tool.parameters.get("properties", {})) if isinstance(tool.parameters, dict) else set()

    def check(args: Any, as_text: bool) -> None:
        root_before = state_of(root, set())
        if tool.kind == "custom" and isinstance(args, str):
            raw: Any = args  # a custom tool's input is the raw text itself
        else:
            raw = json.dumps(args) if as_text or not isinstance(args, dict) else args
        res = box.call_sync(name, raw)
        if res.error is not None:
            assert res.error.code != "internal_error", f"{name}({raw!r}) crashed: {res.text}"
            if tool.kind == "function" and not isinstance(args, dict):
                assert res.error.code == "invalid_arguments", res.text
            if res.error.code == "invalid_arguments" and isinstance(args, dict) and args:
                assert names_a_field(res.error, fields), f"{name}({raw!r}): which field? {res.text}"
            assert state_of(root, set()) == root_before, f"{name}({raw!r}) failed but changed the root: {res.text}"
        assert SECRET not in res.text, f"{name}({raw!r}) showed an outside secret"
        res.text.encode("utf-8")  # valid UTF-8, whatever the input

    common = {
        "deadline": None,
        "derandomize": True,
        "suppress_health_check": [HealthCheck.function_scoped_fixture, HealthCheck.too_slow],
    }

    shaped = raw_text_arguments() if tool.kind == "custom" else shaped_arguments(tool.parameters)

    @settings(max_examples=30, **common)
    @given(args=shaped, as_text=st.booleans())
    def well_shaped(args: Any, as_text: bool) -> None:
        check(args, as_text)

    @settings(max_examples=15, **common)
    @given(args=hostile_arguments(tool.parameters), as_text=st.booleans())
    def anything(args: Any, as_text: bool) -> None:
        check(args, as_text)

    well_shaped()
    anything()
    assert state_of(base, {root}) == outside_before, f"{name} changed something outside the root"
