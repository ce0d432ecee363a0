"""The fence the agent clients run behind, checked from the host with a probe
in a client's place (the same namespace, the same environment):

* a listener on the host's 127.0.0.1 is never reached (so neither is any
  address beyond the machine: the namespace has no interface but ``lo``);
* the scripted model server, listening inside the namespace, is;
* the environment holds only allow-listed variables: a secret of this process
  is not among them.
"""

from __future__ import annotations

import json
import socket
import subprocess
import sys
import threading
from pathlib import Path

import pytest

from tests.clients.harness import CLIENT_ENV, client_env
from tests.clients.model_server import ScriptedModel
from tests.clients.netns import HOW, LoopbackOnly, netns_available
from tests.support.require import require

PROBE = r"""
import json, os, socket, sys, urllib.request
def reach(port):
    try:
        socket.create_connection(("127.0.0.1", int(port)), timeout=2).close()
        return True
    except OSError as exc:
        return type(exc).__name__
with urllib.request.urlopen(f"http://127.0.0.1:{sys.argv[2]}/v1/models", timeout=5) as r:
    model = r.status
print(json.dumps({"host": reach(sys.argv[1]), "model": model, "env": sorted(os.environ)}))
"""


def test_a_client_reaches_its_model_server_and_nothing_else(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    require("network namespaces", present=netns_available(), how=HOW)
    monkeypatch.setenv("DEVELOPER_TOKEN", "ghp_secret-of-the-developer")
    host = socket.socket()
    host.bind(("127.0.0.1", 0))
    host.listen(4)
    host.settimeout(0.2)
    seen: list[str] = []
    stop = threading.Event()

    def accept() -> None:
        while not stop.is_set():
            try:
                conn, _ = host.accept()
            except OSError:
                continue
            seen.append("connected")
            conn.close()

    thread = threading.Thread(target=accept, daemon=True)
    thread.start()
    try:
        with LoopbackOnly() as netns, ScriptedModel(["ok"], netns) as model:
            env = client_env(tmp_path / "home", closed_port=9)
            argv = netns.wrap([sys.executable, "-I", "-c", PROBE, str(host.getsockname()[1]), str(model.port)])
            done = subprocess.run(argv, env=env, capture_output=True, text=True, timeout=30)
    finally:
        stop.set()
        thread.join(5)
        host.close()
    assert done.returncode == 0, done.stderr
    out = json.loads(done.stdout)
    assert out["host"] == "ConnectionRefusedError", out  # the namespace's own loopback: nobody there
    assert seen == []  # the host's listener was never reached
    assert out["model"] == 200
    assert set(out["env"]) <= CLIENT_ENV | {"LC_CTYPE"}, set(out["env"]) - CLIENT_ENV
    assert "DEVELOPER_TOKEN" not in out["env"]
