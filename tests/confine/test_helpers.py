"""The confined spawner as a server uses it: many threads at once, timeouts
and kills, spawners replaced or unable to confine, roots that change while
the server runs, and the modes a person can choose."""

from __future__ import annotations

import json
import logging
import os
import subprocess
import sys
import threading
from pathlib import Path

import pytest

from tooldeck.catalog import build_toolbox
from tooldeck.confine import helpers, landlock, spawner
from tooldeck.confine.policy import program
from tooldeck.runtime import Runtime
from tooldeck.workspace.ripgrep import find_rg, rg_policy
from tooldeck.workspace.roots import Workspace

pytestmark = pytest.mark.skipif(landlock.abi_version() < 1, reason="this kernel has no Landlock")
SLEEP = "/bin/sleep"


@pytest.fixture(autouse=True)
def landlock_mode(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv(helpers.ENV, "landlock")
    helpers.reset_for_tests()
    yield
    helpers.reset_for_tests()


def _tree(base: Path, n: int) -> Path:
    base.mkdir(parents=True)
    (base / "f.txt").write_text(f"word{n}\n")
    return base


def _children(name: str) -> list[int]:
    """Live processes called ``name`` whose parent is this process (from /proc)."""
    out = []
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        try:
            stat = Path(f"/proc/{entry}/stat").read_text()
        except OSError:
            continue
        comm = stat[stat.index("(") + 1 : stat.rindex(")")]
        fields = stat[stat.rindex(")") + 2 :].split()
        if comm == name and int(fields[1]) == os.getpid() and fields[0] != "Z":
            out.append(int(entry))
    return out


@pytest.mark.skipif(find_rg() is None, reason="needs ripgrep")
def test_many_threads_search_many_roots_at_once(tmp_path: Path) -> None:
    rg = find_rg()
    assert rg is not None
    roots = [_tree(tmp_path / f"r{i}", i) for i in range(4)]
    errors: list[str] = []

    def worker(k: int) -> None:
        for j in range(6):
            i = (k + j) % 4
            done = helpers.run(rg_policy(rg, str(roots[i])), [rg, "--no-config", "-l", "word"], cwd=str(roots[i]))
            if done.stdout != b"f.txt\n":
                errors.append(f"root {i}: {done.returncode} {done.stdout!r} {done.stderr!r}")
            other = roots[(i + 1) % 4]  # the neighbour's root is outside this policy
            denied = helpers.run(rg_policy(rg, str(roots[i])), [rg, "--no-config", "-l", "word", str(other)])
            if denied.stdout or b"Permission denied" not in denied.stderr:
                errors.append(f"root {i} read {other}: {denied.stdout!r}")

    threads = [threading.Thread(target=worker, args=(k,)) for k in range(12)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(120)
    assert not errors, errors[:3]


def test_a_timeout_kills_and_reaps_the_helper() -> None:
    with pytest.raises(subprocess.TimeoutExpired):
        helpers.run(program("sleep", SLEEP), [SLEEP, "30"], timeout=0.3)
    assert _children("sleep") == []


def test_the_caller_can_kill_a_confined_helper() -> None:
    proc = helpers.popen(program("sleep", SLEEP), [SLEEP, "30"], stdin=subprocess.DEVNULL)
    assert proc.pid in _children("sleep")
    proc.kill()
    assert proc.wait(10) == -9
    assert proc.pid not in _children("sleep")


def test_spawners_evicted_while_calls_are_in_flight(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    """More policies than the spawners kept: old spawners stop between
    calls; every call still runs (on a new spawner), none hangs."""
    monkeypatch.setattr(spawner, "MAX_SPAWNERS", 2)
    dirs = [tmp_path / f"d{i}" for i in range(6)]
    for d in dirs:
        d.mkdir()
        (d / "x").write_text(d.name)
    results: list[tuple[bytes, bytes]] = []
    lock = threading.Lock()

    def worker(k: int) -> None:
        for j in range(5):
            d = dirs[(k + j) % len(dirs)]
            out = helpers.run(program("cat", "/bin/cat", read=(str(d),)), ["/bin/cat", str(d / "x")], timeout=60)
            with lock:
                results.append((d.name.encode(), out.stdout))

    threads = [threading.Thread(target=worker, args=(k,)) for k in range(8)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(120)
    assert len(results) == 40 and all(want == got for want, got in results), results


def test_a_stopped_spawner_is_replaced() -> None:
    pol = program("sleep", SLEEP)
    helpers.run(pol, [SLEEP, "0"], timeout=30)
    assert helpers._spawners is not None
    first = helpers._spawners.get(pol)
    first.stop()
    assert helpers.run(pol, [SLEEP, "0"], timeout=30).returncode == 0
    assert helpers._spawners.get(pol) is not first


def test_a_spawner_that_cannot_confine_itself_starts_nothing(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    def refuse(policy: object, abi: int, top: int) -> None:
        raise OSError(1, "landlock_restrict_self: Operation not permitted")

    monkeypatch.setattr(spawner, "apply", refuse)
    marker = tmp_path / "ran"
    with pytest.raises(OSError, match="cannot confine"):
        helpers.run(program("touch", "/bin/touch", write=(str(tmp_path),)), ["/bin/touch", str(marker)], timeout=30)
    assert not marker.exists()


@pytest.mark.skipif(find_rg() is None, reason="needs ripgrep")
def test_a_folder_added_while_serving_is_searched(tmp_path: Path) -> None:
    """manage_workspaces can add folders: the new root gets its own policy."""
    a, b = _tree(tmp_path / "a", 1), _tree(tmp_path / "b", 2)
    (b / "g.txt").write_text("only in b: zebra\n")
    rt = Runtime.for_dirs([a], state_dir=tmp_path / "state")
    box = build_toolbox(rt)
    first = box.call_sync("file_search", json.dumps({"pattern": "zebra", "mode": "content"}))
    assert "g.txt" not in first.text
    rt.replace_workspace(Workspace.from_dirs([a, b]))
    second = box.call_sync("file_search", json.dumps({"pattern": "zebra", "mode": "content"}))
    assert "g.txt" in second.text and "only in b" in second.text, second.text


def test_a_folder_made_again_under_the_same_name_is_a_new_policy(tmp_path: Path) -> None:
    """A Landlock rule holds the folder it was given: a root removed and made
    again must not keep the old rule (the helper would be denied its root)."""
    d = tmp_path / "again"
    d.mkdir()
    (d / "x").write_text("one")
    assert helpers.run(program("cat", "/bin/cat", read=(str(d),)), ["/bin/cat", str(d / "x")]).stdout == b"one"
    (d / "x").unlink()
    d.rmdir()
    d.mkdir()
    (d / "x").write_text("two")
    assert helpers.run(program("cat", "/bin/cat", read=(str(d),)), ["/bin/cat", str(d / "x")]).stdout == b"two"


def test_none_is_said_once_and_confines_nothing(
    monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture, tmp_path: Path
) -> None:
    monkeypatch.setenv(helpers.ENV, "none")
    helpers.reset_for_tests()
    outside = tmp_path / "outside.txt"
    outside.write_text("visible")
    with caplog.at_level(logging.WARNING, logger="tooldeck.confine"):
        for _ in range(3):
            done = helpers.run(program("cat", "/bin/cat"), ["/bin/cat", str(outside)])
            assert done.stdout == b"visible"
    said = [r for r in caplog.records if "NOT confined" in r.getMessage()]
    assert len(said) == 1


def test_confined_python_cannot_open_outside_its_policy(tmp_path: Path) -> None:
    """The same kernel rule, seen from a program that reports what it tried."""
    outside = tmp_path / "secret.txt"
    outside.write_text("s3cret")
    code = f"open({str(outside)!r}).read()"
    from tooldeck.confine.policy import python_install

    done = helpers.run(program("python", sys.executable, read=python_install()), [sys.executable, "-c", code])
    assert done.returncode != 0 and b"PermissionError" in done.stderr and b"s3cret" not in done.stdout


def test_the_token_worker_runs_confined() -> None:
    """It reads only its pipes: it counts, holds no capability and has
    ``no_new_privs`` (read from /proc), and confined itself before loading."""
    from tooldeck.tokens import TokenWorker

    worker = TokenWorker()
    try:
        assert worker.wait_ready(60)
        assert worker.counts("o200k_base", ["hello world"]) == [2]
        status = Path(f"/proc/{worker._proc.pid}/status").read_text()
    finally:
        worker.close()
    assert "\nCapEff:\t0000000000000000\n" in status and "\nNoNewPrivs:\t1\n" in status
