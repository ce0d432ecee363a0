"""Policy: allow, ask or deny a request before anything runs.

Each argv that would run (wrappers unwrapped, see :mod:`tooldeck.shell.wrappers`)
is resolved through the runtime's PATH to the executable the kernel would
load (symlinks followed), then matched against every rule. Precedence is by
severity, never by order: deny > ask > allow. An argv no rule matches takes
the policy's default.

Two refinements make rules mean what they say:

* a *read-only* allow rule (``Rule.args == "safe"``, the built-in list)
  vouches for a program only with arguments that cannot run code or write
  (:mod:`tooldeck.shell.safe_args`) and only when the executable lies outside
  the roots (a model can write files there); otherwise the argv takes the
  default, with a message naming the argument;
* deny and ask rules also match a copy of the executable they name (same
  inode, or same size and SHA-256: :mod:`tooldeck.shell.identity`), and a
  ``regex`` is tried with the program's resolved name as the first word.

Code tooldeck cannot inspect (raw mode aside) is refused when the runtime
says ``raw = "deny"``, and also when it says ``raw = "allow"`` but has deny or
ask rules: those rules could not be checked against code nobody can read.
"""

from __future__ import annotations

import fnmatch
import os
import re
from collections.abc import Sequence
from dataclasses import dataclass, field

from tooldeck.shell import safe_args
from tooldeck.shell.identity import Target, copies_of, executables_named, named_executables
from tooldeck.shell.profiles import SEVERITY, Action, Policy, Rule
from tooldeck.shell.wrappers import Inspection, Where, inspect_argv, wrapper_names


@dataclass(frozen=True, slots=True)
class Resolved:
    argv: tuple[str, ...]
    found: str | None  # the path found on PATH (or relative to cwd), None if not found
    real: str | None  # ``found`` with symlinks resolved
    same_as: tuple[str, ...] = ()  # executables named by deny/ask rules that this file is a copy of

    @property
    def names(self) -> set[str]:
        out = {os.path.basename(self.argv[0])}
        for p in (self.found, self.real, *self.same_as):
            if p:
                out.add(os.path.basename(p))
        return out


@dataclass(slots=True)
class Decision:
    action: Action
    rules: list[str] = field(default_factory=list)  # ids of the rules that decided
    reasons: list[str] = field(default_factory=list)
    commands: list[Resolved] = field(default_factory=list)

    def explain(self) -> str:
        parts = [*self.reasons]
        if self.rules:
            parts.append("rule " + ", ".join(self.rules))
        return "; ".join(parts) or f"policy default ({self.action})"


def resolve(program: str, path_env: str, cwd: str) -> tuple[str | None, str | None]:
    """(path found, real path) of ``program`` as the sandbox would find it."""
    if not program or "\x00" in program:
        return None, None
    if "/" in program:
        candidates = [os.path.normpath(os.path.join(cwd, program))]
    else:
        candidates = [os.path.join(d, program) for d in path_env.split(":") if d.startswith("/")]
    for cand in candidates:
        if os.path.isfile(cand) and os.access(cand, os.X_OK):
            return cand, os.path.realpath(cand)
    return None, None


def _prefix_match(prefix: tuple[str, ...], cmd: Resolved) -> bool:
    argv = cmd.argv
    if not prefix or len(argv) < len(prefix):
        return False
    if os.path.basename(prefix[0]) not in cmd.names and prefix[0] not in (argv[0], cmd.found, cmd.real):
        return False
    return tuple(argv[1 : len(prefix)]) == prefix[1:]


def rule_matches(rule: Rule, cmd: Resolved) -> bool:
    """All matchers the rule gives must hold."""
    argv = cmd.argv
    paths = (cmd.found, cmd.real, *cmd.same_as)
    checks: list[bool] = []
    if rule.program is not None:
        checks.append(argv[0] == rule.program or any(rule.program == p for p in cmd.same_as)
                      or any(os.path.basename(p) == rule.program for p in cmd.same_as))  # fmt: skip
    if rule.basename is not None:
        checks.append(rule.basename in cmd.names)
    if rule.path is not None:
        checks.append(any(p is not None and fnmatch.fnmatchcase(p, rule.path) for p in paths))
    if rule.prefix is not None:
        checks.append(_prefix_match(rule.prefix, cmd))
    if rule.contains is not None:
        checks.append(any(rule.contains in a for a in argv[1:]))
    if rule.regex is not None:
        firsts = dict.fromkeys([argv[0], *sorted(cmd.names)])  # `/usr/bin/rm -rf x` is also `rm -rf x`
        checks.append(any(re.search(rule.regex, " ".join([w, *argv[1:]])) is not None for w in firsts))
    return bool(checks) and all(checks)


def _worse(a: Action, b: Action) -> Action:
    return a if SEVERITY[a] >= SEVERITY[b] else b


def _inside(path: str, root: str) -> bool:
    return path == root or path.startswith(root.rstrip("/") + "/")


