"""Fixtures of the web tests: the local server (plain and TLS) and a Runtime allowed to reach it."""

from __future__ import annotations

import threading
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.support.require import require
from tests.tools.web.web_testserver import Server, web_settings
from tooldeck.catalog import build_toolbox
from tooldeck.core.toolbox import Toolbox
from tooldeck.runtime import Runtime


@pytest.fixture(scope="module")
def web_server() -> Iterator[Server]:
    srv = Server()
    thread = threading.Thread(target=srv.serve_forever, daemon=True)
    thread.start()
    yield srv
    srv.shutdown()
    srv.server_close()


@pytest.fixture(autouse=True)
def _no_user_config(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The developer's own config file must not change what the tests see."""
    monkeypatch.setenv("TOOLDECK_CONFIG", str(tmp_path / "no-such-config.toml"))


@pytest.fixture
def web_box(runtime: Runtime, web_server: Server) -> Toolbox:
    runtime.settings["web"] = web_settings(web_server)
    return build_toolbox(runtime)


@pytest.fixture(scope="module")
def tls_server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[Server, Path]]:
    """The same server over TLS with a self-signed certificate for ``localhost``."""
    import ssl
    import subprocess

    require("openssl")
    d = tmp_path_factory.mktemp("tls")
    cert, key = d / "cert.pem", d / "key.pem"
    subprocess.run(
        ["openssl", "req", "-x509", "-newkey", "rsa:2048", "-nodes", "-keyout", str(key), "-out", str(cert),
         "-days", "1", "-subj", "/CN=localhost", "-addext", "subjectAltName=DNS:localhost"],
        check=True, capture_output=True, timeout=60,
    )  # fmt: skip
    srv = Server()
    ctx = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
    ctx.load_cert_chain(cert, key)
    srv.socket = ctx.wrap_socket(srv.socket, server_side=True)
    thread = threading.Thread(target=srv.serve_forever, daemon=True)
    thread.start()
    yield srv, cert
    srv.shutdown()
    srv.server_close()
