"""A finished run → the tool's Output (``combined``, ``stdout`` or ``structured``).

A failing command is a normal result, not a tool error: the model needs its
output to fix the cause. The footer says how it ended, and a limit says which
one and what to do about it.
"""

from __future__ import annotations

import json
from typing import Any

from tooldeck.core.output import Output
from tooldeck.shell.execute import RunResult
from tooldeck.shell.profiles import ShellRuntime
from tooldeck.shell.shaping import Redactor, render_capture

LIMIT_TEXT = {
    "wall": "killed at the wall-time limit ({wall:g}s): run a narrower command or split the work",
    "idle": "killed after {idle:g}s without output (idle limit): the command may be waiting for input",
    "output": "killed after producing over 1 GiB of output",
    "cancelled": "cancelled",
}


def _limit_note(result: RunResult, rt: ShellRuntime) -> str | None:
    if result.limit is None:
        return None
    return LIMIT_TEXT[result.limit].format(wall=rt.limits.wall_seconds, idle=rt.limits.idle_seconds)


def _footer(result: RunResult, rt: ShellRuntime) -> str:
    status = f"exit {result.exit_code}" if result.exit_code is not None else f"signal {result.signal}"
    bits = [status, f"{result.duration_ms:.0f} ms"]
    note = _limit_note(result, rt)
    if note:
        bits.append(note)
    if result.pids_limit:
        bits.append(f"process limit ({result.pids_max}) reached: forks were refused")
    if result.out.truncated or (result.err is not None and result.err.truncated):
        bits.append(f"output over {rt.limits.output_bytes} bytes: middle elided")
    return "[" + " · ".join(bits) + "]"


def structured_result(result: RunResult, redact: Redactor, rt: ShellRuntime) -> dict[str, Any]:
    return {
        "exit_code": result.exit_code,
        "signal": result.signal,
        "duration_ms": round(result.duration_ms, 1),
        "stdout": render_capture(result.out, redact),
        "stderr": render_capture(result.err, redact) if result.err is not None else "",
        "truncated": {
            "stdout": result.out.truncated,
            "stderr": bool(result.err is not None and result.err.truncated),
        },
        "bytes": {"stdout": result.out.total, "stderr": result.err.total if result.err is not None else 0},
        "limit": result.limit,
        "limit_message": _limit_note(result, rt),
        "pids_limit_reached": result.pids_limit,
        "pids_max": result.pids_max,
        "stage_exit_codes": result.stages,
    }


def render_result(result: RunResult, mode: str, redact: Redactor, rt: ShellRuntime) -> Output:
    if mode == "structured":
        data = structured_result(result, redact, rt)
        return Output.text(json.dumps(data, ensure_ascii=False, indent=1), structured=data)
    body = render_capture(result.out, redact)
    if mode == "stdout" and result.err is not None and result.exit_code != 0 and result.err.total:
        body += ("\n" if body and not body.endswith("\n") else "") + "[stderr]\n" + render_capture(result.err, redact)
    sep = "" if not body or body.endswith("\n") else "\n"
    return Output.text(f"{body}{sep}{_footer(result, rt)}")
