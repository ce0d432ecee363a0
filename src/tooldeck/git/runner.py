"""Running git safely: one place decides the argv, the environment and the
error mapping of every git process tooldeck starts.

Why each guard exists:

* a repository's own configuration can name programs git runs while only
  *reading* (an fsmonitor hook, an external diff, textconv and clean/smudge
  filters, a signature checker, a pager). A tool that shows a diff must never
  execute them, so they are switched off with ``-c`` and command-line flags,
  and the filter drivers a repository declares are blanked one by one;
* inherited ``GIT_*`` variables (set when tooldeck runs inside a git hook, or
  by a user's shell) could redirect git to another repository or index, so
  they are dropped and a fixed set is put in their place: no prompts, no
  pager, no editor, no optional locks (a read never rewrites the index under
  a concurrent ``git commit``), literal pathspecs (``:(glob)`` magic in a path
  is just a name), C locale messages;
* a model-supplied value is never placed where git could read it as an
  option: callers validate it with :func:`refuse_option` and put paths after
  ``--``; revisions are resolved to object ids first (see ``repo.py``);
* no shell, a timeout on every call, and git's own stderr in the error;
* git opens working-tree files by name, so a folder swapped for a link
  could lead it out of the roots: it runs confined by the kernel to what
  :func:`tooldeck.git.access.git_policy` allows (read-only).
"""

from __future__ import annotations

import functools
import os
import selectors
import subprocess
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field

from tooldeck.confine import helpers
from tooldeck.confine.policy import Policy
from tooldeck.core.errors import ErrorCode, ToolError, invalid_arguments
from tooldeck.git.access import git_policy

DEFAULT_TIMEOUT = 30.0

# ``-c`` settings applied to every git call.
SAFE_CONFIG: tuple[str, ...] = (
    "core.fsmonitor=false",
    "core.pager=cat",
    "core.quotepath=false",
    "color.ui=never",
    "diff.external=",
    "diff.noprefix=false",
    "diff.mnemonicPrefix=false",
    "diff.relative=false",
    "log.showSignature=false",
    "gc.auto=0",
    "maintenance.auto=false",
)

# Flags every diff-producing command gets (diff, log, show).
DIFF_SAFETY: tuple[str, ...] = ("--no-ext-diff", "--no-textconv", "--color=never")

SAFE_ENV: dict[str, str] = {
    "GIT_TERMINAL_PROMPT": "0",
    "GIT_PAGER": "cat",
    "PAGER": "cat",
    "GIT_EDITOR": "true",
    "GIT_OPTIONAL_LOCKS": "0",
    "GIT_LITERAL_PATHSPECS": "1",
    "GIT_ASKPASS": "true",
    "SSH_ASKPASS": "true",
    "LC_ALL": "C",
    "LANGUAGE": "C",
}


def safe_env(base: dict[str, str] | None = None) -> dict[str, str]:
    """The environment for a git child: the caller's minus every ``GIT_*``
    variable, plus :data:`SAFE_ENV`."""
    src = os.environ if base is None else base
    env = {k: v for k, v in src.items() if not k.startswith("GIT_")}
    env.update(SAFE_ENV)
    return env


def refuse_option(value: str, field_name: str) -> str:
    """Validate a model-supplied revision-like value: non-empty, one line, and
    not starting with ``-`` (git would read it as an option)."""
    if not isinstance(value, str) or not value.strip():
        raise invalid_arguments(f"field `{field_name}` must be a non-empty string", field=field_name)
    value = value.strip()
    if value.startswith("-"):
        raise invalid_arguments(
            f"field `{field_name}` must not start with '-' (got {value[:40]!r}): it is a revision or path, "
            "never a git option",
            field=field_name,
        )
    if any(ord(ch) < 0x20 or ch == "\x7f" for ch in value):
        raise invalid_arguments(f"field `{field_name}` contains control characters", field=field_name)
    return value


@dataclass(frozen=True, slots=True)
class GitResult:
    code: int
    stdout: bytes
    stderr: str

    @property
    def text(self) -> str:
        return self.stdout.decode("utf-8", "replace")


def git_message(stderr: str, limit: int = 600) -> str:
    """git's own complaint, trimmed (its ``hint:`` lines cost tokens)."""
    lines = [ln for ln in stderr.strip().splitlines() if ln.strip() and not ln.startswith("hint:")]
    msg = "\n".join(lines) or "(git printed no message)"
    return msg if len(msg) <= limit else msg[:limit] + "…"


