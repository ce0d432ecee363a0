"""Finding a repository and naming its commits safely.

:func:`open_repo` turns a directory into a :class:`Repo` (toplevel, git
directories, a runner with the repository's filter drivers blanked).
:func:`resolve_commit` is the only way a model-supplied revision reaches git:
it is checked for a leading ``-`` and resolved with ``rev-parse --verify
--end-of-options`` to an object id, and later commands only ever see that id.
Worktrees and Jujutsu (``jj``) checkouts are detected here too.
"""

from __future__ import annotations

import os
import shutil
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field, replace

from tooldeck.core.errors import ErrorCode, ToolError
from tooldeck.git.discovery import DISCOVERY, Found, config_listing
from tooldeck.git.runner import DEFAULT_TIMEOUT, Git, git_message, refuse_option

_POOL = ThreadPoolExecutor(max_workers=4, thread_name_prefix="tdk-git-config")
DEFAULT_BRANCH_CANDIDATES = ("main", "master", "trunk", "develop")
EMPTY_TREES = {  # object format -> id of the empty tree
    "sha1": "4b825dc642cb6eb9a060e54bf8d69288fbee4904",
    "sha256": "6ef19b41225c5369f1c104d45d8d85efa9b057b53b14b4b9b939dd74decc5321",
}


@dataclass(frozen=True, slots=True)
class Worktree:
    path: str
    head: str | None = None
    branch: str | None = None  # short name, None when detached
    bare: bool = False
    locked: bool = False
    prunable: bool = False

    def describe(self) -> str:
        what = f"branch {self.branch}" if self.branch else ("bare" if self.bare else "detached HEAD")
        flags = "".join([", locked" if self.locked else "", ", prunable" if self.prunable else ""])
        return f"{self.path} ({what}{flags})"


@dataclass(frozen=True)
class Repo:
    toplevel: str  # canonical absolute path of this checkout
    git_dir: str  # this checkout's git directory (.git or .git/worktrees/NAME)
    common_dir: str  # the repository's shared git directory
    git: Git
    jj_root: str | None = None  # a colocated Jujutsu checkout, if any
    _cache: dict[str, object] = field(default_factory=dict, compare=False, repr=False)

    @property
    def is_linked_worktree(self) -> bool:
        return os.path.realpath(self.git_dir) != os.path.realpath(self.common_dir)

    def path_of(self, rel: str) -> str:
        return os.path.join(self.toplevel, rel)


def reading_only(repo: Repo, folders: list[str] | None) -> Repo:
    """``repo`` whose git reads of the working tree are held beneath
    ``folders`` (repository-relative: the roots' folders when the repository
    is larger than the roots); the whole checkout when None."""
    if not folders:
        return repo
    reads = tuple(os.path.normpath(os.path.join(repo.toplevel, f)) for f in folders)
    return replace(repo, git=replace(repo.git, reads=reads))


def nearest_holding(start: str, name: str, exists: Callable[[str], bool] = os.path.lexists) -> str | None:
    """The nearest directory at or above ``start`` (taken as given) where
    ``exists(dir/name)`` holds: how git and jj find their checkout."""
    d = start
    while True:
        if exists(os.path.join(d, name)):
            return d
        parent = os.path.dirname(d)
        if parent == d:
            return None
        d = parent


def find_jj(start: str) -> str | None:
    """The nearest directory at or above ``start`` holding a ``.jj`` folder."""
    return nearest_holding(os.path.realpath(start), ".jj", os.path.isdir)


def jj_installed() -> bool:
    return shutil.which("jj") is not None


def _not_a_repo(directory: str, shown: str, message: str) -> ToolError:
    jj = find_jj(directory)
    if jj is not None:
        if jj_installed():
            hint = "tooldeck reads jj repositories through their git backend; colocate it (`jj git init --colocate`)"
        else:
            hint = "`jj` is not installed here; install it or colocate the repository with git"
        return ToolError(ErrorCode.UNSUPPORTED, f"{shown} is a Jujutsu (jj) repository without a git checkout: {hint}")
    return ToolError(
        ErrorCode.NOT_FOUND,
        f"{shown} is not inside a git repository ({message}); pass repo_root= a directory of a git checkout "
        "(a root id or a path), or initialise one with `git init`",
    )


