"""One shell request as a tool builds it: which runtime, which argvs, how the
result is shaped. A module of its own because the service runs it and the
hooks wrap it, and neither may import the other."""

from __future__ import annotations

import shlex
from dataclasses import dataclass, field

from tooldeck.shell.profiles import ShellRuntime


@dataclass(slots=True)
class ShellRequest:
    tool: str
    mode: str
    runtime: ShellRuntime
    steps: list[tuple[str | None, list[list[str]]]]  # model-level argvs, before resolution
    result: str = "combined"
    declared: bool = False  # fixed/script: the author's command
    raw_code: bool = False
    stdin: str | None = None
    cwd: str | None = None
    rationale: str | None = None
    script: tuple[str, str] | None = None  # (path, sha256) checked before the run
    extra_ro: tuple[str, ...] = field(default=())

    def command_text(self) -> str:
        parts: list[str] = []
        for op, stages in self.steps:
            if op:
                parts.append(op)
            parts.append(" | ".join(shlex.join(argv) for argv in stages))
        return " ".join(parts)