@dataclass(frozen=True)
class Git:
    """A git runner bound to one working directory.

    ``extra_config`` holds per-repository ``-c`` overrides (the blanked filter
    drivers found by :func:`tooldeck.git.repo.open_repo`). ``reads`` are the
    folders of the working tree git may read (default: beneath ``cwd``).
    """

    cwd: str
    timeout: float = DEFAULT_TIMEOUT
    extra_config: tuple[str, ...] = field(default=())
    reads: tuple[str, ...] = field(default=())

    @functools.cached_property
    def policy(self) -> Policy:
        """What this runner's git processes may touch (worked out once per
        runner: a tool call makes its runners anew, so each call sees the
        repository as it is)."""
        return git_policy(self.cwd, self.reads)

    def argv(self, args: Sequence[str]) -> list[str]:
        argv = ["git", "--no-pager"]
        for setting in (*SAFE_CONFIG, *self.extra_config):
            argv += ["-c", setting]
        return [*argv, *args]

    def run(
        self,
        args: Sequence[str],
        *,
        ok: Sequence[int] = (0,),
        input: bytes | None = None,
        stop: Callable[[], None] | None = None,
    ) -> GitResult:
        """Run ``git args`` in :attr:`cwd`; raise ``git_error`` unless the exit
        status is in ``ok``. ``stop`` is called while git runs; what it raises
        kills git and is raised here (:func:`tooldeck.confine.helpers.run`)."""
        try:
            proc = helpers.run(
                self.policy, self.argv(args), cwd=self.cwd, env=safe_env(), input=input, timeout=self.timeout,
                stop=stop,
            )  # fmt: skip
        except subprocess.TimeoutExpired as exc:
            raise self._timed_out(args) from exc
        except OSError as exc:  # no git on PATH, or the directory vanished
            if not os.path.isdir(self.cwd):
                raise ToolError(ErrorCode.NOT_FOUND, f"{self.cwd} no longer exists") from exc
            raise ToolError(
                ErrorCode.UNSUPPORTED, f"git could not be started ({exc.strerror}); is git installed and on PATH?"
            ) from exc
        result = GitResult(proc.returncode, proc.stdout, proc.stderr.decode("utf-8", "replace"))
        if proc.returncode not in ok:
            raise ToolError(ErrorCode.GIT_ERROR, f"git {args[0] if args else ''} failed: {git_message(result.stderr)}")
        return result

    def _timed_out(self, args: Sequence[str]) -> ToolError:
        return ToolError(
            ErrorCode.TIMEOUT,
            f"git {args[0] if args else ''} took longer than {self.timeout:g}s; narrow the request "
            "(a path, a smaller count or compare range)",
        )

    def run_capped(self, args: Sequence[str], max_bytes: int) -> GitResult | None:
        """:meth:`run` (exit status 0 only) that stops reading once git has
        printed more than ``max_bytes``: git is then killed and None returned
        (the caller asks for less). A diff too large to show is never loaded
        whole. Both pipes are read in this thread, against the deadline (no
        timer thread, no temporary file for stderr)."""
        try:
            proc = helpers.popen(
                self.policy, self.argv(args), cwd=self.cwd, env=safe_env(), stdin=subprocess.DEVNULL,
                stdout=subprocess.PIPE, stderr=subprocess.PIPE,
            )  # fmt: skip
        except OSError:
            return self.run(args)  # the same error as an uncapped call
        deadline = time.monotonic() + self.timeout
        try:
            got = _read_capped(proc, max_bytes, deadline)
            if got is None:
                return None
            out, err = got
            helpers.await_exit(proc, deadline)  # woken when git exits (no sleep-polling wait)
        except subprocess.TimeoutExpired as exc:
            raise self._timed_out(args) from exc
        finally:
            if proc.poll() is None:
                proc.kill()
                proc.wait()
            for pipe in (proc.stdout, proc.stderr):
                if pipe is not None:
                    pipe.close()
        result = GitResult(proc.returncode, out, err.decode("utf-8", "replace"))
        if proc.returncode != 0:
            raise ToolError(ErrorCode.GIT_ERROR, f"git {args[0] if args else ''} failed: {git_message(result.stderr)}")
        return result

    def text(self, args: Sequence[str], *, ok: Sequence[int] = (0,), stop: Callable[[], None] | None = None) -> str:
        return self.run(args, ok=ok, stop=stop).text


MAX_STDERR_BYTES = 64 << 10  # git's complaint, kept up to this much


def _read_capped(proc: subprocess.Popen[bytes], max_bytes: int, deadline: float) -> tuple[bytes, bytes] | None:
    """``proc``'s stdout and stderr until both end; None once stdout passes
    ``max_bytes``; :class:`subprocess.TimeoutExpired` at ``deadline``."""
    assert proc.stdout is not None and proc.stderr is not None
    out: list[bytes] = []
    err: list[bytes] = []
    total = err_total = 0
    with selectors.DefaultSelector() as sel:
        sel.register(proc.stdout.fileno(), selectors.EVENT_READ, out)
        sel.register(proc.stderr.fileno(), selectors.EVENT_READ, err)
        while sel.get_map():
            left = deadline - time.monotonic()
            if left <= 0:
                raise subprocess.TimeoutExpired(proc.args, 0)
            for key, _ in sel.select(left):
                chunk = os.read(key.fd, 1 << 16)
                if not chunk:
                    sel.unregister(key.fd)
                elif key.data is out:
                    total += len(chunk)
                    if total > max_bytes:
                        return None
                    out.append(chunk)
                elif err_total < MAX_STDERR_BYTES:
                    err_total += len(chunk)
                    err.append(chunk)
    return b"".join(out), b"".join(err)
