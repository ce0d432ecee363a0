"""Runtime hooks: programs a runtime runs around every command it allows.

Why hooks exist (seed 000 lists them among what a runtime controls): a team
wants a guard that policy rules cannot express (a script that reads the
command and refuses ``git push`` to a protected branch, or anything touching
``migrations/``), or a follow-up after each command (a formatter, a note, a
log line of its own). Hooks are declared by the runtime's author, so the
policy does not judge them; they still run **inside the same sandbox, with
the same environment allowlist and limits** as the command (wall time capped
at :data:`HOOK_WALL_SECONDS`), so a project's hook gets no more authority
than the project's commands.

Protocol: the hook gets one JSON object on stdin and ``TOOLDECK_HOOK_EVENT``
in its environment.

* ``before`` — ``{event, tool, runtime, mode, command, argv, cwd, rationale}``
  after the policy and any approval, before the command runs. Exit 0 lets it
  run; any other exit (or a hook that hits a limit) refuses it with
  ``denied`` and the hook's output as the reason the model reads.
* ``after`` — the same plus ``exit_code, signal, limit, duration_ms, output``
  (the command's rendered, redacted output, at most 64 KB). Its output is
  appended to the result as ``[hook ID] ...``; a failing after-hook is
  reported there and never changes the command's result.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Sequence
from dataclasses import dataclass, replace
from typing import Any

from tooldeck.core.errors import ErrorCode, ToolError
from tooldeck.core.invocation import Invocation
from tooldeck.core.output import Output
from tooldeck.shell.execute import RunResult, RunSpec, run_async
from tooldeck.shell.policy import resolve
from tooldeck.shell.profiles import Hook
from tooldeck.shell.request import ShellRequest
from tooldeck.shell.shaping import Redactor, render_capture

HOOK_WALL_SECONDS = 30.0
OUTPUT_TO_HOOK = 65_536  # characters of the command's output an after-hook receives
REASON_CHARS = 2_000  # characters of a refusing hook's output shown to the model

Wrap = Callable[["ShellRequest", list, str, list[str], list[str], dict], RunSpec]


@dataclass(slots=True)
class HookRun:
    """Everything one request's hooks share with its command."""

    req: ShellRequest
    inv: Invocation
    wrap: Wrap
    audit: Callable[..., None]
    cwd: str
    read: list[str]
    write: list[str]
    env: dict[str, str]
    visible: Sequence[str]
    redact: Redactor
    argv: list[list[str]]

    def _hooks(self, event: str) -> list[Hook]:
        return [h for h in self.req.runtime.hooks if h.event == event]

    def _payload(self, event: str, **extra: Any) -> bytes:
        req = self.req
        data = {"event": event, "tool": req.tool, "runtime": req.runtime.id, "mode": req.mode,
                "command": req.command_text(), "argv": self.argv, "cwd": self.cwd,
                "rationale": req.rationale, **extra}  # fmt: skip
        return json.dumps(data, ensure_ascii=False).encode("utf-8")

    def _program(self, hook: Hook) -> str:
        rt = self.req.runtime
        _found, real = resolve(hook.argv[0], rt.environment.path, self.cwd)
        sandboxed = rt.sandbox.mode == "required"
        if real is None or (sandboxed and not any(_inside(real, v) for v in self.visible)):
            raise ToolError(
                ErrorCode.NOT_FOUND,
                f"hook {hook.label!r} of runtime {rt.id}: program {hook.argv[0]!r} is not found on the runtime "
                f"PATH or relative to {self.cwd}, or the sandbox does not show it; the runtime's hooks need "
                "fixing (tell the user), nothing ran",
            )
        return real

    async def _run(self, hook: Hook, event: str, payload: bytes) -> tuple[RunResult, str]:
        program = self._program(hook)
        steps = [(None, [[program, *hook.argv[1:]]])]
        env = {**self.env, "TOOLDECK_HOOK_EVENT": event}
        spec = self.wrap(self.req, steps, self.cwd, self.read, self.write, env)
        spec = replace(spec, stdin=payload, split=False, wall=min(spec.wall, HOOK_WALL_SECONDS))
        result = await run_async(spec, None, lambda: self.inv.cancelled)
        text = render_capture(result.out, self.redact).strip()
        self.audit("hook", tool=self.req.tool, when=event, hook=hook.label, exit_code=result.exit_code,
                   signal=result.signal, limit=result.limit, duration_ms=round(result.duration_ms, 1))  # fmt: skip
        if result.limit == "cancelled":
            raise ToolError(ErrorCode.CANCELLED, "the call was cancelled while a runtime hook ran")
        return result, text

    async def before(self) -> None:
        """Run every before-hook; the first that does not exit 0 refuses the command."""
        for hook in self._hooks("before"):
            result, text = await self._run(hook, "before", self._payload("before"))
            if result.exit_code == 0 and result.limit is None:
                continue
            how = f"hit its {result.limit} limit" if result.limit else f"exited {result.exit_code}"
            reason = text[:REASON_CHARS] or "(no output)"
            raise ToolError(
                ErrorCode.DENIED,
                f"`{self.req.command_text()}` was refused by hook {hook.label!r} of runtime "
                f"{self.req.runtime.id} (it {how}): {reason}",
            )

    async def after(self, out: Output, result: RunResult) -> Output:
        """Run every after-hook and append what they say to the command's output."""
        hooks = self._hooks("after")
        if not hooks:
            return out
        payload = self._payload(
            "after", exit_code=result.exit_code, signal=result.signal, limit=result.limit,
            duration_ms=round(result.duration_ms, 1), output=out.as_text()[:OUTPUT_TO_HOOK],
        )  # fmt: skip
        notes: list[dict[str, Any]] = []
        for hook in hooks:
            hres, text = await self._run(hook, "after", payload)
            notes.append({"hook": hook.label, "exit_code": hres.exit_code, "limit": hres.limit, "output": text})
        return _with_notes(out, notes)


def _with_notes(out: Output, notes: list[dict[str, Any]]) -> Output:
    if out.structured is not None:
        data = {**out.structured, "hooks": notes}
        return Output.text(json.dumps(data, ensure_ascii=False, indent=1), structured=data)
    lines = []
    for n in notes:
        status = "" if n["exit_code"] == 0 and n["limit"] is None else f" failed ({n['limit'] or n['exit_code']})"
        if n["output"] or status:
            lines.append(f"[hook {n['hook']}{status}] {n['output']}".rstrip())
    if not lines:
        return out
    text = out.as_text()
    sep = "" if text.endswith("\n") else "\n"
    return Output.text(text + sep + "\n".join(lines))


def _inside(path: str, root: str) -> bool:
    return path == root or path.startswith(root.rstrip("/") + "/")
