"""Shell runtimes: what a shell tool may do, as data (seed 000 ``<shell_access>``).

Why a runtime is separate from a tool: many tools (a fixed ``git status``, a
structured ``shell``) share one authority — the roots they see and write, the
network, the policy, the limits, the environment and the secrets to hide —
and that authority is declared once, reviewed once, and audited under one id.

A runtime ``extends`` a built-in profile (or another runtime) and overrides
sections. Roots are kept as *specs* (``"workspace"`` = every root of the
workspace at call time, or an absolute path) because the workspace can change
while a server runs.
"""

from __future__ import annotations

from dataclasses import dataclass, field, replace
from typing import Literal

Action = Literal["allow", "ask", "deny"]
ACTIONS: tuple[str, ...] = ("allow", "ask", "deny")
SEVERITY: dict[str, int] = {"allow": 0, "ask": 1, "deny": 2}

DEFAULT_PATH = "/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin"
# System directories bound read-only into every sandbox (missing ones are skipped).
SYSTEM_PATHS: tuple[str, ...] = ("/usr", "/bin", "/sbin", "/lib", "/lib32", "/lib64", "/libx32", "/etc", "/opt")
DEFAULT_ENV: tuple[str, ...] = ("LANG", "LC_ALL", "LC_CTYPE", "TERM", "TZ")

# Programs that only inspect: the built-in profiles allow them with arguments
# that cannot run code or write (each program's rules, with reasons, are in
# shell/safe_args.py; the sandbox still decides what they can see);
# everything else follows ``default``. No pager (less): it runs commands.
READ_ONLY_PROGRAMS: tuple[str, ...] = (
    "basename", "cat", "cmp", "comm", "cut", "date", "df", "diff", "dirname", "du", "echo", "false", "file",
    "find", "git", "grep", "egrep", "fgrep", "head", "id", "jq", "ls", "md5sum", "nl", "od", "printf", "pwd",
    "readlink", "realpath", "rg", "sed", "seq", "sha1sum", "sha256sum", "sort", "stat", "tac", "tail", "tr",
    "tree", "true", "uname", "uniq", "wc", "whoami", "which", "xxd", "yes",
)  # fmt: skip


@dataclass(frozen=True, slots=True)
class Rule:
    """One policy rule: every matcher given must match (AND); none given matches nothing."""

    id: str
    action: Action
    program: str | None = None  # the program exactly as written
    basename: str | None = None  # basename of the program as written or as resolved
    path: str | None = None  # the resolved executable (fnmatch pattern), symlinks followed
    prefix: tuple[str, ...] | None = None  # argv prefix (argv[0] compared by basename)
    contains: str | None = None  # some argument contains this text
    regex: str | None = None  # re.search over the argv joined with spaces
    args: Literal["any", "safe"] = "any"  # "safe": allows only arguments that cannot run code or write


@dataclass(frozen=True, slots=True)
class Policy:
    default: Action = "ask"
    rules: tuple[Rule, ...] = ()
    raw: Literal["allow", "deny"] = "deny"  # raw mode / `sh -c`: arbitrary code


@dataclass(frozen=True, slots=True)
class Limits:
    wall_seconds: float = 60.0
    idle_seconds: float = 30.0
    output_bytes: int = 64_000
    stdin_bytes: int = 1_000_000
    processes: int = 256  # processes in the sandbox's tree (cgroup pids / RLIMIT_NPROC)


@dataclass(frozen=True, slots=True)
class Environment:
    inherit: tuple[str, ...] = DEFAULT_ENV  # host variables passed through (allowlist)
    set: tuple[tuple[str, str], ...] = ()  # fixed values
    path: str = DEFAULT_PATH  # the PATH programs are resolved through (absolute entries only)


@dataclass(frozen=True, slots=True)
class Secrets:
    env: tuple[str, ...] = ()  # host variables: passed in, their values redacted from output
    patterns: tuple[str, ...] = ()  # regexes redacted from output


@dataclass(frozen=True, slots=True)
class Sandbox:
    mode: Literal["required", "off"] = "required"
    network: bool = False
    read: tuple[str, ...] = ("workspace",)
    write: tuple[str, ...] = ()
    child_processes: bool = True  # off = the tree is held to a handful of processes
    system_paths: tuple[str, ...] = SYSTEM_PATHS


@dataclass(frozen=True, slots=True)
class Hook:
    """A program the runtime runs around every command (see :mod:`tooldeck.shell.hooks`)."""

    event: Literal["before", "after"]
    argv: tuple[str, ...]
    id: str = ""

    @property
    def label(self) -> str:
        return self.id or self.argv[0].rsplit("/", 1)[-1]


@dataclass(frozen=True, slots=True)
class ShellRuntime:
    id: str
    cwd: str | None = None  # relative to the first root, or absolute inside a read root
    pipefail: bool = True
    policy: Policy = field(default_factory=Policy)
    limits: Limits = field(default_factory=Limits)
    environment: Environment = field(default_factory=Environment)
    secrets: Secrets = field(default_factory=Secrets)
    sandbox: Sandbox = field(default_factory=Sandbox)
    hooks: tuple[Hook, ...] = ()  # a runtime that extends another keeps its hooks and adds its own
    origin: str = "builtin"  # where it was declared (for the audit log and errors)

    def renamed(self, id: str, origin: str) -> ShellRuntime:
        return replace(self, id=id, origin=origin)


def _read_only_rules() -> tuple[Rule, ...]:
    return tuple(Rule(id=f"read-only:{p}", action="allow", basename=p, args="safe") for p in READ_ONLY_PROGRAMS)


BUILTIN: dict[str, ShellRuntime] = {
    "builtin:workspace-readonly@1": ShellRuntime(
        id="builtin:workspace-readonly@1",
        policy=Policy(default="ask", rules=_read_only_rules()),
        limits=Limits(wall_seconds=30.0, idle_seconds=15.0, processes=64),
        sandbox=Sandbox(read=("workspace",), write=(), network=False, child_processes=False),
    ),
    "builtin:workspace-development@1": ShellRuntime(
        id="builtin:workspace-development@1",
        policy=Policy(default="ask", rules=_read_only_rules()),
        limits=Limits(wall_seconds=300.0, idle_seconds=120.0, processes=512),
        sandbox=Sandbox(read=("workspace",), write=("workspace",), network=False, child_processes=True),
    ),
}
DEFAULT_RUNTIME = "builtin:workspace-readonly@1"
