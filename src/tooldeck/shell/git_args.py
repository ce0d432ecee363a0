"""Which git command lines only read: the git part of :mod:`tooldeck.shell.safe_args`.

git is on the read-only list because ``git log``/``diff``/``status`` are how a
model understands a repository, but git is also a program runner: options
name commands (``--upload-pack``, ``--exec``, ``grep -O``), configuration
names commands (``core.fsmonitor``, ``diff.external``, hooks), and most
subcommands write. So git is vouched for only when

* the subcommand is one that reads (:data:`READ_SUBCOMMANDS`; ``branch`` and
  ``tag`` only as listings, ``stash``/``worktree``/``remote``/``config`` only
  in their listing or getting forms);
* no option names a command, a pager or an output file (:data:`DANGEROUS`),
  whatever the subcommand, abbreviated or not;
* the repository git will open is not one a model could have made: a git
  directory inside a root that is not under a ``.git`` directory (a model
  writes ``HEAD``, ``objects/``, ``refs/`` and a ``config`` with
  ``core.fsmonitor`` using the file tools, then ``git --git-dir=that status``
  or ``cwd=that`` would run it). The file tools refuse to create ``.git``, so
  a path under ``.git`` is the person's.
"""

from __future__ import annotations

import os
from collections.abc import Sequence
from dataclasses import dataclass

from tooldeck.shell.argscan import OPEN, OptSpec, Token, is_prefix_of, operands, option_words, scan

# subcommand -> why it only reads (the generic checks below still apply)
READ_SUBCOMMANDS: dict[str, str] = {
    "status": "shows the working tree state",
    "log": "shows history", "show": "shows objects", "diff": "compares trees and files",
    "diff-tree": "compares trees", "diff-index": "compares a tree with the index",
    "diff-files": "compares the index with files", "whatchanged": "shows history",
    "shortlog": "summarises history", "range-diff": "compares two ranges", "cherry": "lists unmerged commits",
    "rev-parse": "names objects", "rev-list": "lists commits", "describe": "names a commit",
    "name-rev": "names commits", "merge-base": "finds a common ancestor", "show-branch": "lists branches",
    "show-ref": "lists references", "for-each-ref": "lists references", "ls-files": "lists indexed files",
    "ls-tree": "lists a tree", "cat-file": "prints objects", "blame": "annotates lines",
    "annotate": "annotates lines", "grep": "searches tracked files", "count-objects": "counts objects",
    "check-ignore": "explains ignore rules", "check-attr": "shows attributes", "version": "prints the version",
    "var": "prints git variables", "reflog": "shows the reflog (not expire/delete/drop)",
    "branch": "lists branches (not create/rename/delete)", "tag": "lists tags (not create/delete)",
    "stash": "list and show only", "worktree": "list only", "remote": "lists remotes (no network: not show)",
    "config": "gets and lists values (never sets)",
}  # fmt: skip

# subcommands that run commands given to them (or set commands later git calls run)
RUNNERS: dict[str, str] = {
    "submodule": "runs commands (foreach) and clones with their own config",
    "rebase": "runs commands (--exec)", "bisect": "runs commands (run)", "filter-branch": "runs filter commands",
    "filter-repo": "runs filter code", "difftool": "runs diff tools (--extcmd)", "mergetool": "runs merge tools",
    "send-email": "runs programs and sends mail", "instaweb": "runs a web server", "daemon": "runs a server",
    "web--browse": "runs a browser", "help": "runs a manual viewer or browser", "hook": "runs hooks",
    "clone": "can set configuration and templates (commands) for the new repository",
    "init": "can copy templates (hooks) into the new repository",
    "maintenance": "runs tasks and can schedule them", "credential": "runs credential helpers",
    "p4": "runs p4", "svn": "runs svn", "cvsimport": "runs cvs", "archimport": "runs tla",
    "upload-pack": "serves packs (runs hooks)", "receive-pack": "runs hooks", "shell": "runs commands",
}  # fmt: skip

