"""What a declared shell runtime asks beyond the built-in runtimes (SPEC §3, authority).

Why a separate check: a runtime declared in a file the model could have
written (a ``<shell_access>`` in a prompt folder inside a root, an imported
``.chatmd``) must not widen the sandbox the model's commands run in. The
built-in runtimes (:data:`tooldeck.shell.profiles.BUILTIN`) are the safe
subset: sandbox on, no network, reads and writes within the workspace, the
default environment, no secrets, no hooks, every program outside the
read-only list asked. A declared runtime that stays within them (a shorter
time limit, a ``deny`` rule, fewer processes) needs no authority; anything
in :func:`widening`'s answer does.

Limits (wall time, output size, processes) are not authority: they bound
cost, not reach, and are left to the declaration.
"""

from __future__ import annotations

import os
from collections.abc import Sequence

from tooldeck.shell.profiles import BUILTIN, DEFAULT_ENV, SYSTEM_PATHS, Environment, Rule, ShellRuntime

_BUILTIN_ALLOWS = frozenset(
    (r.program, r.basename, r.path, r.prefix, r.contains, r.regex)
    for rt in BUILTIN.values()
    for r in rt.policy.rules
    if r.action == "allow"
)


def _matchers(rule: Rule) -> tuple[object, ...]:
    return (rule.program, rule.basename, rule.path, rule.prefix, rule.contains, rule.regex)


def _inside(path: str, roots: Sequence[str]) -> bool:
    real = os.path.realpath(path)
    return any(real == r or real.startswith(r.rstrip(os.sep) + os.sep) for r in map(os.path.realpath, roots))


def _outside(specs: Sequence[str], roots: Sequence[str]) -> list[str]:
    return [s for s in specs if s != "workspace" and not _inside(s, roots)]


def widening(rt: ShellRuntime, roots: Sequence[str]) -> list[str]:
    """What ``rt`` allows beyond the built-in runtimes, in the person's words
    (empty: it stays within them). ``roots`` are the workspace's directories."""
    out: list[str] = []
    sb = rt.sandbox
    if sb.mode != "required":
        out.append("turns the sandbox off")
    if sb.network:
        out.append("opens the network")
    if reads := _outside(sb.read, roots):
        out.append(f"reads {', '.join(reads)} (outside the roots)")
    if writes := _outside(sb.write, roots):
        out.append(f"writes {', '.join(writes)} (outside the roots)")
    if extra := sorted(set(sb.system_paths) - set(SYSTEM_PATHS)):
        out.append(f"shows {', '.join(extra)} from the host")
    out += _environment(rt)
    if rt.hooks:
        out.append("runs hooks " + ", ".join(f"`{' '.join(h.argv)}`" for h in rt.hooks) + " outside the sandbox")
    if rt.policy.default == "allow":
        out.append("allows every command without asking")
    if rt.policy.raw == "allow":
        out.append("allows raw code (`sh -c`, interpreters)")
    if rules := [r.id for r in rt.policy.rules if r.action == "allow" and _matchers(r) not in _BUILTIN_ALLOWS]:
        out.append(f"allows commands without asking (rules {', '.join(rules)})")
    return out


def _environment(rt: ShellRuntime) -> list[str]:
    out: list[str] = []
    env, default = rt.environment, Environment()
    if inherited := sorted(set(env.inherit) - set(DEFAULT_ENV)):
        out.append(f"passes the host's {', '.join('$' + n for n in inherited)}")
    if env.set:
        out.append(f"sets {', '.join(name for name, _ in env.set)} (a variable can make an allowed program run code)")
    if env.path != default.path:
        out.append(f"changes PATH to {env.path}")
    if rt.secrets.env:
        out.append(f"passes the secrets {', '.join('$' + n for n in rt.secrets.env)}")
    return out
