"""Shell test helpers: a ShellService over a temporary root and tools built from specs."""

from __future__ import annotations

import json
from dataclasses import replace
from pathlib import Path

import pytest

from tooldeck.core.toolbox import Toolbox, ToolResult
from tooldeck.shell.profiles import BUILTIN, Limits, Policy, Rule, ShellRuntime
from tooldeck.shell.service import ShellService
from tooldeck.shell.spec import ShellToolSpec
from tooldeck.shell.tool_factory import make_tool

# a skip locally, a failure under CI=true (tests/support/require.py)
needs_bwrap = pytest.mark.requires("bwrap")
needs_cgroup = pytest.mark.requires("pids-cgroup")

DENY_RM = Rule(id="no-rm", action="deny", basename="rm")


def dev_runtime(**limits: float) -> ShellRuntime:
    """Development profile, default allow, rm denied, small limits."""
    base = BUILTIN["builtin:workspace-development@1"]
    lim = Limits(wall_seconds=5.0, idle_seconds=4.0, output_bytes=4000, stdin_bytes=10_000, processes=40)
    return replace(base, id="test-dev", policy=Policy(default="allow", rules=(DENY_RM,)), limits=replace(lim, **limits))


class Shell:
    def __init__(self, root: Path, state: Path) -> None:
        self.root = root
        self.service = ShellService(lambda: [(str(root), False)], state)
        self.box = Toolbox()

    def add(self, spec: ShellToolSpec, rt: ShellRuntime) -> Shell:
        self.box.add(make_tool(spec, rt, self.service))
        return self

    def call(self, name: str, args: dict) -> ToolResult:
        return self.box.call_sync(name, json.dumps(args))

    def structured(self, name: str, args: dict) -> dict:
        res = self.call(name, args)
        assert not res.is_error, res.text
        assert res.output is not None and res.output.structured is not None
        return res.output.structured
