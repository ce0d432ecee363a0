"""Shared fixtures, and the rules every test here follows.

Hermetic by construction
    Before collection, each pytest process (each xdist worker too) points
    every endpoint, config and state location at its own temporary folder and
    at a closed loopback port (``hermetic_env``; its docstring lists the
    variables). A test that needs a model runs ``tests/support/openai_server.py``
    and sets ``OPENAI_BASE_URL`` with ``monkeypatch``. Subprocesses inherit
    this environment, which is what keeps them off the network: the socket
    guard below lives in the test process only.
Loopback only
    pytest-socket (``--allow-hosts=127.0.0.0/8,::1 --allow-unix-socket`` in
    pyproject's addopts) refuses any other ``connect``, ``network_guard`` also
    refuses a DNS look-up of any name but localhost, and fails the test even
    when the code under test swallowed the refusal. Behaviour "off loopback"
    is tested inside a network namespace of the test's own
    (``tests/mcp/mcp_e2e.py``: ``run_http(..., netns=True)``), never on this
    machine's interfaces.
Strict
    A test that needs a component (bwrap, rg, git, chromium, node, a catalog
    domain...) calls ``require(...)`` or carries ``@pytest.mark.requires(...)``
    (tests/support/require.py): a skip that names what to install locally, a
    failure under ``CI=true``. No bare ``pytest.skip``/``skipif`` for a component.
Parallel (pytest-xdist, ``-n auto --dist loadgroup`` in scripts/test.sh)
    No shared global state: a port is bound to 0 (or ``free_port()``), a state
    folder comes from ``tmp_path``/``state_dir``, ``os.environ`` and the cwd
    change only through ``monkeypatch`` (``_leaves_env_and_cwd`` fails a test
    that leaves either changed). An expensive fixture that several tests only
    read from is module-scoped, and the module carries
    ``pytest.mark.xdist_group("name")`` so its tests share one worker (and one
    fixture) instead of each worker building its own.
Time
    Assert on order and events, not wall-clock windows (a scripted model reply
    can wait for ``model_env.gate()``, opened by the test when it has seen what
    it needed); where a time bound is the behaviour, give it at least 5x
    headroom (this is a shared 2-core machine).
Soak
    Long variants are ``@pytest.mark.slow``: they run with ``TOOLDECK_SLOW=1``
    or ``--run-slow``, and a short variant of the same test runs by default.
"""

from __future__ import annotations

import ipaddress
import json
import os
import shutil
import socket
import tempfile
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest

from tests.support.require import require
from tooldeck.catalog import build_toolbox
from tooldeck.core.toolbox import Toolbox, ToolResult
from tooldeck.runtime import Runtime

LOOPBACK = "127.0.0.0/8,::1"
# Inherited variables that would let a developer's setup leak into a run (or a
# run reach a real endpoint); each is removed before the hermetic values are set.
DROPPED = (
    "OPENAI_API_KEY", "OPENAI_BASE_URL", "OPENAI_ORG_ID", "OPENAI_PROJECT_ID", "OPENAI_WEBHOOK_SECRET",
    "OPENAI_API_VERSION", "AZURE_OPENAI_ENDPOINT", "AZURE_OPENAI_API_KEY", "ANTHROPIC_API_KEY",
    "ANTHROPIC_BASE_URL", "HTTP_PROXY", "HTTPS_PROXY", "ALL_PROXY", "http_proxy", "https_proxy", "all_proxy",
    "NO_PROXY", "no_proxy", "MCP_PROMPTS_DIR", "HF_ENDPOINT", "HF_HOME",
)  # fmt: skip
# switches of the test suite itself; every other inherited TOOLDECK_* variable is dropped
KEPT_TOOLDECK = ("TOOLDECK_SLOW", "TOOLDECK_SCREENSHOTS", "TOOLDECK_UPDATE_GOLDENS", "TOOLDECK_CLICK_BUNDLE",
                 "TOOLDECK_CORPORA", "TOOLDECK_BENCH_CORPORA")  # fmt: skip