# long options that are never vouched for, in any subcommand: option -> (effect, why)
DANGEROUS: dict[str, tuple[str, str]] = {
    "upload-pack": ("runs", "names the program git runs as upload-pack"),
    "receive-pack": ("runs", "names the program git runs as receive-pack"),
    "exec": ("runs", "names the program git runs on the other side"),
    "open-files-in-pager": ("runs", "opens the matches in a pager program"),
    "output": ("writes", "writes the output to a file"),
    "ext-diff": ("unknown", "runs external diff programs"),
    "textconv": ("unknown", "runs text-conversion programs"),
    "filters": ("unknown", "runs filter programs"),
    "paginate": ("unknown", "runs a pager"),
}
_GLOBAL_VALUE = {"-C", "--git-dir", "--work-tree", "--namespace", "--attr-source", "--list-cmds", "--super-prefix"}
_GLOBAL_FLAGS = {
    "-P", "--no-pager", "--no-replace-objects", "--literal-pathspecs", "--glob-pathspecs", "--noglob-pathspecs",
    "--icase-pathspecs", "--no-optional-locks", "--no-lazy-fetch", "--no-advice", "--bare", "-v", "--version",
    "--html-path", "--man-path", "--info-path",
}  # fmt: skip
_LISTING = {
    "branch": ({"a", "r", "v", "l", "i"}, {"all", "remotes", "verbose", "list", "show-current", "color",
                                            "no-color", "column", "no-column", "ignore-case", "omit-empty",
                                            "contains", "no-contains", "merged", "no-merged", "points-at", "sort",
                                            "format", "abbrev", "no-abbrev"}),
    "tag": ({"l", "n", "i"}, {"list", "color", "no-color", "column", "no-column", "ignore-case", "omit-empty",
                              "contains", "no-contains", "merged", "no-merged", "points-at", "sort", "format"}),
}  # fmt: skip
_LIST_MODE = {"l", "list", "contains", "no-contains", "merged", "no-merged", "points-at", "n"}
_CONFIG_READ = {"get", "get-all", "get-regexp", "get-urlmatch", "get-color", "get-colorbool", "list", "l"}
_CONFIG_WRITE = {"add", "unset", "unset-all", "replace-all", "rename-section", "remove-section", "edit", "e"}
_SUB_SPEC = OptSpec(short_value="eABCmnSGX", long_value=frozenset({"format", "pretty", "grep", "author"}))
_SANDBOX_PRIVATE = ("/tmp", "/var/tmp", "/run", "/dev", "/proc")


@dataclass(frozen=True, slots=True)
class GitFinding:
    arg: str
    effect: str  # "runs" | "writes" | "unknown"
    reason: str


def _inside(path: str, root: str) -> bool:
    return path == root or path.startswith(root.rstrip("/") + "/")


def own_git_dirs(roots: Sequence[str]) -> list[str]:
    """The roots' own repositories (the sandbox binds them read-only and the
    file tools refuse ``.git``): each root's git directory and, for a
    worktree, its repository's."""
    out: list[str] = []
    for r in roots:
        g = discover(r)
        if g is None:
            continue
        g = os.path.realpath(g)
        out.append(g)
        if os.path.basename(os.path.dirname(g)) == "worktrees":
            out.append(os.path.dirname(os.path.dirname(g)))
    return out


def git_dir_trust(path: str, roots: Sequence[str]) -> str:
    """``"trusted"``: a root's own repository, or one outside every root and
    outside the sandbox's private directories; ``"nested"``: another ``.git``
    inside a root (the person's, or made by a command that could write
    there); ``"untrusted"``: anything else inside a root, or a path that does
    not exist yet (an earlier step of the same command may make it)."""
    if not os.path.exists(path):
        return "untrusted"
    real = os.path.realpath(path)
    if any(_inside(real, g) for g in own_git_dirs(roots)):
        return "trusted"
    if any(_inside(real, r) for r in roots):
        return "nested" if ".git" in real.split("/") else "untrusted"
    return "untrusted" if any(_inside(real, p) for p in _SANDBOX_PRIVATE) else "trusted"


def _looks_like_git_dir(d: str) -> bool:
    return os.path.exists(os.path.join(d, "HEAD")) and (
        os.path.isdir(os.path.join(d, "objects")) or os.path.exists(os.path.join(d, "commondir"))
    )


def discover(start: str) -> str | None:
    """The git directory git would find from ``start`` (``.git``, a ``.git``
    file's target, or a bare repository), walking up; None if there is none."""
    d = os.path.realpath(start)
    while True:
        dot = os.path.join(d, ".git")
        if os.path.isdir(dot):
            return dot
        if os.path.isfile(dot):
            try:
                with open(dot, encoding="utf-8", errors="replace") as fh:  # a gitfile: git follows it too
                    line = fh.readline(4096).strip()
            except OSError:
                return dot
            return os.path.normpath(os.path.join(d, line[7:].strip())) if line.startswith("gitdir:") else dot
        if _looks_like_git_dir(d):
            return d
        parent = os.path.dirname(d)
        if parent == d:
            return None
        d = parent


