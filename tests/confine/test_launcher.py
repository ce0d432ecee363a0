"""The persistent launcher (ripgrep's namespace, one per root) as a server
uses it, checked from the host: what a helper in it can reach, who can
reach the launcher, that it dies with the server, is replaced when it dies,
and serves many threads at once."""

from __future__ import annotations

import logging
import os
import signal
import subprocess
import sys
import threading
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.support.require import require
from tooldeck.confine import helpers, launcher
from tooldeck.confine.policy import program
from tooldeck.workspace.ripgrep import find_rg, rg_policy

pytestmark = pytest.mark.requires("bwrap", "rg")
SLEEP = "/bin/sleep"
MARK = "/bin/sleep 31.4159"  # a command line no other process has


@pytest.fixture(autouse=True)
def launcher_mode(monkeypatch: pytest.MonkeyPatch) -> Iterator[None]:
    monkeypatch.setenv(helpers.ENV, "launcher")
    helpers.reset_for_tests()
    assert helpers.search_mode() == "launcher"
    yield
    helpers.reset_for_tests()


def _rg() -> str:
    rg = find_rg()
    assert rg is not None
    return rg


def _tree(base: Path, word: str) -> Path:
    base.mkdir(parents=True)
    (base / "f.txt").write_text(f"{word}\n")
    return base


def _launchers() -> launcher.Launchers:
    assert helpers._launchers is not None
    return helpers._launchers


def _search(root: Path, *args: str, timeout: float = 60) -> subprocess.CompletedProcess[bytes]:
    rg = _rg()
    return helpers.run(
        rg_policy(rg, str(root)), [rg, "--no-config", *args], cwd=str(root), many_files=True, timeout=timeout
    )


def _gone(pid: int, seconds: float = 10.0) -> bool:
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        try:
            state = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
        except OSError:
            return True
        if state == "Z":
            return True
        time.sleep(0.05)
    return False


def test_ripgrep_reads_its_root_and_nothing_outside(tmp_path: Path) -> None:
    root, outside = _tree(tmp_path / "root", "word in"), _tree(tmp_path / "outside", "word out")
    (root / "out").symlink_to(outside)
    done = _search(root, "-l", "word", ".", "out/f.txt", str(outside), "/etc/passwd", "/proc/self/environ")
    assert done.stdout.decode().split() == ["./f.txt"]
    assert done.stderr.count(b"No such file or directory") == 4  # not there at all, in the namespace
    followed = _search(root, "--follow", "-l", "word")  # a link followed by rg itself leads nowhere
    assert followed.stdout == b"f.txt\n"
    devices = helpers.run(program("ls", "/bin/ls", read=(str(root),)), ["/bin/ls", "/dev"], many_files=True)
    assert devices.stdout == b"null\n"  # no /dev/tty: no way to the person's terminal


def test_a_helper_holds_no_capability_and_no_descriptor_but_its_three(tmp_path: Path) -> None:
    root = _tree(tmp_path / "root", "x")
    proc = helpers.popen(program("sleep", SLEEP, read=(str(root),)), [SLEEP, "30"], many_files=True, cwd=str(root))
    try:
        # the helper as it sleeps: before its exec it holds the exec-status pipe, and just after it the
        # dynamic loader opens its libraries as fd 3 (seen under load); an inherited descriptor stays
        deadline = time.monotonic() + 20
        while True:
            status = Path(f"/proc/{proc.pid}/status").read_text()
            fds = sorted(int(fd) for fd in os.listdir(f"/proc/{proc.pid}/fd"))
            if fds == [0, 1, 2] or time.monotonic() > deadline:
                break
            time.sleep(0.02)
    finally:
        proc.kill()
        proc.wait(10)
    fields = dict(line.split(":\t", 1) for line in status.splitlines() if ":\t" in line)
    assert fields["CapEff"] == fields["CapPrm"] == fields["CapBnd"] == "0000000000000000"
    assert fields["NoNewPrivs"] == "1"
    assert fds == [0, 1, 2]  # the launcher's channel is not inherited


