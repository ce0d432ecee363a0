"""Starting a helper process (ripgrep, git) confined beneath the paths its
policy names: the one entry point for every process tooldeck starts over
the person's files.

How, in order of preference (``TOOLDECK_HELPER_SANDBOX`` = ``launcher``,
``landlock``, ``bwrap`` or ``none`` forces one; default ``auto``):

* ``launcher``, for helpers that open many files (ripgrep: ``many_files=True``)
  where bubblewrap works: started by a persistent launcher, one per policy,
  inside a bubblewrap namespace built once that holds only the policy's
  paths (:mod:`tooldeck.confine.launcher`). A namespace costs nothing per
  file opened; Landlock checks each one. Other helpers (git) go on below;
* ``landlock (Linux ≥ 5.13 with Landlock enabled): started by a confined
  thread of this process (:mod:`tooldeck.confine.spawner`), read access only
  beneath the policy's paths, no TCP bind/connect (ABI ≥ 4), no signals or
  abstract sockets out of the domain (ABI ≥ 6), no capabilities, no new
  privileges;
* ``bwrap``: inside a bubblewrap namespace holding only those paths
  (:mod:`tooldeck.confine.bwrap`);
* ``none``: started as before; said once on stderr (the log), and the
  results are still checked against the safe reads of
  :mod:`tooldeck.workspace`, as they are in every mode.

Python worker processes (codemap parsing, the token worker) confine
themselves with :func:`~tooldeck.confine.process.confine_self` instead: they are spawned by
``multiprocessing`` or a plain ``Popen``, and are single-threaded when they
call it.
"""

from __future__ import annotations

import errno
import logging
import os
import select
import selectors
import shutil
import subprocess
import threading
import time
from collections.abc import Callable, Sequence
from typing import Any

from tooldeck.confine import bwrap, landlock
from tooldeck.confine.launcher import Launchers, LauncherUnavailable
from tooldeck.confine.policy import Policy
from tooldeck.confine.process import ENV, confine_self, landlock_wanted
from tooldeck.confine.spawner import Spawners

log = logging.getLogger("tooldeck.confine")

MODES = ("launcher", "landlock", "bwrap", "none")
__all__ = ["ENV", "MODES", "confine_self", "mode", "popen", "run", "search_mode", "use_mode"]

_lock = threading.Lock()
_mode: str | None = None
_search: str | None = None  # how helpers that open many files are confined
_spawners: Spawners | None = None
_launchers: Launchers | None = None
_launched = False  # a launcher has started a helper in this process (it works here)


def _wanted() -> str:
    return os.environ.get(ENV, "auto").strip().lower() or "auto"


def _choose() -> str:
    wanted = _wanted()
    if wanted == "none":
        return "none"
    if landlock_wanted() >= 1:
        return "landlock"
    if wanted in ("auto", "launcher", "landlock", "bwrap") and bwrap.bwrap_path() is not None:
        return "bwrap"
    return "none"


def _choose_search(general: str) -> str:
    if _wanted() in ("auto", "launcher") and general != "none" and bwrap.bwrap_path() is not None:
        return "launcher"
    return general


def mode() -> str:
    """How helpers are confined here: ``landlock``, ``bwrap`` or ``none``
    (decided once per process, and said once in the log)."""
    global _mode, _spawners
    if _mode is None:
        with _lock:
            if _mode is None:
                chosen = _choose()
                if chosen == "landlock":
                    _spawners = Spawners(landlock.abi_version())
                _say(chosen)
                _mode = chosen
    return _mode


def search_mode() -> str:
    """How helpers that open many files (ripgrep) are confined here:
    ``launcher``, or as :func:`mode` says (decided at the first search: the
    bubblewrap probe is not paid by a process that never searches)."""
    general = mode()
    if _search is None:
        with _lock:
            if _search is None:
                _set_search(_choose_search(general))
                if _search == "launcher":
                    log.info("tooldeck: ripgrep runs in a bubblewrap namespace kept per root (a launcher each)")
    assert _search is not None
    return _search


def _set_search(how: str) -> None:
    global _search, _launchers
    if how == "launcher" and _launchers is None:
        exe = bwrap.bwrap_path()
        assert exe is not None
        _launchers = Launchers(exe)
    _search = how


def _say(chosen: str) -> None:
    wanted = _wanted()
    if chosen == "landlock":
        log.info("tooldeck: helper processes are confined by Landlock (ABI %d)", landlock.abi_version())
    elif chosen == "bwrap":
        why = f"{ENV}=bwrap" if wanted == "bwrap" else "Landlock is not available"
        log.warning("tooldeck: %s; helper processes run in bubblewrap namespaces (~20 ms more per process)", why)
    else:
        why = f"{ENV}=none" if wanted == "none" else "neither Landlock nor a working bubblewrap is available"
        log.warning(
            "tooldeck: helper processes (ripgrep, git) are NOT confined by the kernel (%s); their results are "
            "still checked against safe reads of the roots",
            why,
        )