def open_repo(directory: str, *, shown: str | None = None, timeout: float = DEFAULT_TIMEOUT) -> Repo:
    """The repository whose working tree contains ``directory``: what git
    said the last time, while the files that answer depends on are unchanged
    (:mod:`tooldeck.git.discovery`), else asked anew."""
    shown = shown or directory
    if not os.path.isdir(directory):
        raise ToolError(ErrorCode.NOT_FOUND, f"{shown} is not a directory; pass repo_root= a checkout directory")
    found = DISCOVERY.get(directory)
    if found is None:
        found = _discover(directory, shown, timeout)
    toplevel, git_dir, common_dir = found.lines[:3]
    check_git_entry(toplevel, git_dir, shown)
    jj_root = toplevel if os.path.isdir(os.path.join(toplevel, ".jj")) else None
    repo = Repo(toplevel, git_dir, common_dir, Git(toplevel, timeout, found.filters), jj_root)
    if found.lines[3].strip() in EMPTY_TREES:
        repo._cache["empty_tree"] = EMPTY_TREES[found.lines[3].strip()]
    head = found.lines[4:]
    if head:
        repo._cache["head"] = head[0].strip()
        if head[1].startswith("refs/heads/"):
            repo._cache["branch"] = head[1].strip().removeprefix("refs/heads/")
        elif head[1].strip() == "HEAD":  # detached
            repo._cache["branch"] = None
    return repo


def _discover(directory: str, shown: str, timeout: float) -> Found:
    """Ask git: ``rev-parse`` for the checkout (HEAD's commit and branch in
    the same process) beside the configuration listing (the filter drivers)."""
    pre = DISCOVERY.before(directory)  # before git reads anything: what is kept is what git read
    probe = Git(directory, timeout)
    # the configuration is listed meanwhile (same repository, read-only): one process less to wait for
    listing = _POOL.submit(_config_listing, probe)
    discover = ["rev-parse", "--path-format=absolute", "--show-toplevel", "--absolute-git-dir", "--git-common-dir"]
    discover.append("--show-object-format")
    # HEAD's commit and branch in the same process (spares two); an unborn branch, a
    # file named HEAD or no repository at all fail it: then ask without them
    res = probe.run([*discover, "HEAD^{commit}", "--symbolic-full-name", "HEAD"], ok=(0, 128))
    head: list[str] = []
    if res.code == 0 and len(res.text.splitlines()) == 6:
        head = res.text.splitlines()[4:]
    else:
        res = probe.run(discover, ok=(0, 128))
    if res.code != 0:
        msg = git_message(res.stderr)
        if "must be run in a work tree" in msg:
            raise ToolError(ErrorCode.UNSUPPORTED, f"{shown} is a bare repository (no working tree); use a checkout")
        if "dubious ownership" in msg:
            raise ToolError(ErrorCode.GIT_ERROR, f"git refuses {shown}: {msg}")
        raise _not_a_repo(directory, shown, msg)
    lines = res.text.splitlines()
    if len(lines) < 4:
        raise ToolError(ErrorCode.GIT_ERROR, f"git rev-parse gave unexpected output for {shown}: {res.text[:200]!r}")
    where = tuple(os.path.realpath(x) for x in lines[:3])
    filters, files = listing.result()
    found = Found((*where, lines[3].strip(), *(h.strip() for h in head)), filters)
    if files is not None:
        DISCOVERY.keep(directory, pre, found, files)
    return found


def _refuse_entry(shown: str, why: str) -> ToolError:
    return ToolError(
        ErrorCode.DENIED,
        f"git at {shown}: {why}; tooldeck only reads a repository whose git directory belongs to this checkout",
    )