def _unvouched(rule: Rule, cmd: Resolved, ctx: safe_args.Context) -> str | None:
    """Why a read-only allow rule does not cover ``cmd`` (None: it does)."""
    for p in (cmd.found, cmd.real):
        if p is not None and any(_inside(p, r) for r in ctx.roots):
            return (f"{cmd.argv[0]} is {p}, inside a root (a model can write files there); the read-only rule "
                    "covers only the system's programs")  # fmt: skip
    program = rule.basename or os.path.basename(cmd.argv[0])
    names = dict.fromkeys([program, *(os.path.basename(p) for p in (cmd.real,) if p)])
    for name in names:
        findings = safe_args.check(name, cmd.argv[1:], ctx)
        if findings is None and name == program:
            return f"{program}: tooldeck has no argument rules for it"
        if findings:
            return "; ".join(f.message(name) for f in findings[:3])
    return None


def _arbitrary(policy: Policy, insp: Inspection, decision: Decision) -> None:
    reason = "; ".join(insp.arbitrary)
    if policy.raw == "deny":
        decision.reasons.append(f"arbitrary code ({reason}) is not allowed by this runtime (policy raw=deny)")
        decision.action = "deny"
    elif any(r.action != "allow" for r in policy.rules):
        decision.reasons.append(
            f"arbitrary code ({reason}) cannot be checked against this runtime's deny/ask rules, so it is refused; "
            "write the command so tooldeck can read it (a structured argv, or the chain grammar), or use a raw tool"
        )
        decision.action = "deny"
    else:
        decision.reasons.append(f"arbitrary code ({reason})")
        decision.action = _worse(decision.action, policy.default)


@dataclass(slots=True)
class _Judge:
    policy: Policy
    path_env: str
    cwd: str
    ctx: safe_args.Context
    targets: list[Target]
    decision: Decision = field(default_factory=lambda: Decision("allow"))
    hits: list[tuple[str, str]] = field(default_factory=list)

    wrappers: list[Target] = field(default_factory=list)

    def real(self, program: str, cwd: str | None = None) -> str | None:
        return resolve(program, self.path_env, cwd or self.cwd)[1]

    def names(self, program: str, cwd: str) -> list[str] | None:
        """What the executable ``program`` is: its resolved basename and, for a
        file inside a root, the basenames of the wrappers it is a copy of."""
        real = self.real(program, cwd)
        if real is None:
            return None
        out = [os.path.basename(real)]
        if any(_inside(real, r) for r in self.ctx.roots):
            out += [os.path.basename(p) for p in copies_of(real, self.wrappers)]
        return out

    def judge(self, argv: tuple[str, ...], *, skip_default: bool) -> None:
        found, real = resolve(argv[0], self.path_env, self.cwd)
        cmd = Resolved(argv, found, real, copies_of(real, self.targets))
        self.decision.commands.append(cmd)
        matched = [r for r in self.policy.rules if rule_matches(r, cmd)]
        problems: list[str] = []
        effective: list[Rule] = []
        for r in matched:
            why = _unvouched(r, cmd, self.ctx) if r.args == "safe" and r.action == "allow" else None
            if why is None:
                effective.append(r)
            else:
                problems.append(why)
        if effective:
            worst = max(effective, key=lambda r: SEVERITY[r.action])
            self.hits.extend((r.id, r.action) for r in effective)
            self.decision.action = _worse(self.decision.action, worst.action)
        elif not skip_default:
            if problems:
                self.decision.reasons.append(f"{problems[0]} (default {self.policy.default})")
            elif self.policy.default != "allow":
                self.decision.reasons.append(f"{os.path.basename(argv[0])}: no rule matches "
                                             f"(default {self.policy.default})")  # fmt: skip
            self.decision.action = _worse(self.decision.action, self.policy.default)


def decide(
    policy: Policy,
    argvs: list[tuple[str, ...]],
    *,
    path_env: str,
    cwd: str,
    roots: Sequence[str] = (),
    declared: bool = False,
    raw_code: bool = False,
) -> Decision:
    """The decision for running every argv in ``argvs`` (one request).

    ``roots``: the directories a model can write (the runtime's roots).
    ``declared``: the argv is the author's fixed command (fixed/script tools):
    the default does not apply to it, only explicit rules. ``raw_code``: the
    request is a raw-mode program text (arbitrary code)."""
    ctx = safe_args.Context(cwd, tuple(os.path.realpath(r) for r in roots), path_env)
    targets = named_executables(policy.rules, lambda p: resolve(p, path_env, cwd)[1])
    wrappers = executables_named(wrapper_names(), path_env, lambda p: resolve(p, path_env, "/")[1])
    judge = _Judge(policy, path_env, cwd, ctx, targets, wrappers=wrappers)
    decision = judge.decision
    if raw_code:
        decision.reasons.append("raw code")
        if policy.raw == "deny":
            decision.action = "deny"
            decision.reasons[-1] = "raw code is not allowed by this runtime (policy raw=deny)"
    where = Where(ctx, judge.names)
    for outer in argvs:
        insp = Inspection([outer], []) if raw_code else inspect_argv(outer, where)
        if insp.arbitrary:
            _arbitrary(policy, insp, decision)
        for argv in insp.argvs:
            judge.judge(argv, skip_default=(declared or raw_code) and argv == outer)
    decision.rules = list(dict.fromkeys(rid for rid, action in judge.hits if action == decision.action))
    return decision