def popen(policy: Policy, argv: Sequence[str], *, many_files: bool = False, **kwargs: Any) -> subprocess.Popen[bytes]:
    """``subprocess.Popen(argv, **kwargs)`` confined to ``policy``.
    ``many_files``: the helper opens many files (a search), so it goes to the
    launcher where there is one. Only ``cwd``, ``env``, ``stdin``, ``stdout``
    and ``stderr`` are taken then: the object returned behaves as the part of
    a ``Popen`` that :func:`run` and the callers use."""
    global _launched
    how = search_mode() if many_files else mode()
    if how == "launcher":
        assert _launchers is not None
        try:
            proc = _launchers.popen(policy, argv, **kwargs)
        except LauncherUnavailable as exc:  # cannot start here (an old bwrap...): the other way, from now on
            log.warning("tooldeck: the helper launcher cannot run (%s); ripgrep is confined as git is", exc)
            how = mode()
            with _lock:
                _set_search(how)
        else:
            _launched = True
            return proc  # type: ignore[return-value]
    if how == "landlock":
        assert _spawners is not None
        return _spawners.popen(policy, argv, **kwargs)
    if how == "bwrap":
        exe = bwrap.bwrap_path()
        if exe is not None:
            # found here, as Popen would: a missing program is FileNotFoundError, not bwrap's exit 1
            env = kwargs.get("env") or os.environ
            found = argv[0] if "/" in argv[0] else shutil.which(argv[0], path=env.get("PATH", os.defpath))
            if found is None:
                raise FileNotFoundError(errno.ENOENT, os.strerror(errno.ENOENT), argv[0])
            wrapped = bwrap.wrap(exe, policy, [found, *argv[1:]], kwargs.pop("cwd", None))
            return subprocess.Popen(wrapped, **kwargs)
    return subprocess.Popen(argv, **kwargs)


def run(
    policy: Policy,
    argv: Sequence[str],
    *,
    cwd: str | None = None,
    input: bytes | None = None,
    timeout: float | None = None,
    env: dict[str, str] | None = None,
    many_files: bool = False,
    stop: Callable[[], None] | None = None,
) -> subprocess.CompletedProcess[bytes]:
    """``subprocess.run(argv, capture_output=True)`` confined to ``policy``:
    stdin is ``input`` (else /dev/null); on a timeout the helper is killed
    and reaped, and :class:`subprocess.TimeoutExpired` raised. ``stop`` (a
    cancelled call's check) is called every :data:`STOP_POLL` seconds while
    the helper runs; when it raises, the helper is killed and reaped."""
    stdin = subprocess.PIPE if input is not None else subprocess.DEVNULL
    proc = popen(
        policy,
        argv,
        many_files=many_files,
        cwd=cwd,
        env=env,
        stdin=stdin,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
    )
    direct = isinstance(proc, subprocess.Popen) and hasattr(os, "pidfd_open")
    with proc:
        try:
            talk = _communicate_direct if direct else _communicate
            out, err = talk(proc, input, timeout, stop)
        except subprocess.TimeoutExpired:
            proc.kill()
            if direct:
                proc.wait()  # the pipes are closed on leaving the with block
            else:
                proc.communicate()
            raise
        except BaseException:
            proc.kill()
            raise
    return subprocess.CompletedProcess(list(argv), proc.returncode, out, err)


def launcher_proven() -> bool:
    """Whether helpers that open many files run in a launcher, and one has
    already started a helper in this process (so the next one will not fall
    back to another way because the launcher cannot start here)."""
    return _launched and _search == "launcher"


def launched_cpu_seconds() -> float:
    """CPU seconds spent by the launchers and the helpers they started (not
    children of this process, so not in its ``RUSAGE_CHILDREN``): for
    benchmarks."""
    return _launchers.cpu_seconds() if _launchers is not None else 0.0


STOP_POLL = 0.05


def _communicate(
    proc: subprocess.Popen[bytes], input: bytes | None, timeout: float | None, stop: Callable[[], None] | None
) -> tuple[bytes, bytes]:
    if stop is None:
        return proc.communicate(input, timeout=timeout)
    deadline = None if timeout is None else time.monotonic() + timeout
    while True:
        step = STOP_POLL if deadline is None else min(STOP_POLL, max(0.0, deadline - time.monotonic()))
        try:
            return proc.communicate(input, timeout=step)  # a retry loses no output (subprocess docs)
        except subprocess.TimeoutExpired:
            if deadline is not None and time.monotonic() >= deadline:
                raise
        input = None  # sent by the first call
        stop()