def _points_back(git_dir: str, entry: str, toplevel: str) -> bool:
    """Whether ``git_dir`` registers the checkout whose ``.git`` file is
    ``entry``: a linked worktree's ``<gitdir>/gitdir`` names the file; a
    submodule's ``<gitdir>/config`` has ``core.worktree`` naming the checkout."""
    try:
        with open(os.path.join(git_dir, "gitdir"), encoding="utf-8", errors="surrogateescape") as fh:
            named = fh.read().strip()
        if named and os.path.realpath(os.path.join(git_dir, named)) == os.path.realpath(entry):
            return True
    except OSError:
        pass
    try:
        # run from the checkout, not the git directory: git would chdir to the
        # core.worktree it names, which a confining namespace may not hold
        res = Git(toplevel).run(
            ["config", "--file", os.path.join(git_dir, "config"), "--get", "core.worktree"], ok=(0, 1)
        )
    except ToolError:
        return False
    worktree = res.text.strip()
    return bool(worktree) and os.path.realpath(os.path.join(git_dir, worktree)) == toplevel


def check_git_entry(toplevel: str, git_dir: str, shown: str) -> None:
    """Refuse a checkout whose git directory is not its own (SPEC §3).

    A ``.git`` file (``gitdir: /elsewhere``) written into a root, or a
    ``core.worktree`` pointing out of it, would make git print another
    repository's history and files. The ``.git`` entry of the working tree
    must be the git directory itself, or a file naming a git directory that
    points back to it (git's own worktree and submodule registration)."""
    entry = os.path.join(toplevel, ".git")
    if os.path.isdir(entry) and not os.path.islink(entry):
        if os.path.realpath(entry) != git_dir:
            raise _refuse_entry(shown, f"its git directory is {git_dir}, not {entry}")
        return
    if not os.path.isfile(entry) or os.path.islink(entry):
        raise _refuse_entry(shown, f"the work tree {toplevel} has no .git of its own (core.worktree points elsewhere)")
    try:
        with open(entry, encoding="utf-8", errors="surrogateescape") as fh:
            first = fh.readline().strip()
    except OSError as exc:
        raise _refuse_entry(shown, f"{entry} cannot be read ({exc.strerror})") from exc
    named = first.removeprefix("gitdir:").strip() if first.startswith("gitdir:") else ""
    target = os.path.realpath(os.path.join(toplevel, named)) if named else ""
    if target != git_dir or not _points_back(git_dir, entry, toplevel):
        raise _refuse_entry(
            shown,
            f"{entry} names the git directory {named or '(none)'}, which does not point back to it "
            "(not a registered worktree or submodule)",
        )


def _config_listing(git: Git) -> tuple[tuple[str, ...], tuple[str, ...] | None]:
    """``-c`` overrides that disable every clean/smudge/process filter driver
    the repository's configuration declares (they are programs), and the
    files the configuration came from or includes (None: the listing cannot
    be relied on for keeping the answer)."""
    res = git.run(["config", "--list", "--show-origin", "-z"], ok=(0, 1, 128))
    filters, files = config_listing(res.text, git.cwd)
    return filters, files if res.code == 0 else None


def worktrees(repo: Repo) -> list[Worktree]:
    """Every checkout of the repository; the first is the main one."""
    cached = repo._cache.get("worktrees")
    if cached is not None:
        return cached  # type: ignore[return-value]
    linked_dir = os.path.join(repo.common_dir, "worktrees")
    if not repo.is_linked_worktree and not (os.path.isdir(linked_dir) and os.listdir(linked_dir)):
        # no linked worktree (the common case): spare a git process; callers
        # only need the path here, so head and branch are left unknown
        only = [Worktree(repo.toplevel)]
        repo._cache["worktrees"] = only
        return only
    res = repo.git.run(["worktree", "list", "--porcelain", "-z"])
    out: list[Worktree] = []
    cur: dict[str, object] = {}

    def flush() -> None:
        if "path" in cur:
            out.append(Worktree(**cur))  # type: ignore[arg-type]
        cur.clear()

    for token in res.text.split("\0"):
        if not token:
            flush()
            continue
        key, _, value = token.partition(" ")
        if key == "worktree":
            flush()
            cur["path"] = os.path.realpath(value) if os.path.exists(value) else value
        elif key == "HEAD":
            cur["head"] = value
        elif key == "branch":
            cur["branch"] = value.removeprefix("refs/heads/")
        elif key in ("bare", "locked", "prunable"):
            cur[key] = True
    flush()
    repo._cache["worktrees"] = out
    return out


