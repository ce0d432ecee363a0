"""The break-out suite again, as an unprivileged user.

Root and an unprivileged user get different sandboxes from the same bwrap
command line (bwrap run by real root keeps every capability in its user
namespace unless told otherwise; an unprivileged user has no writable pids
cgroup, so RLIMIT_NPROC bounds forks). So when this suite runs as root, this
test re-runs every break-out module — every ``tests/**/test_breakout*.py`` —
in a child pytest as uid 65534, with a temporary folder and a state
directory that uid owns, and requires it to pass with nothing skipped or
failed. When the suite itself runs unprivileged the break-out modules have
just run that way, and the root variant cannot run here: the test skips.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import tempfile
import xml.etree.ElementTree as ET
from pathlib import Path

import pytest

from tests.shell import unprivileged

UID = 65534
TESTS = Path(__file__).resolve().parents[1]
CHECKOUT = TESTS.parent


def breakout_modules() -> list[Path]:
    return sorted(TESTS.glob("**/test_breakout*.py"))


def _cannot_start(why: str) -> None:
    message = (
        f"the unprivileged re-run of the break-out suite cannot start: {why}. Fix: make the checkout, its "
        "virtualenv and the Python it uses readable by other users (folders 755, files 644: clone with umask "
        "022), with setpriv and unshare (util-linux) installed"
    )
    if os.environ.get("CI") == "true":
        pytest.fail(message)
    pytest.skip(message)


def _needed() -> list[str]:
    """What the child must reach: the checkout, and every folder Python imports from."""
    paths = [str(CHECKOUT), os.path.dirname(os.path.realpath(sys.executable)), sys.prefix, sys.base_prefix]
    paths += [p for p in sys.path if p and os.path.isdir(p)]
    return list(dict.fromkeys(os.path.realpath(p) for p in paths))


def _child_env(base: Path) -> dict[str, str]:
    """HOME apart from the temporary folder: a root below HOME would show HOME's path in the sandbox."""
    env = {"PATH": os.environ.get("PATH", "/usr/bin:/bin"), "HOME": str(base / "home"), "LANG": "C.UTF-8",
           "TOOLDECK_STATE_DIR": str(base / "work" / "state"), "PYTHONDONTWRITEBYTECODE": "1"}  # fmt: skip
    for key in ("PYTHONPATH", "CI"):
        if key in os.environ:
            env[key] = os.environ[key]
    return env


def _run_as_uid(base: Path, command: list[str], timeout: float) -> subprocess.CompletedProcess[str]:
    argv = unprivileged.wrap(UID, _needed(), str(base / "stage"), command)
    return subprocess.run(argv, cwd=CHECKOUT, env=_child_env(base), capture_output=True, text=True,
                          timeout=timeout)  # fmt: skip


def _junit_counts(path: Path) -> dict[str, int]:
    suites = ET.parse(path).getroot()
    suite = suites if suites.tag == "testsuite" else suites.find("testsuite")
    assert suite is not None
    return {k: int(suite.get(k, "0")) for k in ("tests", "failures", "errors", "skipped")}


@pytest.mark.timeout(1800)
def test_breakout_suite_passes_as_an_unprivileged_user(request: pytest.FixtureRequest) -> None:
    if os.geteuid() != 0:
        pytest.skip(f"this suite runs as uid {os.geteuid()}: the break-out modules just ran unprivileged, and the "
                    "root variant cannot run here (run the suite as root to cover both)")  # fmt: skip
    modules = breakout_modules()
    assert modules, f"no tests/**/test_breakout*.py under {TESTS}"
    if shutil.which("setpriv") is None or shutil.which("unshare") is None:
        _cannot_start("setpriv or unshare is not installed")
    base = Path(tempfile.mkdtemp(prefix="tooldeck-unpriv-"))
    try:
        base.chmod(0o755)
        (base / "stage").mkdir()
        for owned in ("home", "work"):
            (base / owned).mkdir()
            os.chown(base / owned, UID, UID)
        work = base / "work"
        probe = "import pytest, pyseccomp, tooldeck.shell.sandbox\n" + "".join(
            f"open({str(m)!r}).read()\n" for m in modules
        )
        done = _run_as_uid(base, [sys.executable, "-c", probe], timeout=120)
        if done.returncode != 0:
            last = (done.stderr.strip().splitlines() or [f"exit {done.returncode}"])[-1]
            _cannot_start(f"uid {UID} cannot import tooldeck or read the break-out modules ({last})")
        junit = work / "junit.xml"
        command = [sys.executable, "-m", "pytest", *map(str, modules), "-q", "-p", "no:cacheprovider", "-rfEs",
                   "--basetemp", str(work / "basetemp"), "--junitxml", str(junit)]  # fmt: skip
        # the soak variants run unprivileged too when this run includes them; otherwise they are
        # deselected (not skipped), so every skip the child reports is a real gap
        slow = request.config.getoption("--run-slow") or os.environ.get("TOOLDECK_SLOW") == "1"
        command += ["--run-slow"] if slow else ["-m", "not slow"]
        child = _run_as_uid(base, command, timeout=1500)
        summary = "\n".join((child.stdout + child.stderr).strip().splitlines()[-60:])
        assert junit.exists(), f"the child pytest wrote no report (exit {child.returncode}):\n{summary}"
        counts = _junit_counts(junit)
        assert child.returncode == 0 and counts["failures"] == counts["errors"] == counts["skipped"] == 0, (
            f"break-out suite as uid {UID}: {counts} (exit {child.returncode})\n{summary}"
        )
        assert counts["tests"] >= len(modules)
    finally:
        shutil.rmtree(base, ignore_errors=True)
