"""The shell service: one request from policy to a shaped result.

Order, and why: the request is audited before anything is decided (a record
exists even if the host dies); the policy decides on the resolved
executables; ``ask`` goes to the host's approver (or means deny); only then
is the sandbox probed and the argv built from the *resolved* paths, so what
runs is what was judged (no PATH game between decision and exec).
"""

from __future__ import annotations

import asyncio
import functools
import os
from collections.abc import Callable, Sequence

from tooldeck.core.errors import ErrorCode, ToolError, invalid_arguments
from tooldeck.core.invocation import Invocation
from tooldeck.core.output import Output
from tooldeck.shell.approval import ApprovalAnswer, ApprovalRequest, SessionApprovals, current_approver
from tooldeck.shell.audit import AuditLog
from tooldeck.shell.cgroup import parent as cgroup_parent
from tooldeck.shell.config_sweep import with_notice
from tooldeck.shell.execute import RunSpec, run_async
from tooldeck.shell.git_env import harden as harden_git
from tooldeck.shell.gitguard import GitGuard
from tooldeck.shell.gitguard import prepare as prepare_git_guard
from tooldeck.shell.hooks import HookRun
from tooldeck.shell.placeholders import Placeholders
from tooldeck.shell.policy import Decision, decide
from tooldeck.shell.profiles import ShellRuntime
from tooldeck.shell.render import render_result
from tooldeck.shell.request import ShellRequest
from tooldeck.shell.sandbox import PRLIMIT, SandboxPlan, SandboxUnavailable, bwrap_argv, probe
from tooldeck.shell.seccomp_filter import program as seccomp_program
from tooldeck.shell.shaping import Redactor, StreamDecoder
from tooldeck.shell.spec import file_sha256

RootsFn = Callable[[], Sequence[tuple[str, bool]]]  # (canonical path, read_only) per workspace root


def _inside(path: str, root: str) -> bool:
    return path == root or path.startswith(root.rstrip("/") + "/")


