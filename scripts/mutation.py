#!/usr/bin/env python3
"""A small mutation pass over the security-critical modules.

Each mutant is one text substitution in one source file (a guard disabled, a
flag dropped, a comparison loosened) with the tests that should notice it.
For each, ``src/`` is copied to a temporary folder, the substitution applied
there, and the tests run with ``PYTHONPATH`` pointing at the copy (the work
tree is never changed, so the pass can run beside other work). A mutant is
*killed* when the tests fail, *survived* when they pass, *stale* when its text
is no longer in the file exactly once (the code moved on: update the mutant).

Why a scripted list and not mutmut/cosmic-ray: most of these guards are
exercised in subprocesses (``tooldeck serve``, bwrap, crash children), which
coverage-driven mutant selection does not see, and a generated mutant set
over these ~2,000 lines would need hours of runs on this 2-core machine;
a reviewed list of mutants that matter runs in minutes.

    scripts/mutation.py                  # every mutant, a table on stdout
    scripts/mutation.py --only shell     # mutants whose id starts with "shell"
    scripts/mutation.py --write          # also rewrite docs/mutation.md with the result
    scripts/mutation.py --list           # the mutants, without running them

Re-run it after changing a module listed here; add a mutant for a new guard.
"""

from __future__ import annotations

import argparse
import os
import shutil
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
PY = os.environ.get("PYTHON") or (
    str(REPO / ".venv/bin/python") if (REPO / ".venv/bin/python").exists() else sys.executable
)

WS_ROOTS = ["tests/workspace/test_roots.py", "tests/workspace/test_adversarial.py",
            "tests/workspace/test_write_rules.py", "tests/workspace/test_state_dir_hidden.py"]  # fmt: skip
WS_IO = ["tests/workspace/test_dirfd.py", "tests/workspace/test_adversarial.py",
         "tests/workspace/test_atomic_batch_guards.py", "tests/workspace/test_write_rules.py",
         "tests/workspace/test_stalling_rule_files.py", "tests/workspace/test_swap_race.py"]  # fmt: skip
WS_WRITE = ["tests/workspace/test_fsops.py", "tests/workspace/test_atomic_batch_guards.py",
            "tests/workspace/test_write_rules.py",
            "tests/workspace/test_adversarial.py", "tests/workspace/test_write_races.py",
            "tests/tools/edits", "tests/workspace/test_crash_recovery.py"]  # fmt: skip
JOURNAL = ["tests/workspace/test_intent_seal.py", "tests/workspace/test_journal.py",
           "tests/workspace/test_journal_forgery.py", "tests/workspace/test_crash_recovery.py"]  # fmt: skip
POLICY = ["tests/shell/test_chain_policy.py", "tests/shell/test_approvals.py", "tests/shell/test_declarations.py",
          "tests/shell/test_hooks.py"]  # fmt: skip
SANDBOX = ["tests/shell/test_sandbox_*.py", "tests/shell/test_breakout*.py", "tests/shell/test_limits.py",
           "tests/shell/test_surfaces.py",
           "tests/shell/test_output.py"]  # fmt: skip
TRUST = ["tests/state", "tests/test_cli_trust.py", "tests/tools/workspaces/test_trust_boundary.py",
         "tests/shell/test_declarations.py", "tests/mcp/test_trust_e2e.py"]  # fmt: skip


@dataclass(frozen=True)
class Mutant:
    id: str
    file: str  # under src/tooldeck/
    old: str
    new: str
    why: str  # what the mutant breaks, in words
    tests: tuple[str, ...]
    equivalent: str = ""  # why no test can see it (a second layer another one makes redundant)


def m(id: str, file: str, old: str, new: str, why: str, tests: list[str], equivalent: str = "") -> Mutant:
    return Mutant(id, file, old, new, why, tuple(tests), equivalent)