@dataclass(frozen=True)
class Hermetic:
    """Where this test process's environment points."""

    base: Path
    closed_url: str  # an OpenAI-compatible base URL on loopback that refuses every connection
    env: dict[str, str]


def _enter_hermetic() -> tuple[Hermetic, socket.socket, dict[str, str | None]]:
    base = Path(tempfile.mkdtemp(prefix="tooldeck-tests-"))
    # bound and never listening: a connect is refused at once, and no other
    # server of this machine can take the port while the run lasts
    closed = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    closed.bind(("127.0.0.1", 0))
    url = f"http://127.0.0.1:{closed.getsockname()[1]}/v1"
    for sub in ("config", "state", "xdg-state", "cache", "prompts"):
        (base / sub).mkdir()
    env = {
        "OPENAI_BASE_URL": url,
        "OPENAI_API_KEY": "hermetic-test-key",
        "TOOLDECK_CONFIG": str(base / "config" / "tooldeck" / "config.toml"),  # absent: no user config
        "XDG_CONFIG_HOME": str(base / "config"),
        "TOOLDECK_STATE_DIR": str(base / "state"),
        "XDG_STATE_HOME": str(base / "xdg-state"),
        "XDG_CACHE_HOME": str(base / "cache"),
        "MCP_PROMPTS_DIR": str(base / "prompts"),  # empty
        "HF_HUB_OFFLINE": "1",
        "PYTHONUNBUFFERED": "1",  # what the CLI sets in-process; set here so no test changes it
    }
    saved: dict[str, str | None] = {}
    dropped = [k for k in os.environ if k.startswith("TOOLDECK_") and k not in KEPT_TOOLDECK]
    for key in (*DROPPED, *dropped, *env):
        saved.setdefault(key, os.environ.get(key))
        os.environ.pop(key, None)
    os.environ.update(env)
    return Hermetic(base, url, env), closed, saved


_HERMETIC_KEY = pytest.StashKey[tuple[Hermetic, socket.socket, dict[str, str | None]]]()


@pytest.hookimpl(trylast=True)
def pytest_configure(config: pytest.Config) -> None:
    try:
        hosts = config.getoption("--allow-hosts") or ""
    except ValueError:
        raise pytest.UsageError("the socket guard needs pytest-socket: pip install 'tooldeck[dev]'") from None
    if LOOPBACK not in hosts or not config.getoption("--allow-unix-socket"):
        raise pytest.UsageError(f"run with --allow-hosts={LOOPBACK} --allow-unix-socket (pyproject addopts)")
    config.stash[_HERMETIC_KEY] = _enter_hermetic()


def pytest_unconfigure(config: pytest.Config) -> None:
    entered = config.stash.get(_HERMETIC_KEY, None)
    if entered is None:
        return
    hermetic, closed, saved = entered
    closed.close()
    for key, value in saved.items():
        if value is None:
            os.environ.pop(key, None)
        else:
            os.environ[key] = value
    shutil.rmtree(hermetic.base, ignore_errors=True)


@pytest.fixture(scope="session", autouse=True)
def hermetic_env(pytestconfig: pytest.Config) -> Hermetic:
    """This process's hermetic environment, set before collection:

    - ``OPENAI_BASE_URL`` a closed loopback port (refused at once), ``OPENAI_API_KEY`` a dummy;
      other providers' variables and proxies removed;
    - ``TOOLDECK_CONFIG`` / ``XDG_CONFIG_HOME``: no user config file;
    - ``TOOLDECK_STATE_DIR`` / ``XDG_STATE_HOME`` / ``XDG_CACHE_HOME``: folders of this run;
    - ``MCP_PROMPTS_DIR``: an empty folder; ``HF_HUB_OFFLINE=1``;
    - every inherited ``TOOLDECK_*`` variable removed but the suite's own switches (``KEPT_TOOLDECK``).
    """
    hermetic = pytestconfig.stash[_HERMETIC_KEY][0]
    changed = {k: os.environ.get(k) for k, v in hermetic.env.items() if os.environ.get(k) != v}
    assert not changed, f"the hermetic environment was changed outside monkeypatch: {changed}"
    return hermetic