class ShellService:
    """Shared by every shell tool of a process: roots, audit log, session approvals."""

    def __init__(self, roots: RootsFn, state_dir: str | os.PathLike[str]) -> None:
        self._roots = roots
        self.state_dir = os.path.realpath(state_dir)
        self.audit = AuditLog(state_dir)
        self.approvals = SessionApprovals()
        self.placeholders = Placeholders(self.state_dir)
        self.placeholders.sweep()  # what a crashed process left in a root

    # roots ------------------------------------------------------------------
    def _expand(self, specs: Sequence[str], *, writable: bool) -> list[str]:
        out: list[str] = []
        for spec in specs:
            if spec == "workspace":
                out += [p for p, ro in self._roots() if not (writable and ro)]
            elif os.path.isdir(spec):
                out.append(os.path.realpath(spec))
        return list(dict.fromkeys(out))

    def _cwd(self, rt: ShellRuntime, requested: str | None, visible: list[str]) -> str:
        roots = [p for p, _ro in self._roots()]
        base = roots[0] if roots else "/"
        raw = requested if requested is not None else (rt.cwd or ".")
        if "\x00" in raw:
            raise invalid_arguments("cwd contains a NUL byte", field="cwd")
        path = os.path.realpath(os.path.join(base, raw))
        if not any(_inside(path, v) for v in visible):
            raise ToolError(
                ErrorCode.OUTSIDE_ROOTS,
                f"cwd {raw!r} resolves to {path}, outside the roots this runtime sees ({', '.join(visible)})",
                {"fields": ["cwd"]},
            )
        if not os.path.isdir(path):
            raise invalid_arguments(f"cwd {raw!r} is not a directory", field="cwd")
        return path

    def _env(self, rt: ShellRuntime) -> tuple[dict[str, str], list[str]]:
        env = {k: os.environ[k] for k in rt.environment.inherit if k in os.environ}
        secrets = [os.environ[k] for k in rt.secrets.env if k in os.environ]
        env.update({k: os.environ[k] for k in rt.secrets.env if k in os.environ})
        env.update(dict(rt.environment.set))
        env["PATH"] = rt.environment.path
        env.setdefault("HOME", "/tmp")
        return harden_git(env, sandboxed=rt.sandbox.mode == "required"), secrets

    # decision -----------------------------------------------------------------
    async def _approve(self, req: ShellRequest, decision: Decision) -> str:
        """``ask`` → the host; returns who approved, or raises denied."""
        ask = ApprovalRequest(req.tool, req.runtime.id, req.mode, req.command_text(), decision.explain(), req.rationale)
        if self.approvals.covers(ask):
            return "session"
        approver = current_approver()
        if approver is None:
            raise ToolError(
                ErrorCode.DENIED,
                f"`{ask.command}` needs approval ({decision.explain()}) and nobody can be asked here, so it is "
                "denied. Use a command the runtime's policy allows, or ask the user to allow it in the config.",
            )
        try:
            answer = await approver.approve(ask)
        except Exception:  # a broken host approver has approved nothing
            answer = ApprovalAnswer(False, "once", "error")
        self.audit.write("approval", tool=req.tool, command=ask.command, approved=answer.approved,
                         scope=answer.scope, by=answer.by)  # fmt: skip
        if not answer.approved:
            why = f" ({answer.reason.strip()[:500]})" if answer.reason and answer.reason.strip() else ""
            raise ToolError(ErrorCode.DENIED, f"the user declined `{ask.command}`{why}; do not retry it unchanged")
        if answer.scope == "session":
            self.approvals.remember(ask)
        return answer.by

    def _resolve_argvs(
        self, req: ShellRequest, decision: Decision, cwd: str, visible: list[str]
    ) -> list[tuple[str | None, list]]:
        """Each stage's argv with its program replaced by the resolved executable
        the policy judged; one the sandbox would not show is refused here, with
        a message that says why, instead of a bare exec failure inside."""
        real = {c.argv: c.real for c in decision.commands}
        sandboxed = req.runtime.sandbox.mode == "required"
        out: list[tuple[str | None, list[list[str]]]] = []
        for op, stages in req.steps:
            resolved = []
            for argv in stages:
                exe = real.get(tuple(argv))
                if exe is None:
                    raise ToolError(
                        ErrorCode.NOT_FOUND,
                        f"program {argv[0]!r} not found on the runtime PATH ({req.runtime.environment.path}) "
                        f"or relative to {cwd}; check the name",
                        {"fields": ["program"]},
                    )
                if sandboxed and not any(_inside(exe, v) for v in visible):
                    raise ToolError(
                        ErrorCode.NOT_FOUND,
                        f"program {argv[0]!r} is {exe}, which the sandbox does not show (it sees the system "
                        f"directories and the runtime's roots); use a program installed under {', '.join(visible[:6])}",
                        {"fields": ["program"]},
                    )
                resolved.append([exe, *argv[1:]])
            out.append((op, resolved))
        return out

    # running ----------------------------------------------------------------------
    def _wrap(self, req: ShellRequest, steps: list, cwd: str, read: list[str], write: list[str], env: dict,
              guard: GitGuard | None = None) -> RunSpec:  # fmt: skip
        rt = req.runtime
        stdin = req.stdin.encode("utf-8") if req.stdin is not None else None
        n_stages = sum(len(s) for _op, s in steps)
        max_pids = rt.limits.processes if rt.sandbox.child_processes else min(rt.limits.processes, 4 + 4 * n_stages)
        common = dict(wall=rt.limits.wall_seconds, idle=rt.limits.idle_seconds, output_bytes=rt.limits.output_bytes,
                      max_pids=max_pids, pipefail=rt.pipefail, stdin=stdin, split=req.result != "combined")  # fmt: skip
        if rt.sandbox.mode == "off":
            return RunSpec(steps=steps, env=env, cwd=cwd, **common)  # type: ignore[arg-type]
        if guard is None:
            raise RuntimeError("a sandboxed run needs its git guard (ShellService._git_guard)")
        try:
            exe = probe()
        except SandboxUnavailable as exc:
            raise ToolError(ErrorCode.SANDBOX_UNAVAILABLE, str(exc)) from exc
        bound = [*read, *write, *rt.sandbox.system_paths]
        hide = tuple(d for d in (self.state_dir,) if any(_inside(d, b) for b in bound))
        plan = SandboxPlan(tuple(read), tuple(write), rt.sandbox.network, cwd, env, hide,
                           rt.sandbox.system_paths, req.extra_ro, tuple(guard.binds),
                           nproc=max_pids if _needs_rlimit(rt.sandbox.system_paths) else None)  # fmt: skip
        wrapped = [(op, [bwrap_argv(exe, plan, argv) for argv in stages]) for op, stages in steps]
        return RunSpec(steps=wrapped, seccomp=seccomp_program(), hold=guard, **common)  # type: ignore[arg-type]

    def _git_guard(self, rt: ShellRuntime, read: list[str], write: list[str]) -> GitGuard | None:
        """Placeholders held and git directories planned read-only for this call
        (hooks and command share them); None when the runtime is not sandboxed."""
        if rt.sandbox.mode == "off":
            return None
        return prepare_git_guard(self.placeholders, read, write, skip=(self.state_dir,))

    async def execute(self, req: ShellRequest, inv: Invocation) -> Output:
        rt = req.runtime
        command = req.command_text()
        self.audit.write("request", tool=req.tool, runtime=rt.id, mode=req.mode, command=command,
                         rationale=req.rationale, cwd=req.cwd)  # fmt: skip
        if req.stdin is not None and len(req.stdin.encode("utf-8")) > rt.limits.stdin_bytes:
            self.audit.write("decision", tool=req.tool, action="deny", reason="stdin over the limit")
            raise ToolError(ErrorCode.TOO_LARGE, f"stdin is over the runtime's {rt.limits.stdin_bytes}-byte limit; "
                            "pass a file path instead")  # fmt: skip
        read = self._expand(rt.sandbox.read, writable=False)
        write = self._expand(rt.sandbox.write, writable=True)
        cwd = self._cwd(rt, req.cwd, [*read, *write])
        argvs = [tuple(a) for _op, stages in req.steps for a in stages]
        writable = [p for p, ro in self._roots() if not ro] + write  # what a model can write (file tools, commands)
        decision = decide(rt.policy, argvs, path_env=rt.environment.path, cwd=cwd, roots=writable,
                          declared=req.declared, raw_code=req.raw_code)  # fmt: skip
        self.audit.write("decision", tool=req.tool, command=command, action=decision.action,
                         rules=decision.rules, reason=decision.explain(),
                         resolved=[c.real for c in decision.commands])  # fmt: skip
        if decision.action == "deny":
            raise ToolError(ErrorCode.DENIED, f"`{command}` is denied by runtime {rt.id} ({decision.explain()}); "
                            "do not try to get around it: use another approach or ask the user")  # fmt: skip
        if decision.action == "ask":
            await self._approve(req, decision)
        steps = self._resolve_argvs(req, decision, cwd, [*read, *write, *rt.sandbox.system_paths, *req.extra_ro])
        if req.script is not None and file_sha256(req.script[0]) != req.script[1]:
            self.audit.write("decision", tool=req.tool, action="deny", reason="script hash changed")
            raise ToolError(ErrorCode.DENIED, f"script {req.script[0]} changed since it was declared (sha256 "
                            "mismatch); it will not run until the declaration is updated")  # fmt: skip
        env, secret_values = self._env(rt)
        redact = Redactor(secret_values, rt.secrets.patterns)
        guard = self._git_guard(rt, read, write)
        try:
            return await self._run(req, inv, steps, cwd, read, write, env, redact, guard)
        finally:
            if guard is not None:
                guard.close()  # the placeholders go once the last run of the call has ended

    async def _run(self, req: ShellRequest, inv: Invocation, steps: list, cwd: str, read: list[str],
                   write: list[str], env: dict, redact: Redactor, guard: GitGuard | None) -> Output:  # fmt: skip
        """Hooks and the command, all under the call's git guard."""
        rt, command = req.runtime, req.command_text()
        wrap = functools.partial(self._wrap, guard=guard)
        hooks = HookRun(req, inv, wrap, self.audit.write, cwd, read, write, env,
                        [*read, *write, *rt.sandbox.system_paths, *req.extra_ro], redact,
                        [argv for _op, stages in steps for argv in stages])  # fmt: skip
        await hooks.before()
        spec = wrap(req, steps, cwd, read, write, env)
        result = await run_async(spec, _emitter(inv, redact, rt.limits.output_bytes), lambda: inv.cancelled)
        self.audit.write("result", tool=req.tool, command=command, exit_code=result.exit_code, signal=result.signal,
                         duration_ms=round(result.duration_ms, 1), limit=result.limit,
                         output_bytes=result.out.total + (result.err.total if result.err else 0))  # fmt: skip
        if result.limit == "cancelled":
            raise ToolError(ErrorCode.CANCELLED, "the call was cancelled; the command's processes were killed")
        output = await hooks.after(render_result(result, req.result, redact, rt), result)
        return with_notice(output, await asyncio.to_thread(guard.sweep) if guard is not None else [])


def _needs_rlimit(system_paths: Sequence[str]) -> bool:
    """No pids cgroup to hold the process count: RLIMIT_NPROC inside the sandbox
    does (it binds every user but root, for whom only the cgroup holds), set by
    ``prlimit`` where the sandbox shows it."""
    return (cgroup_parent() is None and os.geteuid() != 0 and os.path.exists(PRLIMIT)
            and any(_inside(PRLIMIT, p) for p in system_paths))  # fmt: skip


def _emitter(inv: Invocation, redact: Redactor, budget: int) -> Callable[[str, bytes], None] | None:
    """Progress: output chunks as they come, up to ``budget`` bytes per run."""
    if not inv.is_observed:
        return None
    decoders: dict[str, StreamDecoder] = {}
    sent = [0]

    def emit(channel: str, data: bytes) -> None:
        if sent[0] >= budget:
            return
        sent[0] += len(data)
        text = decoders.setdefault(channel, StreamDecoder(redact)).feed(data)
        if sent[0] >= budget:
            text += "\n[progress stops here: more output follows in the result]\n"
        if text:
            inv.emit_text(channel, text)

    return emit