NOFOLLOW = "os.O_NOFOLLOW | "
MUTANTS: list[Mutant] = [
    # path resolution --------------------------------------------------------------------------------
    m("roots-prefix", "workspace/roots.py", "return real == self.path or real.startswith(self.path + os.sep)",
      "return real.startswith(self.path)", "a sibling /x/root-evil counts as inside /x/root", WS_ROOTS),
    m("roots-hidden", "workspace/roots.py", "if owner is None or is_hidden(real):", "if owner is None:",
      "the state directory inside a root is reachable", WS_ROOTS),
    m("roots-read-only", "workspace/roots.py", "            if owner.read_only:", "            if False:",
      "a read-only root is writable", WS_ROOTS),
    m("roots-write-through-link", "workspace/roots.py", "if known is None and os.path.islink(lexical):",
      "if False:", "a write may follow a symlink named as the target", WS_ROOTS),
    m("roots-vcs-metadata", "workspace/roots.py", "hit = sorted(parts & VCS_METADATA)", "hit = []",
      "tools may write inside .git", WS_ROOTS),
    m("roots-vcs-spelling", "workspace/roots.py", "for candidate in (real, os.path.normpath(lexical)):",
      "for candidate in (real,):", "only the canonical path is checked for .git (not the model's spelling)",
      WS_ROOTS),
    m("roots-control-chars", "workspace/roots.py", "if not exists and _CONTROL_RE.search(path):", "if False:",
      "a new name may hold a newline or escape", WS_ROOTS),
    m("roots-nul", "workspace/roots.py", 'if "\\x00" in path:', "if False:",
      "a NUL byte in a path is not refused up front", WS_ROOTS),
    m("roots-path-max", "workspace/roots.py", "if len(encoded) >= PATH_MAX:", "if False:",
      "an over-long path is not refused up front", WS_ROOTS),
    m("dirfd-dir-nofollow", "workspace/dirfd.py", "os.O_DIRECTORY | os.O_NOFOLLOW", "os.O_DIRECTORY",
      "a folder component that is a symlink is followed", WS_IO),
    m("dirfd-file-nofollow", "workspace/dirfd.py", "os.O_NONBLOCK | os.O_NOFOLLOW | _CLOEXEC",
      "os.O_NONBLOCK | _CLOEXEC", "a final symlink is followed when opening a file", WS_IO),
    m("dirfd-file-nonblock", "workspace/dirfd.py", "FILE_FLAGS = os.O_RDONLY | os.O_NONBLOCK |",
      "FILE_FLAGS = os.O_RDONLY |", "opening a FIFO blocks", WS_IO),
    m("dirfd-dotdot", "workspace/dirfd.py", "    if \"..\" in parts:\n        raise ToolError(ErrorCode.OUTSIDE_ROOTS",
      "    if False:\n        raise ToolError(ErrorCode.OUTSIDE_ROOTS", "a '..' component is walked", WS_IO),
    m("dirfd-prefix", "workspace/dirfd.py", "if not abs_path.startswith(prefix):", "if False:",
      "a path outside the root is opened beneath it", WS_IO),
    m("dirfd-hidden", "workspace/dirfd.py", "    if is_hidden(abs_path):", "    if False:",
      "open_beneath opens the state directory", [*WS_IO, "tests/workspace/test_state_dir_hidden.py"]),
    # atomic writes ----------------------------------------------------------------------------------
    m("fsops-tmp-excl", "workspace/fsops.py", "os.O_CREAT | os.O_EXCL | ", "os.O_CREAT | ",
      "the temp file may be a planted file or link", WS_WRITE),
    m("fsops-tmp-nofollow", "workspace/fsops.py", "os.O_EXCL | os.O_NOFOLLOW", "os.O_EXCL",
      "the temp file's name may be a symlink", WS_WRITE,
      equivalent="O_CREAT|O_EXCL already fails on any existing name, a symlink included"),
    m("fsops-read-nofollow", "workspace/fsops.py", "READ_FLAGS = os.O_RDONLY | os.O_NOFOLLOW |",
      "READ_FLAGS = os.O_RDONLY |", "reading the target follows a symlink", WS_WRITE),
    m("fsops-target-link", "workspace/fsops.py", "    if stat.S_ISLNK(st.st_mode):", "    if False:",
      "a symlink target is replaced instead of refused", WS_WRITE),
    m("fsops-target-regular", "workspace/fsops.py", "    if not stat.S_ISREG(st.st_mode):", "    if False:",
      "a FIFO/device/socket target is written", WS_WRITE),
    m("fsops-dotdot", "workspace/fsops.py", 'if any(p == ".." for p in parts):', "if False:",
      "a relative path with '..' is split into components", WS_WRITE),
    m("fsops-same-content", "workspace/fsops.py", "if not expect.startswith(view[:n], pos):", "if False:",
      "a changed file compares equal to the expected content", WS_WRITE),
    m("atomic-expect-absent", "workspace/atomic.py", "if op.expect_absent and st is not None:", "if False:",
      "a create overwrites a file made meanwhile", WS_WRITE),
    m("atomic-stale", "workspace/atomic.py",
      "if st is None or not same_content(op.dfd, op.name, op.expect, op.expect_digest):", "if False:",
      "a stale edit overwrites another writer's change", WS_WRITE),
    # journal and recovery ---------------------------------------------------------------------------
    m("intent-mac", "workspace/intent.py",
      "if not hmac.compare_digest(head[len(MAGIC) :], _mac(key, batch_id, body).encode()):", "if False:",
      "a forged intent is acted on", JOURNAL),
    m("intent-batch-id", "workspace/intent.py",
      'if not isinstance(record, dict) or record.get("batch") != batch_id:', "if not isinstance(record, dict):",
      "one batch's sealed intent is replayed as another's", JOURNAL),
    m("intent-root", "workspace/intent.py", "    if root not in roots:", "    if False:",
      "an entry names a root the batch did not record", JOURNAL),
    m("intent-plain-name", "workspace/intent.py", '    if not _plain(raw.get("name")):', "    if False:",
      "an entry's name may hold '..' or a separator", JOURNAL),
    m("intent-own-temp", "workspace/intent.py", '    if not _own_temp(raw.get("tmp"), batch_id, ""):', "    if False:",
      "an entry may rename any file in as its 'temp'", JOURNAL),
    # (the fsyncs are not mutated: only a power loss would show one missing, and no test here can cut power)
    # shell policy -----------------------------------------------------------------------------------
    m("policy-all-checks", "shell/policy.py", "return bool(checks) and all(checks)",
      "return bool(checks) and any(checks)", "a rule matches when any one of its conditions does", POLICY),
    m("policy-worse", "shell/policy.py", "return a if SEVERITY[a] >= SEVERITY[b] else b", "return b",
      "a later, milder match overrides a deny", POLICY),
    m("policy-raw-deny", "shell/policy.py", '        if policy.raw == "deny":\n            decision.action',
      '        if False:\n            decision.action', "raw code runs under raw=deny", POLICY),
    m("policy-arbitrary", "shell/policy.py", 'if insp.arbitrary and policy.raw == "deny":', "if False:",
      "`sh -c`, `env -S`, `git -c` run under raw=deny", POLICY),
    m("policy-default", "shell/policy.py", "elif not ((declared or raw_code) and argv == outer):", "elif False:",
      "an unmatched command escapes the policy's default", POLICY),
    m("policy-relative-path", "shell/policy.py", 'for d in path_env.split(":") if d.startswith("/")]',
      'for d in path_env.split(":")]', "a relative PATH entry resolves a program from the workspace", POLICY),
    m("wrappers-opaque", "shell/wrappers.py", "    if name in OPAQUE:", "    if False:",
      "an opaque runner (eval-like) is not flagged", POLICY),
    m("wrappers-shell", "shell/wrappers.py", "    elif name in SHELLS:", "    elif False:",
      "`sh -c 'rm x'` hides rm from the rules", POLICY),
    m("wrappers-find-exec", "shell/wrappers.py", '    elif name == "find":', "    elif False:",
      "`find -exec rm` hides rm from the rules", POLICY),
    m("wrappers-git-c", "shell/wrappers.py", '    elif name == "git" and any(', "    elif False and any(",
      "`git -c core.pager=...` is not flagged", POLICY),
    m("wrappers-arbitrary-flags", "shell/wrappers.py",
      "if name in _ARBITRARY_FLAGS and (a in _ARBITRARY_FLAGS[name] or a.startswith(_ARBITRARY_FLAGS[name][0])):",
      "if False:", "`env -S 'rm x'` is not flagged", POLICY),
    m("wrappers-env-assign", "shell/wrappers.py", 'if name == "env" and "=" in a:', "if False:",
      "`env A=1 rm x` hides rm", POLICY),
    # sandbox argv -----------------------------------------------------------------------------------
    m("sandbox-net", "shell/sandbox.py", '    if not plan.network:\n        argv.append("--unshare-net")',
      '    if False:\n        argv.append("--unshare-net")', "the sandbox keeps the network", SANDBOX),
    m("sandbox-git-ro", "shell/sandbox.py", "for g in dict.fromkeys(git_dirs):", "for g in []:",
      ".git stays writable inside a write root", SANDBOX),
    m("sandbox-hide-state", "shell/sandbox.py", '        argv += ["--tmpfs", h]', "        pass",
      "the state directory is visible in the sandbox", SANDBOX),
    m("sandbox-clearenv", "shell/sandbox.py", '"--chdir", plan.cwd, "--clearenv"]', '"--chdir", plan.cwd]',
      "the host's environment (secrets) leaks into the sandbox", SANDBOX,
      equivalent="bwrap is itself started with only the runtime's environment (shell/execute.py env=)"),
    m("sandbox-pid-ns", "shell/sandbox.py", '"--unshare-user", "--unshare-pid", ', '"--unshare-user", ',
      "the sandbox sees (and can signal) host processes", SANDBOX),
    m("sandbox-read-ro", "shell/sandbox.py", '    for p in plan.read:\n        argv += ["--ro-bind", p, p]',
      '    for p in plan.read:\n        argv += ["--bind", p, p]', "a read-only root is writable in the sandbox",
      SANDBOX),
    m("sandbox-probe", "shell/sandbox.py", "    if err is not None:\n        raise SandboxUnavailable",
      "    if False:\n        raise SandboxUnavailable", "a failed bwrap probe does not stop the run", SANDBOX),
    # trust ------------------------------------------------------------------------------------------
    m("authority-always", "authority.py", "return person_named or Approvals(state_dir).approves(path, content)",
      "return True", "every file in a root has authority", TRUST),
    m("approvals-content", "state/approvals.py", 'return entry is not None and entry.get("sha256") == digest(content)',
      "return entry is not None", "an approval holds for changed content", TRUST),
    m("approvals-format", "state/approvals.py",
      'data.get("files") if isinstance(data, dict) and data.get("format") == FORMAT else None',
      'data.get("files") if isinstance(data, dict) else None', "an approvals file of another format counts",
      TRUST),
]


