"""webpage_to_markdown against a local server: conversion, limits, redirects, cache, GitHub blobs."""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import pytest

from tests.tools.web.web_testserver import web_settings
from tooldeck.catalog import build_toolbox
from tooldeck.core.errors import ToolError
from tooldeck.core.toolbox import Toolbox, ToolResult
from tooldeck.runtime import Runtime

pytestmark = pytest.mark.timeout(60)


def fetch(box: Toolbox, url: str) -> ToolResult:
    return box.call_sync("webpage_to_markdown", json.dumps({"url": url}))


def ok(box: Toolbox, url: str) -> str:
    res = fetch(box, url)
    assert not res.is_error, res.text
    return res.text


def err(box: Toolbox, url: str, code: str) -> ToolResult:
    res = fetch(box, url)
    assert res.is_error, res.text[:400]
    assert res.error is not None and res.error.code == code, res.text
    return res


def test_page_keeps_structure_and_drops_boilerplate(web_box: Toolbox, web_server: Any) -> None:
    text = ok(web_box, web_server.url("/page"))
    assert text.startswith(f"Source: {web_server.url('/page')}\nTitle: Widget manual\n")
    assert "# Widget manual" in text and "## Sizes" in text
    assert "[widget spec](https://example.org/spec)" in text
    assert re.search(r"\| Size +\| Width +\|\n\| -+ \| -+ \|\n\| small +\| 10 +\|", text), text
    assert "```python\ndef widget(size):\n    return size * 2\n```" in text
    assert '```rust\nfn main() { println!("hi"); }\n```' in text  # language from the wrapping div
    assert "```go\npackage main\n```" in text  # language from <pre lang>
    for junk in ("NAV-DOCS", "HEADER-HOME", "COOKIE-TEXT", "SIDEBAR-TEXT", "FOOTER-TEXT", "SCRIPT-TEXT", "color: red"):
        assert junk not in text, junk
    assert "OUTSIDE-MAIN-TEXT" not in text  # <main> preferred over the rest of the page


def test_text_markdown_json_and_charsets(web_box: Toolbox, web_server: Any) -> None:
    assert ok(web_box, web_server.url("/plain")).endswith("just plain text\nsecond line")
    assert ok(web_box, web_server.url("/md")).endswith("# Heading\n\n- item")
    assert '```json\n{\n  "b": [\n    1,\n    2\n  ],\n  "a": "x"\n}\n```' in ok(web_box, web_server.url("/json"))
    assert "café" in ok(web_box, web_server.url("/latin1"))


def test_binary_content_types_are_refused_without_download(web_box: Toolbox, web_server: Any) -> None:
    res = err(web_box, web_server.url("/binary"), "unsupported")
    assert "image/png" in res.text and "HTML, Markdown, plain text and JSON" in res.text
    err(web_box, web_server.url("/octet"), "unsupported")


def test_oversized_bodies_are_refused(web_box: Toolbox, web_server: Any) -> None:
    res = err(web_box, web_server.url("/declared-big"), "too_large")
    assert "declares 300013 bytes" in res.text and "200000-byte limit" in res.text
    res = err(web_box, web_server.url("/endless"), "too_large")
    assert "kept going" in res.text
    # the client hung up: the server could not push its 50 MB (socket buffers hold a few MB at most)
    deadline = time.monotonic() + 5
    while web_server.written["/endless"] == 0 and time.monotonic() < deadline:
        time.sleep(0.05)
    time.sleep(0.3)
    assert 0 < web_server.written["/endless"] < 20_000_000


def test_compressed_bodies_are_capped_after_decompression(web_box: Toolbox, web_server: Any) -> None:
    assert "# Widget manual" in ok(web_box, web_server.url("/gzip"))
    res = err(web_box, web_server.url("/gzip-big"), "too_large")  # small on the wire, 5 MB inflated
    assert "200000-byte limit" in res.text
    res = err(web_box, web_server.url("/gzip-bomb"), "unsupported")  # stacked encodings are not decoded
    assert "gzip, gzip" in res.text


def test_redirects_followed_loops_and_chains_capped(web_box: Toolbox, web_server: Any) -> None:
    text = ok(web_box, web_server.url("/to-page"))
    assert text.startswith(f"Source: {web_server.url('/page')} (redirected from {web_server.url('/to-page')})")
    res = err(web_box, web_server.url("/loop"), "too_many_redirects")
    assert "loop" in res.text
    before = web_server.hits["/chain/5"]
    res = err(web_box, web_server.url("/chain/0"), "too_many_redirects")
    assert "more than 4 times" in res.text
    assert web_server.hits["/chain/4"] >= 1 and web_server.hits["/chain/5"] == before  # hop 5 never requested


