"""The test session itself: loopback only, its own config and state, strict in CI."""

from __future__ import annotations

import errno
import os
import socket
import subprocess
import sys

import pytest
from pytest_socket import SocketConnectBlockedError

from tests.conftest import KEPT_TOOLDECK, Hermetic
from tests.support import require as require_mod
from tooldeck.config import user_config_path
from tooldeck.statedir import resolve_state_dir


def test_every_location_is_this_sessions(hermetic_env: Hermetic) -> None:
    base = str(hermetic_env.base)
    assert os.environ["OPENAI_BASE_URL"] == hermetic_env.closed_url.rstrip("/")
    assert hermetic_env.closed_url.startswith("http://127.0.0.1:")
    assert str(user_config_path()).startswith(base) and not user_config_path().exists()
    assert resolve_state_dir().startswith(base)
    assert os.environ["MCP_PROMPTS_DIR"].startswith(base) and not os.listdir(os.environ["MCP_PROMPTS_DIR"])
    kept = {"TOOLDECK_CONFIG", "TOOLDECK_STATE_DIR", *KEPT_TOOLDECK}
    assert not [k for k in os.environ if k.startswith("TOOLDECK_") and k not in kept]


def test_the_default_model_endpoint_refuses_at_once(hermetic_env: Hermetic) -> None:
    port = int(hermetic_env.closed_url.rsplit(":", 1)[1].split("/")[0])
    with socket.socket() as s, pytest.raises(ConnectionRefusedError):
        s.connect(("127.0.0.1", port))


def test_a_subprocess_inherits_the_loopback_endpoint(hermetic_env: Hermetic) -> None:
    """pytest-socket guards this process only; a child is kept off the network by its environment."""
    code = "from tooldeck.llm.settings import *; import os; print(os.environ['OPENAI_BASE_URL'])"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60, check=True)
    assert out.stdout.strip() == hermetic_env.closed_url


@pytest.mark.filterwarnings("ignore:A test tried to use socket")  # pytest-socket warns as it refuses
def test_a_connect_beyond_loopback_is_refused_and_recorded(network_guard: list[str]) -> None:
    # UDP: a connect sends no packet even if the guard were off
    with socket.socket(socket.AF_INET, socket.SOCK_DGRAM) as s, pytest.raises(SocketConnectBlockedError):
        s.connect(("192.0.2.1", 9))
    assert network_guard and "192.0.2.1" in network_guard[0]  # the teardown fails the test on this
    network_guard.clear()
    with socket.socket(socket.AF_INET, socket.SOCK_DGRAM) as s:
        s.connect(("127.0.0.2", 9))  # all of 127.0.0.0/8 is loopback
    with socket.socket(socket.AF_INET6, socket.SOCK_DGRAM) as s:
        try:
            s.connect(("::1", 9))
        except OSError as exc:  # a machine without IPv6 loopback
            assert exc.errno in (errno.EADDRNOTAVAIL, errno.ENETUNREACH, errno.EAFNOSUPPORT)
    assert not network_guard


def test_a_missing_component_skips_locally_and_fails_in_ci(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("CI", raising=False)
    with pytest.raises(pytest.skip.Exception, match="frobnicator is missing: install apt-get install frob"):
        require_mod.require("frobnicator", present=False, how="apt-get install frob")
    monkeypatch.setenv("CI", "true")
    with pytest.raises(pytest.fail.Exception, match=r"CI=true .* frobnicator is missing: install apt-get install frob"):
        require_mod.require("frobnicator", present=False, how="apt-get install frob")
    require_mod.require("frobnicator", present=True)
    with pytest.raises(KeyError):
        require_mod.require("no-such-component")


def test_the_components_of_this_machine_are_known() -> None:
    for name, component in require_mod.COMPONENTS.items():
        assert component.how, name
        assert isinstance(require_mod.available(name), bool)


def test_a_dns_look_up_of_a_public_name_is_refused_and_recorded(network_guard: list[str]) -> None:
    with pytest.raises(socket.gaierror):
        socket.getaddrinfo("api.openai.com", 443)
    assert network_guard == ["a DNS look-up of 'api.openai.com'"]
    network_guard.clear()
    assert socket.getaddrinfo("localhost", 80) and socket.getaddrinfo("127.0.0.1", 80)
    assert not network_guard