def _global(args: list[str], cwd: str, roots: Sequence[str]) -> tuple[int, list[GitFinding]]:
    """Read git's own options (before the subcommand); index of the subcommand."""
    out: list[GitFinding] = []
    where, git_dir, bare = cwd, None, False
    i = 0
    while i < len(args):
        a = args[i]
        name, eq, value = a.partition("=")
        if not a.startswith("-"):
            break
        if OPEN in a:
            out.append(GitFinding(a, "runs", "is filled in at run time (it could be an option that runs a program)"))
            i += 1
            continue
        if a == "-c" or a.startswith("-c") or name == "--config-env":
            out.append(GitFinding(a, "runs", "sets configuration, which can name a command to run"))
            i += 1 if (eq or len(a) > 2) else 2
            continue
        if name == "--exec-path" and eq:
            out.append(GitFinding(a, "runs", "makes git run its subcommands from another directory"))
        elif a in ("-p", "--paginate", "-h", "--help"):
            out.append(GitFinding(a, "unknown", "runs a pager or a manual viewer"))
        elif name in _GLOBAL_VALUE:
            if not eq:
                value = args[i + 1] if i + 1 < len(args) else ""
                i += 1
            if name == "-C":
                where = os.path.join(where, value)
            elif name == "--git-dir":
                git_dir = os.path.join(where, value)
        elif a == "--bare":
            bare = True
        elif a not in _GLOBAL_FLAGS and name != "--exec-path":
            out.append(GitFinding(a, "unknown", "is not a git option tooldeck knows to be harmless"))
        i += 1
    repo = git_dir or (where if bare else None)
    if repo is None and os.path.isdir(where):
        repo = discover(where)
    if repo is not None or not os.path.isdir(where):
        trust = git_dir_trust(repo or where, roots)
        if trust == "untrusted":
            out.append(GitFinding(repo or where, "runs", "is a git directory a model could have made (inside a "
                                  "root, or not there yet): its config can name commands git runs"))  # fmt: skip
        elif trust == "nested":
            out.append(GitFinding(repo or where, "unknown", "is a repository nested inside a root, not the root's "
                                  "own: its config is not vouched for"))  # fmt: skip
    return i, out


def _listing(sub: str, toks: list[Token]) -> list[GitFinding]:
    shorts, longs = _LISTING[sub]
    out: list[GitFinding] = []
    names = {t.name for t in toks if t.kind in ("short", "long")}
    for t in toks:
        if (t.kind == "short" and t.name not in shorts) or (t.kind == "long" and t.name not in longs):
            out.append(GitFinding(t.shown, "writes", f"is not a listing option of git {sub}"))
    if operands(toks) and not names & _LIST_MODE:
        out.append(GitFinding(operands(toks)[0].name, "writes", f"git {sub} NAME creates it (list with --list)"))
    return out


def _subcommand_form(sub: str, rest: list[str]) -> list[GitFinding]:
    toks = scan(rest, _SUB_SPEC)
    ops = [t.name for t in operands(toks)]
    first = ops[0] if ops else None
    if sub in _LISTING:
        return _listing(sub, toks)
    if sub == "reflog" and first in ("expire", "delete", "drop"):
        return [GitFinding(first, "writes", "changes the reflog")]
    if sub == "stash" and first not in ("list", "show"):  # a bare `git stash` pushes
        return [GitFinding(first or "stash", "writes", "changes the stash (only list and show are vouched for)")]
    if sub == "worktree" and first != "list":
        return [GitFinding(first or "worktree", "writes", "changes worktrees (only list is vouched for)")]
    if sub == "remote" and first not in (None, "get-url"):
        return [GitFinding(first, "writes", "changes or contacts a remote (only listing and get-url)")]
    if sub == "config":
        names = {t.name for t in toks if t.kind in ("short", "long")}
        if names & _CONFIG_WRITE or not (names & _CONFIG_READ or first in ("get", "list")):
            return [GitFinding("config", "runs", "sets configuration, which can name commands later git calls "
                               "run (only --get/--list, get/list are vouched for)")]  # fmt: skip
    return []


def check(args: Sequence[str], cwd: str, roots: Sequence[str]) -> list[GitFinding]:
    """Why ``git ARGS`` is not a read-only git command (empty: it is)."""
    args = list(args)
    start, out = _global(args, cwd, roots)
    if start >= len(args):
        return out
    sub, rest = args[start], args[start + 1 :]
    if OPEN in sub:
        out.append(GitFinding(sub, "runs", "is filled in at run time (any subcommand)"))
    elif sub in RUNNERS:
        out.append(GitFinding(sub, "runs", RUNNERS[sub]))
    elif sub not in READ_SUBCOMMANDS:
        out.append(GitFinding(sub, "unknown", "is not a git subcommand that only reads"))
    dash = rest.index("--") if "--" in rest else len(rest)
    for tok in option_words(rest[:dash], _SUB_SPEC):
        if OPEN in tok.name:
            out.append(GitFinding(rest[tok.index], "runs", "is filled in at run time (it could be an option "
                                  "that runs a program)"))  # fmt: skip
        hit = is_prefix_of(tok, frozenset(DANGEROUS))
        if hit:
            effect, why = DANGEROUS[hit]
            out.append(GitFinding(rest[tok.index], effect, why))
    if sub == "grep":  # -O[pager] may sit anywhere in a cluster (-nO, -nOvim): every letter is looked at
        out += [GitFinding(a, "runs", "opens the matches in a pager program (-O)")
                for a in rest[:dash] if a[:1] == "-" and a[1:2] != "-" and "O" in a]  # fmt: skip
    return out + (_subcommand_form(sub, rest[:dash]) if sub in READ_SUBCOMMANDS else [])