def test_slow_server_times_out(runtime: Runtime, web_server: Any) -> None:
    runtime.settings["web"] = web_settings(web_server, read_timeout=0.5)
    box = build_toolbox(runtime)
    res = err(box, web_server.url("/slow"), "timeout")  # the page comes after 2.5 s: waiting for it would succeed
    assert "did not answer in time" in res.text


def test_http_error_status(web_box: Toolbox, web_server: Any) -> None:
    res = err(web_box, web_server.url("/missing"), "http_error")
    assert res.error is not None and res.error.details["status"] == 404 and "HTTP 404" in res.text


def test_private_addresses_refused(web_box: Toolbox, web_server: Any, runtime: Runtime) -> None:
    before = dict(web_server.hits)
    res = err(web_box, web_server.url("/to-metadata"), "denied")  # redirect hop checked
    assert "169.254.169.254" in res.text and res.error is not None
    assert res.error.details["reason"] == "private_address"
    err(web_box, web_server.url("/to-loopback"), "denied")  # 127.0.0.2 is not in the allowed list
    err(web_box, "http://10.1.2.3/", "denied")
    err(web_box, "http://[::1]:9/", "denied")
    err(web_box, "http://[::ffff:127.0.0.2]:9/", "denied")  # IPv4-mapped loopback
    assert web_server.hits["/page"] == before.get("/page", 0)  # no redirect target was fetched

    # with nothing allowed, even the test server itself is refused, before any request
    strict = Runtime(runtime.workspace, state_dir=runtime.state_dir)
    strict.settings["web"] = web_settings(web_server, allow_private_hosts=[])
    hits = sum(web_server.hits.values())
    strict_box = build_toolbox(strict)
    err(strict_box, web_server.url("/plain"), "denied")
    err(strict_box, f"http://localhost:{web_server.server_port}/plain", "denied")  # a name resolving to loopback
    assert sum(web_server.hits.values()) == hits


def test_invalid_urls(web_box: Toolbox) -> None:
    for url in ("file:///etc/passwd", "ftp://example.org/x", "example.org/page", "http://", "http://u:p@example.org/"):
        res = err(web_box, url, "invalid_arguments")
        assert res.error is not None and res.error.details["fields"] == ["url"]


def test_cache_hit_does_not_reach_the_server(web_box: Toolbox, web_server: Any) -> None:
    url = web_server.url("/md") + "?cache-test"
    first = ok(web_box, url)
    assert web_server.hits["/md"] >= 1
    hits = web_server.hits["/md"]
    assert ok(web_box, url + "#some-anchor") == first  # the fragment is not part of the page
    assert web_server.hits["/md"] == hits


def test_cache_entries_expire(runtime: Runtime, web_server: Any) -> None:
    runtime.settings["web"] = web_settings(web_server, cache_seconds=0.3)
    box = build_toolbox(runtime)
    url = web_server.url("/plain") + "?ttl"
    ok(box, url)
    hits = web_server.hits["/plain"]
    ok(box, url)
    assert web_server.hits["/plain"] == hits
    time.sleep(0.4)
    ok(box, url)
    assert web_server.hits["/plain"] == hits + 1


def test_github_blob_slices(web_box: Toolbox, web_server: Any) -> None:
    url = "https://github.com/acme/widgets/blob/main/src/pkg/mod.py#L3-L5"
    text = ok(web_box, url)
    assert f"raw: {web_server.url('/raw')}/acme/widgets/main/src/pkg/mod.py" in text
    assert "Lines 3-5 of 30 of mod.py:" in text
    assert text.endswith("```python\n3 | line_3 = 3\n4 | line_4 = 4\n5 | line_5 = 5\n```")
    one = ok(web_box, "https://github.com/acme/widgets/blob/feature/x/lib.rs#L12")
    assert one.endswith("```rust\n12 | line_12 = 12\n```")
    whole = ok(web_box, "https://github.com/acme/widgets/blob/v1/Makefile")
    assert "Lines 1-30 of 30" in whole and "```makefile\n 1 | line_1 = 1\n" in whole
    assert "30 | line_30 = 30\n```" in whole
    hits = sum(n for p, n in web_server.hits.items() if p.startswith("/raw/"))
    again = ok(web_box, "https://github.com/acme/widgets/blob/main/src/pkg/mod.py#L7-L8")  # same file: cached
    assert again.endswith("```python\n7 | line_7 = 7\n8 | line_8 = 8\n```")
    assert sum(n for p, n in web_server.hits.items() if p.startswith("/raw/")) == hits
    res = err(web_box, "https://github.com/acme/widgets/blob/main/a.py#L99", "invalid_arguments")
    assert "past the end" in res.text and "30 lines" in res.text
    assert any(h.startswith("127.0.0.1:") for h in web_server.host_headers)