def test_only_the_server_holds_the_channel(tmp_path: Path) -> None:
    """The pair has no name, and its two ends are held by this process and
    the launcher alone (every process's descriptors read from /proc)."""
    root = _tree(tmp_path / "root", "word")
    assert _search(root, "-l", "word").stdout == b"f.txt\n"
    (ln,) = _launchers()._by_policy.values()
    ours = os.readlink(f"/proc/self/fd/{ln._sock.fileno()}")
    holders: dict[str, set[int]] = {}
    for pid in filter(str.isdigit, os.listdir("/proc")):
        try:
            fds = os.listdir(f"/proc/{pid}/fd")
        except OSError:
            continue  # gone, or not ours to read
        for fd in fds:
            try:  # one descriptor closed meanwhile (another thread's) must not hide the others
                target = os.readlink(f"/proc/{pid}/fd/{fd}")
            except OSError:
                continue
            if target.startswith("socket:"):
                holders.setdefault(target, set()).add(int(pid))
    assert holders[ours] == {os.getpid()}
    if os.geteuid() == 0:
        theirs = [sock for sock, pids in holders.items() if ln.launcher_pid in pids]
        assert theirs and all(holders[sock] == {ln.launcher_pid} for sock in theirs)
    else:  # non-dumpable: its descriptors are not even listed to its own uid
        with pytest.raises(PermissionError):
            os.listdir(f"/proc/{ln.launcher_pid}/fd")
    inode = ours.removeprefix("socket:[").removesuffix("]")
    named = [line for line in Path("/proc/net/unix").read_text().splitlines()[1:] if line.split()[6] == inode]
    assert all(len(line.split()) == 7 for line in named)  # no path, no abstract name
    status = Path(f"/proc/{ln.launcher_pid}/status").read_text()
    assert "\nCapEff:\t0000000000000000\n" in status and "\nNoNewPrivs:\t1\n" in status