LOOPBACK_NAMES = frozenset({"localhost", "localhost.localdomain", "ip6-localhost", "ip6-loopback"})


def _resolves_locally(host: object) -> bool:
    """A name ``getaddrinfo`` answers without asking a DNS server: none, an
    address literal (its connect is checked by pytest-socket), or localhost."""
    if host is None or isinstance(host, bytes | bytearray):
        host = host.decode() if host else None
    if not host or not isinstance(host, str):
        return True
    try:
        ipaddress.ip_address(host.split("%", 1)[0])
    except ValueError:
        return host.lower().rstrip(".") in LOOPBACK_NAMES
    return True


@pytest.fixture(autouse=True)
def network_guard(hermetic_env: Hermetic) -> Iterator[list[str]]:
    """Fail a test that tried to reach beyond loopback: a connect elsewhere
    (refused by pytest-socket) or a DNS look-up of a name that is not
    localhost (refused here: on a machine without a network it is what a call
    to a public endpoint actually does). The test fails even if the code under
    test caught the error (a retrying client does). Yields the list of refused
    attempts (tests/test_hermetic.py checks the guard with it)."""
    from pytest_socket import SocketConnectBlockedError

    guarded, resolve = socket.socket.connect, socket.getaddrinfo
    blocked: list[str] = []

    def connect(sock: socket.socket, *args: object) -> None:
        try:
            return guarded(sock, *args)
        except SocketConnectBlockedError as exc:
            blocked.append(str(exc))
            raise

    def getaddrinfo(host: object, *args: object, **kwargs: object) -> object:
        if not _resolves_locally(host):
            blocked.append(f"a DNS look-up of {host!r}")
            raise socket.gaierror(socket.EAI_NONAME, f"the test session resolves loopback names only, not {host!r}")
        return resolve(host, *args, **kwargs)  # type: ignore[arg-type]

    socket.socket.connect = connect  # type: ignore[method-assign]
    socket.getaddrinfo = getaddrinfo  # type: ignore[assignment]
    try:
        yield blocked
    finally:
        socket.socket.connect = guarded  # type: ignore[method-assign]
        socket.getaddrinfo = resolve
    if blocked:
        pytest.fail(f"the test tried to reach beyond loopback: {blocked[0]}", pytrace=False)


@pytest.fixture(autouse=True)
def _leaves_env_and_cwd() -> Iterator[None]:
    """A test changes ``os.environ`` and the cwd through ``monkeypatch`` only:
    under xdist the next test of this worker would inherit the change."""
    env, cwd = dict(os.environ), os.getcwd()
    yield
    now = dict(os.environ)
    diff = sorted(k for k in env.keys() | now.keys() if env.get(k) != now.get(k) and not k.startswith("PYTEST_"))
    if os.getcwd() != cwd:
        os.chdir(cwd)
        pytest.fail(f"the test left the cwd changed ({os.getcwd()}); use monkeypatch.chdir", pytrace=False)
    if diff:
        for k in diff:
            if k in env:
                os.environ[k] = env[k]
            else:
                os.environ.pop(k, None)
        pytest.fail(f"the test left os.environ changed ({', '.join(diff)}); use monkeypatch.setenv", pytrace=False)


def pytest_runtest_setup(item: pytest.Item) -> None:
    """``@pytest.mark.requires("bwrap", ...)``: see tests/support/require.py."""
    for mark in item.iter_markers("requires"):
        for name in mark.args:
            require(name)


@pytest.fixture
def state_dir(tmp_path: Path) -> Path:
    d = tmp_path / "state"
    d.mkdir()
    return d


@pytest.fixture
def root(tmp_path: Path) -> Path:
    d = tmp_path / "root"
    d.mkdir()
    return d


@pytest.fixture
def runtime(root: Path, state_dir: Path) -> Runtime:
    return Runtime.for_dirs([root], state_dir=state_dir)