def head_commit(repo: Repo) -> str | None:
    """The object id of HEAD, or None on an unborn branch (as :func:`open_repo` found it)."""
    if "head" in repo._cache:
        return str(repo._cache["head"])
    res = repo.git.run(["rev-parse", "--verify", "--quiet", "HEAD^{commit}"], ok=(0, 1, 128))
    return res.text.strip() or None if res.code == 0 else None


def current_branch(repo: Repo) -> str | None:
    """HEAD's branch (short name), None when detached or not a branch."""
    if "branch" in repo._cache:
        found = repo._cache["branch"]
        return str(found) if found is not None else None
    res = repo.git.run(["symbolic-ref", "--quiet", "--short", "HEAD"], ok=(0, 1))
    return res.text.strip() or None if res.code == 0 else None


def resolve_commit(repo: Repo, rev: str, field_name: str) -> str:
    """Resolve a model-supplied revision to a commit id, refusing options."""
    rev = refuse_option(rev, field_name)
    res = repo.git.run(["rev-parse", "--verify", "--quiet", "--end-of-options", rev + "^{commit}"], ok=(0, 1, 128))
    sha = res.text.strip()
    if res.code != 0 or not sha:
        raise ToolError(
            ErrorCode.GIT_ERROR,
            f"`{field_name}`: {rev!r} is not a commit in {repo.toplevel} (unknown revision or path); "
            "use a branch, tag, commit id or HEAD~N (see op=log)",
        )
    return sha


def short(repo: Repo, sha: str) -> str:
    return sha[:7] if len(sha) >= 7 else sha


def merge_base(repo: Repo, a: str, b: str) -> str:
    res = repo.git.run(["merge-base", a, b], ok=(0, 1))
    if res.code != 0 or not res.text.strip():
        raise ToolError(ErrorCode.GIT_ERROR, f"{short(repo, a)} and {short(repo, b)} have no common ancestor")
    return res.text.strip()


def empty_tree(repo: Repo) -> str:
    """The id of the empty tree (the base for a root commit or unborn HEAD)."""
    cached = repo._cache.get("empty_tree")
    if cached is None:
        res = repo.git.run(["hash-object", "-t", "tree", "--stdin"], input=b"")
        cached = repo._cache["empty_tree"] = res.text.strip()
    return str(cached)


def default_branch(repo: Repo) -> str:
    """The repository's default branch: origin/HEAD's target, else the first
    of main, master, trunk, develop that exists locally (or on origin)."""
    res = repo.git.run(["symbolic-ref", "--quiet", "--short", "refs/remotes/origin/HEAD"], ok=(0, 1, 128))
    if res.code == 0 and res.text.strip():
        return res.text.strip()
    refs = [f"refs/heads/{n}" for n in DEFAULT_BRANCH_CANDIDATES]
    refs += [f"refs/remotes/origin/{n}" for n in DEFAULT_BRANCH_CANDIDATES]
    found = set(repo.git.text(["for-each-ref", "--format=%(refname)", *refs]).split())
    for ref in refs:
        if ref in found:
            return ref.removeprefix("refs/heads/").removeprefix("refs/remotes/")
    raise ToolError(
        ErrorCode.GIT_ERROR,
        f"no default branch found in {repo.toplevel} (no origin/HEAD, and none of "
        f"{', '.join(DEFAULT_BRANCH_CANDIDATES)}); use compare='mergebase:<branch>'",
    )