def test_many_threads_search_many_roots_at_once(tmp_path: Path) -> None:
    roots = [_tree(tmp_path / f"r{i}", f"word{i}") for i in range(3)]
    errors: list[str] = []

    def worker(k: int) -> None:
        for j in range(5):
            i = (k + j) % 3
            done = _search(roots[i], "-l", f"word{i}")
            if done.stdout != b"f.txt\n":
                errors.append(f"root {i}: {done.returncode} {done.stdout!r} {done.stderr!r}")
            other = _search(roots[i], "-l", "word", str(roots[(i + 1) % 3]))  # a neighbour is outside
            if other.stdout or b"No such file" not in other.stderr:
                errors.append(f"root {i} read its neighbour: {other.stdout!r}")

    threads = [threading.Thread(target=worker, args=(k,)) for k in range(8)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(120)
    assert not errors, errors[:3]
    assert len(_launchers()._by_policy) == 3  # one per root, however many calls


def test_input_timeout_kill_and_a_long_request(tmp_path: Path) -> None:
    root = _tree(tmp_path / "root", "word")
    rg = _rg()
    piped = helpers.run(
        rg_policy(rg, str(root)), [rg, "--no-config", "b", "-"], input=b"a\nb\n" * 40000, many_files=True
    )
    assert piped.stdout == b"b\n" * 40000
    policy = program("sleep", SLEEP, read=(str(root),))
    started = time.monotonic()
    with pytest.raises(subprocess.TimeoutExpired):
        helpers.run(policy, [SLEEP, "30"], timeout=0.5, many_files=True)
    assert time.monotonic() - started < 10
    long = _search(root, "-l", *[arg for n in range(3000) for arg in ("-e", f"absent{n:05d}")], "-e", "word")
    assert long.stdout == b"f.txt\n"  # > 32 KiB of argv: sent in a memfd


def test_a_killed_launcher_is_replaced_and_its_calls_end(tmp_path: Path) -> None:
    root = _tree(tmp_path / "root", "word")
    policy = program("sleep", SLEEP, read=(str(root),))
    running = helpers.popen(policy, [SLEEP, "30"], many_files=True, stdout=subprocess.PIPE)
    assert running.pid > 0  # started
    ln = _launchers().get(policy)
    assert ln.launcher_pid > 1  # never os.kill(-1) (every process) or 1 when the pid was not found
    os.kill(ln.launcher_pid, signal.SIGKILL)
    assert running.wait(10) == -9  # the namespace went with it
    assert _gone(running.pid)
    again = helpers.run(policy, [SLEEP, "0"], many_files=True, timeout=30)
    assert again.returncode == 0
    assert _launchers().get(policy) is not ln


def test_the_launcher_dies_with_the_server(tmp_path: Path) -> None:
    """A server killed outright (no clean-up) takes its launcher and the
    helpers in flight with it."""
    root = _tree(tmp_path / "root", "word")
    code = f"""
import os, subprocess, sys, time
from tooldeck.confine import helpers
from tooldeck.confine.policy import program
policy = program("sleep", {SLEEP!r}, read=({str(root)!r},))
proc = helpers.popen(policy, [{SLEEP!r}, "60"], many_files=True)
print(helpers._launchers.get(policy).launcher_pid, proc.pid, flush=True)
time.sleep(60)
"""
    env = {**os.environ, helpers.ENV: "launcher"}
    server = subprocess.Popen([sys.executable, "-c", code], stdout=subprocess.PIPE, text=True, env=env)
    try:
        assert server.stdout is not None
        launcher_pid, helper_pid = map(int, server.stdout.readline().split())
        assert not _gone(launcher_pid, 0.2) and not _gone(helper_pid, 0.2)
    finally:
        server.kill()
        server.wait()
    assert _gone(launcher_pid) and _gone(helper_pid)


def test_eviction_lets_the_calls_in_flight_finish(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    monkeypatch.setattr(launcher, "MAX_LAUNCHERS", 1)
    roots = [_tree(tmp_path / f"r{i}", "x") for i in range(2)]
    first = helpers.popen(program("sleep", SLEEP, read=(str(roots[0]),)), [SLEEP, "0.5"], many_files=True)
    assert _search(roots[1], "-l", "x").stdout == b"f.txt\n"  # evicts the first root's launcher
    assert first.wait(10) == 0


def test_where_no_launcher_can_start_search_falls_back(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    monkeypatch.setattr(launcher, "_interpreter", lambda: ("/nonexistent/python3", ()))
    root = _tree(tmp_path / "root", "word")
    with caplog.at_level(logging.WARNING, logger="tooldeck.confine"):
        assert _search(root, "-l", "word").stdout == b"f.txt\n"
    assert helpers.search_mode() == helpers.mode() != "launcher"
    assert "the helper launcher cannot run" in caplog.text


def test_a_helper_cannot_signal_or_trace_its_launcher(tmp_path: Path) -> None:
    """The launcher is PID 1 of its namespace: a helper's SIGKILL, SIGTERM or
    SIGINT does not reach it; it is non-dumpable: a helper cannot ptrace it,
    though it can trace a sibling helper (so the refusal is not an accident)."""
    root = _tree(tmp_path / "root", "word")
    shell = program("sh", "/bin/sh", read=(str(root),))
    done = helpers.run(shell, ["/bin/sh", "-c", "kill -INT 1; kill -TERM 1; kill -KILL 1; echo sent"], many_files=True)
    assert done.stdout == b"sent\n"
    ln = _launchers().get(shell)
    assert not _gone(ln.launcher_pid, 0.5)
    python = program("python", "/usr/bin/python3", read=(str(root),))
    sibling = helpers.popen(python, [SLEEP, "30"], many_files=True)
    code = (
        "import ctypes, sys; libc = ctypes.CDLL(None, use_errno=True)\n"
        "for pid in map(int, sys.argv[1:]):\n"
        "    print(libc.ptrace(16, pid, 0, 0), ctypes.get_errno())\n"  # PTRACE_ATTACH
    )
    try:
        argv = ["/usr/bin/python3", "-I", "-S", "-c", code, "1", str(sibling.pid_inside)]
        traced = helpers.run(python, argv, many_files=True, timeout=60)
    finally:
        sibling.kill()
        sibling.wait(10)
    launcher_try, sibling_try = traced.stdout.decode().splitlines()
    assert launcher_try == "-1 1" and sibling_try.startswith("0 "), traced  # EPERM on the launcher only
    assert helpers.run(shell, ["/bin/sh", "-c", "echo still"], many_files=True, timeout=30).stdout == b"still\n"


def test_a_root_replaced_by_a_link_out_leads_nowhere(tmp_path: Path) -> None:
    """The root itself swapped for a link to an outside folder after its
    launcher started: the new policy's namespace holds the link, not what it
    names, so ripgrep cannot even enter it (refused as an OSError, which
    file_search reports as io_error), and with an absolute path it reads nothing."""
    root, outside = _tree(tmp_path / "root", "word in"), _tree(tmp_path / "outside", "word out")
    assert _search(root, "-l", "word").stdout == b"f.txt\n"
    os.rename(root, tmp_path / "old-root")
    root.symlink_to(outside)
    with pytest.raises(FileNotFoundError):
        _search(root, "-l", "word")
    rg = _rg()
    done = helpers.run(rg_policy(rg, str(root)), [rg, "--no-config", "-c", "out", str(root)], many_files=True)
    assert done.stdout == b"" and b"No such file" in done.stderr


def test_a_program_that_cannot_start_is_an_oserror_and_an_abandoned_helper_is_killed(tmp_path: Path) -> None:
    root = _tree(tmp_path / "root", "word")
    policy = program("sleep", SLEEP, read=(str(root),))
    with pytest.raises(FileNotFoundError):
        helpers.run(policy, [str(root / "no-such-program")], many_files=True, timeout=30)
    proc = helpers.popen(policy, [SLEEP, "30"], many_files=True)
    pid = proc.pid
    proc._reply.close()  # the caller is gone (a server thread that died, the server itself)
    assert _gone(pid)


def test_a_cancelled_call_kills_its_helper(tmp_path: Path) -> None:
    """``run(stop=...)`` (a cancelled MCP call's check) kills the helper in
    the launcher's namespace and reaps it; output read before is not lost."""
    root = _tree(tmp_path / "root", "word")
    policy = program("sh", "/bin/sh", read=(str(root),))
    started = time.monotonic()
    seen: list[int] = []

    class Cancelled(Exception):
        pass

    def stop() -> None:
        pids = [int(p) for p in os.listdir("/proc") if p.isdigit() and _cmdline(int(p)) == MARK]
        seen.extend(pids)
        if seen or time.monotonic() - started > 30:  # cancelled once the helper runs (or it never did)
            raise Cancelled

    with pytest.raises(Cancelled):
        helpers.run(policy, ["/bin/sh", "-c", f"echo early; exec {MARK}"], many_files=True, stop=stop)
    assert time.monotonic() - started < 10
    assert seen and all(_gone(pid) for pid in set(seen))


def _cmdline(pid: int) -> str:
    try:
        return Path(f"/proc/{pid}/cmdline").read_bytes().replace(b"\0", b" ").decode().strip()
    except OSError:
        return ""


def _pids_running(cmdline: str) -> list[int]:
    return [int(p) for p in os.listdir("/proc") if p.isdigit() and _cmdline(int(p)) == cmdline]


def test_a_killed_helper_takes_its_own_children_with_it(tmp_path: Path) -> None:
    """What a helper started (a preprocessor, a background job) is killed
    with it: checked in /proc, where it would otherwise sleep on for 31 s
    (re-parented to the launcher)."""
    root = _tree(tmp_path / "root", "word")
    policy = program("sh", "/bin/sh", read=(str(root),))
    proc = helpers.popen(policy, ["/bin/sh", "-c", f"{MARK} & echo started; exec /bin/sleep 30"], many_files=True,
                         stdout=subprocess.PIPE)  # fmt: skip
    assert proc.stdout is not None and proc.stdout.readline() == b"started\n"
    deadline = time.monotonic() + 10
    while not (children := _pids_running(MARK)) and time.monotonic() < deadline:
        time.sleep(0.02)
    assert children, "the helper's child never showed up"
    proc.kill()
    assert proc.wait(10) == -9
    assert all(_gone(pid) for pid in children)
    done = helpers.run(policy, ["/bin/sh", "-c", f"{MARK} & echo left"], many_files=True, timeout=30)
    assert done.stdout == b"left\n"  # a helper that ends by itself leaves none behind either
    assert all(_gone(pid) for pid in _pids_running(MARK))


KEYCTL = (
    "import ctypes, os; keyctl = ctypes.CDLL(None).syscall; n = {'x86_64': 250, 'aarch64': 219}[os.uname().machine]"
)
KEYRING_ID = f"{KEYCTL}; print(keyctl(n, 0, -3, 0))"  # KEYCTL_GET_KEYRING_ID of the session keyring
SERVER = f"""
{KEYCTL}
ours = keyctl(n, 1, b"tooldeck-test")  # KEYCTL_JOIN_SESSION_KEYRING: a real one, as a login session has
from tooldeck.confine import helpers
from tooldeck.confine.policy import program
done = helpers.run(program("python3", PY, read=(ROOT,)), [PY, "-I", "-c", {KEYRING_ID!r}], many_files=True, timeout=30)
print(ours, int(done.stdout))
"""


def test_helpers_do_not_hold_the_servers_session_keyring(tmp_path: Path) -> None:
    """A server whose session keyring is a real one (a login session's, with
    the person's keys): its helpers hold another, empty one."""
    python = "/usr/bin/python3"
    usable = os.uname().machine in ("x86_64", "aarch64") and os.access(python, os.X_OK)
    require("system python3 on x86_64/aarch64", present=usable, how="apt-get install python3")
    root = _tree(tmp_path / "root", "word")
    code = SERVER.replace("PY", repr(python)).replace("ROOT", repr(str(root)))
    env = {**os.environ, helpers.ENV: "launcher"}
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, env=env, timeout=60)
    assert out.returncode == 0, out.stderr.decode()[-2000:]
    ours, theirs = (int(x) for x in out.stdout.split())
    require("keyctl", present=ours > 0, how="a machine whose seccomp filter allows keyctl")
    assert theirs > 0 and theirs != ours, (ours, theirs)
