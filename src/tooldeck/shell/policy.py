"""Policy: allow, ask or deny a request before anything runs.

Each argv that would run (wrappers unwrapped, see :mod:`tooldeck.shell.wrappers`)
is resolved through the runtime's PATH to the executable the kernel would
load (symlinks followed), then matched against every rule. Precedence is by
severity, never by order: deny > ask > allow. An argv no rule matches takes
the policy's default. Arbitrary code (raw mode, uninspectable wrappers) is
decided by the policy's ``raw`` setting.
"""

from __future__ import annotations

import fnmatch
import os
import re
from dataclasses import dataclass, field

from tooldeck.shell.profiles import SEVERITY, Action, Policy, Rule
from tooldeck.shell.wrappers import Inspection, inspect_argv


@dataclass(frozen=True, slots=True)
class Resolved:
    argv: tuple[str, ...]
    found: str | None  # the path found on PATH (or relative to cwd), None if not found
    real: str | None  # ``found`` with symlinks resolved

    @property
    def names(self) -> set[str]:
        out = {os.path.basename(self.argv[0])}
        for p in (self.found, self.real):
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
    checks: list[bool] = []
    if rule.program is not None:
        checks.append(argv[0] == rule.program)
    if rule.basename is not None:
        checks.append(rule.basename in cmd.names)
    if rule.path is not None:
        checks.append(any(p is not None and fnmatch.fnmatchcase(p, rule.path) for p in (cmd.found, cmd.real)))
    if rule.prefix is not None:
        checks.append(_prefix_match(rule.prefix, cmd))
    if rule.contains is not None:
        checks.append(any(rule.contains in a for a in argv[1:]))
    if rule.regex is not None:
        checks.append(re.search(rule.regex, " ".join(argv)) is not None)
    return bool(checks) and all(checks)


def _worse(a: Action, b: Action) -> Action:
    return a if SEVERITY[a] >= SEVERITY[b] else b


def decide(
    policy: Policy,
    argvs: list[tuple[str, ...]],
    *,
    path_env: str,
    cwd: str,
    declared: bool = False,
    raw_code: bool = False,
) -> Decision:
    """The decision for running every argv in ``argvs`` (one request).

    ``declared``: the argv is the author's fixed command (fixed/script tools):
    the default does not apply to it, only explicit rules. ``raw_code``: the
    request is a raw-mode program text (arbitrary code)."""
    decision = Decision("allow")
    hits: list[tuple[str, str]] = []
    if raw_code:
        decision.reasons.append("raw code")
        if policy.raw == "deny":
            decision.action = "deny"
            decision.reasons[-1] = "raw code is not allowed by this runtime (policy raw=deny)"
    for outer in argvs:
        insp = Inspection([outer], []) if raw_code else inspect_argv(outer)
        if insp.arbitrary and policy.raw == "deny":
            reason = "; ".join(insp.arbitrary)
            decision.reasons.append(f"arbitrary code ({reason}) is not allowed by this runtime (policy raw=deny)")
            decision.action = "deny"
        for argv in insp.argvs:
            found, real = resolve(argv[0], path_env, cwd)
            cmd = Resolved(argv, found, real)
            decision.commands.append(cmd)
            matched = [r for r in policy.rules if rule_matches(r, cmd)]
            if matched:
                worst = max(matched, key=lambda r: SEVERITY[r.action])
                hits.extend((r.id, r.action) for r in matched)
                decision.action = _worse(decision.action, worst.action)
            elif not ((declared or raw_code) and argv == outer):
                if policy.default != "allow":
                    decision.reasons.append(f"{os.path.basename(argv[0])}: no rule matches (default {policy.default})")
                decision.action = _worse(decision.action, policy.default)
    decision.rules = list(dict.fromkeys(rid for rid, action in hits if action == decision.action))
    return decision