def _deadline_wait(deadline: float | None, next_stop: float | None) -> float | None:
    """Seconds to wait for the next event: until the deadline or the next
    ``stop`` check, whichever comes first (None: no limit)."""
    ends = [t for t in (deadline, next_stop) if t is not None]
    return max(0.0, min(ends) - time.monotonic()) if ends else None


def _communicate_direct(
    proc: subprocess.Popen[bytes], input: bytes | None, timeout: float | None, stop: Callable[[], None] | None
) -> tuple[bytes, bytes]:
    """``proc.communicate(input, timeout)`` read here with one selector, the
    exit awaited on a pidfd (:func:`await_exit`): ``Popen.wait(timeout)``
    polls with sleeps of 0.5, 1, 2 ms..., which a helper that closed its
    output a moment before it exited paid on about one call in three. ``stop``
    is called every :data:`STOP_POLL` seconds as in :func:`_communicate`."""
    assert proc.stdout is not None and proc.stderr is not None
    deadline = None if timeout is None else time.monotonic() + timeout
    out: list[bytes] = []
    err: list[bytes] = []
    view, pos = memoryview(input or b""), 0
    next_stop = None if stop is None else time.monotonic() + STOP_POLL
    with selectors.DefaultSelector() as sel:
        if proc.stdin is not None:
            if view:
                sel.register(proc.stdin.fileno(), selectors.EVENT_WRITE, None)
            else:
                proc.stdin.close()
        sel.register(proc.stdout.fileno(), selectors.EVENT_READ, out)
        sel.register(proc.stderr.fileno(), selectors.EVENT_READ, err)
        while sel.get_map():
            for key, _ in sel.select(_deadline_wait(deadline, next_stop)):
                if key.data is None:  # stdin: a pipe's atomic size at a time, so the write never blocks
                    try:
                        pos += os.write(key.fd, view[pos : pos + select.PIPE_BUF])
                    except BrokenPipeError:
                        pos = len(view)
                    if pos >= len(view):
                        sel.unregister(key.fd)
                        assert proc.stdin is not None
                        proc.stdin.close()
                    continue
                chunk = os.read(key.fd, 1 << 16)
                if chunk:
                    key.data.append(chunk)
                else:
                    sel.unregister(key.fd)
            now = time.monotonic()
            if stop is not None and next_stop is not None and now >= next_stop:
                stop()
                next_stop = now + STOP_POLL
            if deadline is not None and now >= deadline and sel.get_map():
                raise subprocess.TimeoutExpired(proc.args, timeout or 0.0)
    await_exit(proc, deadline, stop)
    return b"".join(out), b"".join(err)


def await_exit(proc: subprocess.Popen[bytes], deadline: float | None, stop: Callable[[], None] | None = None) -> int:
    """Wait for ``proc`` to exit (and reap it) by the ``deadline``
    (:class:`subprocess.TimeoutExpired` past it), woken by the kernel when it
    exits (a pidfd, Linux ≥ 5.3) instead of ``Popen.wait``'s sleeps."""
    if proc.poll() is not None:
        return proc.returncode
    try:
        pidfd = os.pidfd_open(proc.pid)  # our child, not reaped yet: its pid cannot be another's
    except (AttributeError, OSError):
        left = None if deadline is None else max(0.0, deadline - time.monotonic())
        return proc.wait(timeout=left)
    next_stop = None if stop is None else time.monotonic() + STOP_POLL
    try:
        with selectors.DefaultSelector() as sel:
            sel.register(pidfd, selectors.EVENT_READ)
            while proc.poll() is None:
                sel.select(_deadline_wait(deadline, next_stop))
                now = time.monotonic()
                if stop is not None and next_stop is not None and now >= next_stop:
                    stop()
                    next_stop = now + STOP_POLL
                if deadline is not None and now >= deadline and proc.poll() is None:
                    raise subprocess.TimeoutExpired(proc.args, 0.0)
    finally:
        os.close(pidfd)
    return proc.returncode


def use_mode(how: str) -> None:
    """Switch how helpers are confined, keeping the spawners and launchers
    already made (benchmarks compare modes call by call; tests pick one).
    ``launcher`` moves only the helpers that open many files."""
    global _mode, _spawners
    if how not in MODES:
        raise ValueError(f"unknown helper sandbox {how!r}; one of {MODES}")
    general = mode() if how == "launcher" else how
    with _lock:
        if general == "landlock" and _spawners is None:
            _spawners = Spawners(landlock.abi_version())
        _set_search(how)
        _mode = general


def reset_for_tests() -> None:
    """Forget the decided mode and stop the spawners (tests switch modes)."""
    global _mode, _spawners, _search, _launchers, _launched
    with _lock:
        if _spawners is not None:
            _spawners.stop_all()
        if _launchers is not None:
            _launchers.stop_all()
        _mode, _spawners, _search, _launchers, _launched = None, None, None, None, False