@pytest.fixture
def box(runtime: Runtime) -> Toolbox:
    return build_toolbox(runtime)


class Caller:
    """Call tools synchronously and assert on outcomes."""

    def __init__(self, box: Toolbox) -> None:
        self.box = box

    def __call__(self, name: str, args: dict | str | None = None) -> ToolResult:
        return self.box.call_sync(name, json.dumps(args) if isinstance(args, dict) else args)

    def ok(self, name: str, args: dict | str | None = None) -> str:
        res = self(name, args)
        assert not res.is_error, res.text
        return res.text

    def err(self, name: str, args: dict | str | None = None, code: str | None = None) -> ToolResult:
        res = self(name, args)
        assert res.is_error, f"expected an error, got: {res.text[:500]}"
        if code is not None:
            assert res.error is not None and res.error.code == code, res.text
        return res


@pytest.fixture
def call(box: Toolbox) -> Caller:
    return Caller(box)


def snapshot(path: Path) -> dict[str, bytes]:
    """Every file under ``path`` with its bytes (to prove nothing changed)."""
    out: dict[str, bytes] = {}
    for dirpath, _dirs, files in os.walk(path):
        for f in files:
            p = Path(dirpath) / f
            if p.is_symlink() or not p.is_file():
                continue
            out[str(p.relative_to(path))] = p.read_bytes()
    return out


def pytest_addoption(parser: pytest.Parser) -> None:
    parser.addoption("--run-slow", action="store_true", help="also run the @pytest.mark.slow soak tests")


# The modules whose tests take longest (``--durations``), longest first. They
# are handed to the xdist workers first, so that the run does not end with one
# worker busy on a long test while the other has nothing left to do; a module
# not listed keeps its place. Only the order changes: every test still runs.
LONGEST_FIRST = (  # from a -n 1 --durations=0 run (suite3); longest single test first, then module total
    "tests/shell/test_sandbox_unprivileged.py",  # the break-out suite again, as another user (~40 s)
    "tests/mcp/test_fuzz_mcp.py",
    "tests/mcp/test_prompt_authority_e2e.py",
    "tests/mcp/test_serve_for_days.py",
    "tests/test_trust_config.py",
    "tests/mcp/test_early_front.py",
    "tests/tui/test_view.py",
    "tests/tui/test_connected.py",
    "tests/workspace/test_journal_forgery.py",
    "tests/index/test_surfaces.py",
    "tests/settings/test_person_only.py",
    "tests/chatmd/test_run_parity.py",
    "tests/mounts/test_mount.py",
    "tests/workspace/test_breakout_swap_race.py",
    "tests/tui/test_local_chat.py",
    "tests/chatmd/test_runner.py",
    "tests/index/test_index_dir.py",
    "tests/dashboard/test_dashboard_browser.py",
    "tests/scripts/test_check_layers.py",
    "tests/test_cli.py",
    "tests/mcp/test_parity_mcp.py",
    "tests/chatmd/test_authority.py",
    "tests/mcp/test_prompts_served.py",
    "tests/tui/test_approvals_cancel.py",
    "tests/shell/test_surfaces.py",
    "tests/mcp/test_trust_e2e.py",
    "tests/core/test_fuzz_toolbox.py",
)


def _longest_first(item: pytest.Item) -> int:
    module = item.nodeid.split("::", 1)[0]
    return LONGEST_FIRST.index(module) if module in LONGEST_FIRST else len(LONGEST_FIRST)


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    """Soak variants (``@pytest.mark.slow``) run with ``--run-slow`` or
    ``TOOLDECK_SLOW=1``; the longest modules go first (``LONGEST_FIRST``)."""
    items.sort(key=_longest_first)  # stable: the rest keep pytest's order
    if config.getoption("--run-slow") or os.environ.get("TOOLDECK_SLOW") == "1":
        return
    skip = pytest.mark.skip(reason="soak variant, opt-in: run with TOOLDECK_SLOW=1 or --run-slow")
    for item in items:
        if "slow" in item.keywords:
            item.add_marker(skip)