def expand(tests: tuple[str, ...]) -> list[str]:
    out: list[str] = []
    for t in tests:
        hits = sorted(str(p.relative_to(REPO)) for p in REPO.glob(t)) if "*" in t else [t]
        out += [h for h in hits if (REPO / h).exists() and h not in out]
    return out


def run_tests(src: Path, tests: list[str], timeout: float) -> tuple[str, float, str]:
    env = {**os.environ, "PYTHONPATH": f"{src}{os.pathsep}{REPO}", "PYTHONDONTWRITEBYTECODE": "1"}
    cmd = [PY, "-m", "pytest", "-x", "-q", "-p", "no:randomly", "-n", "0", *tests]
    t0 = time.monotonic()
    try:
        proc = subprocess.run(cmd, cwd=REPO, env=env, capture_output=True, text=True, timeout=timeout)
    except subprocess.TimeoutExpired:
        return "killed (timeout)", time.monotonic() - t0, ""
    took = time.monotonic() - t0
    tail = (proc.stdout + proc.stderr).strip().splitlines()[-1:] or [""]
    if proc.returncode == 0:
        return "survived", took, tail[0]
    if proc.returncode == 1:
        return "killed", took, tail[0]
    return f"error (pytest exit {proc.returncode})", took, tail[0]


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--only", default="", help="run the mutants whose id starts with this")
    ap.add_argument("--write", action="store_true", help="rewrite docs/mutation.md with the result")
    ap.add_argument("--list", action="store_true", help="list the mutants and exit")
    ap.add_argument("--timeout", type=float, default=900.0, help="seconds per mutant's test run")
    args = ap.parse_args()
    chosen = [x for x in MUTANTS if x.id.startswith(args.only)]
    if args.list:
        for x in chosen:
            print(f"{x.id:28} {x.file:22} {x.why}")
        return 0
    rows: list[tuple[Mutant, str, float]] = []
    with tempfile.TemporaryDirectory(prefix="tooldeck-mutation-") as tmp:
        src = Path(tmp) / "src"
        shutil.copytree(REPO / "src", src, ignore=shutil.ignore_patterns("__pycache__", "*.egg-info"))
        baseline: dict[tuple[str, ...], str] = {}
        for x in chosen:
            tests = expand(x.tests)
            key = tuple(tests)
            if key not in baseline:  # the tests must pass on the real code, or a kill means nothing
                baseline[key], _, tail = run_tests(src, tests, args.timeout)
                if baseline[key] != "survived":
                    print(f"baseline of {x.id}'s tests is not green ({baseline[key]}: {tail})", file=sys.stderr)
            target = src / "tooldeck" / x.file
            original = target.read_text()
            if original.count(x.old) != 1:
                rows.append((x, "stale", 0.0))
                print(f"{x.id:28} stale (its text is not in {x.file} exactly once)", flush=True)
                continue
            if baseline[key] != "survived":
                rows.append((x, "not run (tests not green)", 0.0))
                continue
            target.write_text(original.replace(x.old, x.new))
            try:
                outcome, took, tail = run_tests(src, tests, args.timeout)
            finally:
                target.write_text(original)
            if outcome == "survived" and x.equivalent:
                outcome = f"survived, equivalent: {x.equivalent}"
            rows.append((x, outcome, took))
            print(f"{x.id:28} {outcome[:18]:18} {took:6.1f}s  {tail}", flush=True)
    report = render(rows)
    print(report)
    if args.write:
        (REPO / "docs" / "mutation.md").write_text(report)
    return 0 if all(outcome.startswith(("killed", "survived, equivalent")) for _, outcome, _ in rows) else 1


def render(rows: list[tuple[Mutant, str, float]]) -> str:
    killed = sum(outcome.startswith("killed") for _, outcome, _ in rows)
    lines = [
        "# Mutation pass",
        "",
        "`scripts/mutation.py` applies each mutant below to a copy of `src/` and runs the tests listed for it",
        "(`-x`, serially). *killed*: the tests failed, as they should. *survived*: a guard can be removed",
        "without any test noticing; add a test (*equivalent*: another layer makes this one unobservable, said why).",
        "*stale*: the mutant's text is no longer in the file: update it.",
        "Re-run with `scripts/mutation.py --write` after changing one of these modules.",
        "",
        f"Last run: {time.strftime('%Y-%m-%d')}, {killed} of {len(rows)} killed.",
        "",
        "| mutant | file | what it breaks | result | seconds |",
        "| --- | --- | --- | --- | --- |",
    ]
    for x, outcome, took in rows:
        cells = [f"`{x.id}`", f"`{x.file}`", x.why, outcome, f"{took:.0f}"]
        lines.append("| " + " | ".join(c.replace("|", "\\|") for c in cells) + " |")
    return "\n".join(lines) + "\n"


if __name__ == "__main__":
    sys.exit(main())