def test_long_page_is_paged_by_the_output_budget(runtime: Runtime, web_server: Any) -> None:
    runtime.settings["web"] = web_settings(web_server, max_bytes=2_000_000)
    box = build_toolbox(runtime)
    first = fetch(box, web_server.url("/long"))
    assert not first.is_error
    m = re.search(r'Continue with \{"cursor": "(p:[0-9a-f]+)"\} on webpage_to_markdown', first.text)
    assert m, first.text[-300:]
    assert "## Section 0\n" in first.text
    assert box.count_tokens(first.text) <= runtime.budget_tokens
    seen = first.text
    cursor = m.group(1)
    for _ in range(20):
        nxt = box.call_sync("webpage_to_markdown", json.dumps({"cursor": cursor}))
        assert not nxt.is_error, nxt.text
        seen += "\n" + nxt.text
        m = re.search(r'"cursor": "(p:[0-9a-f]+)"', nxt.text)
        if not m:
            break
        cursor = m.group(1)
    # every section exactly once, in order: pages break between lines, nothing lost or repeated
    assert re.findall(r"^## Section (\d+)$", seen, re.M) == [str(i) for i in range(1500)]
    assert "continues" not in seen


def test_cli_call_as_a_subprocess(tmp_path: Path, web_server: Any) -> None:
    config = tmp_path / "config.toml"
    config.write_text('[web]\nallow_private_hosts = ["127.0.0.1"]\n')
    state = tmp_path / "state"
    state.mkdir()
    env = {**os.environ, "TOOLDECK_CONFIG": str(config), "TOOLDECK_STATE_DIR": str(state)}
    args = json.dumps({"url": web_server.url("/page")})
    r = subprocess.run(
        [sys.executable, "-m", "tooldeck", "call", "webpage_to_markdown", args, "--root", str(tmp_path)],
        capture_output=True,
        text=True,
        env=env,
        timeout=60,
    )
    assert r.returncode == 0, r.stderr
    assert "# Widget manual" in r.stdout and "NAV-DOCS" not in r.stdout
    env["TOOLDECK_CONFIG"] = str(tmp_path / "none.toml")  # no allowance: loopback refused
    r = subprocess.run(
        [sys.executable, "-m", "tooldeck", "call", "webpage_to_markdown", args, "--root", str(tmp_path)],
        capture_output=True,
        text=True,
        env=env,
        timeout=60,
    )
    assert r.returncode == 1 and r.stderr.startswith("error [denied]")


def test_https_connects_to_the_checked_address_and_verifies_the_host_name(runtime: Runtime, tls_server: Any) -> None:
    srv, cert = tls_server
    runtime.settings["web"] = web_settings(srv, allow_private_hosts=["127.0.0.1", "::1"], ca_bundle=str(cert))
    box = build_toolbox(runtime)
    text = ok(box, f"https://localhost:{srv.server_port}/plain")  # the certificate names localhost, not 127.0.0.1
    assert text.endswith("just plain text\nsecond line")
    assert srv.host_headers[-1] == f"localhost:{srv.server_port}"
    # by address the name check fails: the certificate is verified, not ignored
    res = err(box, f"https://127.0.0.1:{srv.server_port}/plain", "network_error")
    assert "CERTIFICATE_VERIFY_FAILED" in res.text or "certificate" in res.text.lower()
    # without the CA the self-signed certificate is refused
    runtime2 = Runtime(runtime.workspace, state_dir=runtime.state_dir)
    runtime2.settings["web"] = web_settings(srv, allow_private_hosts=["127.0.0.1", "::1"])
    err(build_toolbox(runtime2), f"https://localhost:{srv.server_port}/plain", "network_error")


def test_the_next_checked_address_is_tried_when_one_refuses(web_server: Any) -> None:
    import ipaddress

    from tooldeck.web_fetch.fetch import Fetcher
    from tooldeck.web_fetch.policy import WebPolicy, parse_target

    fetcher = Fetcher(WebPolicy.from_table(web_settings(web_server, allow_private_hosts=["127.0.0.0/8"])))
    target = parse_target(web_server.url("/plain"))
    dead, live = ipaddress.ip_address("127.0.0.2"), ipaddress.ip_address("127.0.0.1")  # nothing listens on .2
    _location, fetched = fetcher._connect_any(target, [dead, live], time.monotonic() + 10, None)
    assert fetched is not None and fetched.body == b"just plain text\nsecond line\n"
    with pytest.raises(ToolError) as exc:
        fetcher._connect_any(target, [dead], time.monotonic() + 10, None)
    assert exc.value.code == "network_error"
    fetcher.close()
