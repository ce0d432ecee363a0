"""The pure parts of the web domain: address rules, URL parsing, blob URLs, conversion details."""

from __future__ import annotations

import ipaddress

import pytest

from tooldeck.core.errors import ToolError
from tooldeck.web_fetch.convert import fenced, html_to_markdown, lang_from_attrs, main_region
from tooldeck.web_fetch.fetch import classify
from tooldeck.web_fetch.github import parse_blob, render_blob
from tooldeck.web_fetch.policy import WebPolicy, check_address, is_public, parse_target


@pytest.mark.parametrize(
    "addr",
    [
        "127.0.0.1", "10.0.0.1", "172.16.5.4", "192.168.1.1", "169.254.169.254", "100.64.0.1", "0.0.0.0",
        "224.0.0.1", "255.255.255.255", "192.0.2.1", "::1", "fe80::1", "fc00::1", "::", "::ffff:10.0.0.1",
        "ff02::1", "2001:db8::1",
    ],
)  # fmt: skip
def test_non_public_addresses(addr: str) -> None:
    ip = ipaddress.ip_address(addr)
    assert not is_public(ip)
    with pytest.raises(ToolError) as exc:
        check_address(ip, addr, WebPolicy())
    assert exc.value.code == "denied"


@pytest.mark.parametrize("addr", ["93.184.215.14", "1.1.1.1", "2606:4700::1111", "::ffff:8.8.8.8"])
def test_public_addresses(addr: str) -> None:
    assert is_public(ipaddress.ip_address(addr))
    check_address(ipaddress.ip_address(addr), addr, WebPolicy())


def test_allow_private_hosts_networks() -> None:
    policy = WebPolicy.from_table({"allow_private_hosts": ["127.0.0.1", "10.0.0.0/8"], "read_timeout": 2})
    check_address(ipaddress.ip_address("10.9.8.7"), "x", policy)
    check_address(ipaddress.ip_address("127.0.0.1"), "x", policy)
    with pytest.raises(ToolError):
        check_address(ipaddress.ip_address("127.0.0.2"), "x", policy)
    assert policy.read_timeout == 2.0
    everything = WebPolicy.from_table({"allow_private_hosts": "*"})
    check_address(ipaddress.ip_address("::1"), "x", everything)
    with pytest.raises(ValueError, match="not an IP address"):
        WebPolicy.from_table({"allow_private_hosts": ["intranet.local"]})


def test_parse_target() -> None:
    t = parse_target("https://Example.ORG/a/b?q=1#frag")
    assert (t.scheme, t.host, t.port, t.path, t.host_header) == ("https", "example.org", 443, "/a/b?q=1", "example.org")
    t = parse_target("http://[::1]:8080")
    assert (t.host, t.port, t.path, t.host_header) == ("::1", 8080, "/", "[::1]:8080")
    assert parse_target("http://bücher.example/").host == "xn--bcher-kva.example"
    for bad in ("javascript:alert(1)", "//example.org", "http://example.org:99999/", "http://a:b@example.org/"):
        with pytest.raises(ToolError) as exc:
            parse_target(bad)
        assert exc.value.code == "invalid_arguments"


def test_classify_content_types() -> None:
    assert classify("text/html; charset=ISO-8859-1") == ("text/html", "html", "ISO-8859-1")
    assert classify("application/vnd.api+json")[1] == "json"
    assert classify("application/pdf")[1] is None
    assert classify(None)[1] == "unknown"


def test_blob_urls() -> None:
    ref = parse_blob("https://www.github.com/o/r/blob/release/2.x/docs/a.md#L7C3-L2C1", "https://raw.test/")
    assert ref is not None
    assert ref.raw_url == "https://raw.test/o/r/release/2.x/docs/a.md"
    assert (ref.first, ref.last, ref.language) == (2, 7, "markdown")
    assert parse_blob("https://github.com/o/r/tree/main/src", "https://raw.test") is None
    assert parse_blob("https://gitlab.com/o/r/blob/main/a.py", "https://raw.test") is None
    whole = parse_blob("https://github.com/o/r/blob/main/README.md", "https://raw.test")
    assert whole is not None and render_blob(whole, "# Hi\n").endswith("\n\n# Hi")  # Markdown stays Markdown
    code = parse_blob("https://github.com/o/r/blob/main/x.js#L2", "https://raw.test")
    assert code is not None and render_blob(code, "a\nb\nc\n").endswith("```javascript\n2 | b\n```")


def test_code_language_hints_and_fences() -> None:
    assert lang_from_attrs({"class": "sourceCode python"}) == "python"
    assert lang_from_attrs({"class": "lang-ts extra"}) == "ts"
    assert lang_from_attrs({"class": "highlight"}) is None
    assert lang_from_attrs({"data-lang": "Shell"}) == "shell"
    assert fenced("a ``` b", "md") == "````md\na ``` b\n````"
    md, title = html_to_markdown('<pre class="sourceCode python"><code>x = 1</code></pre>')
    assert "```python\nx = 1\n```" in md and title is None


def test_main_region_choice() -> None:
    region, title = main_region("<title>T</title><div>menu</div><div role='main'><p>core</p></div><p>after</p>")
    assert region == "<p>core</p>" and title == "T"
    region, _ = main_region("<body><article>one</article><article>two</article></body>")
    assert "one" in region and "two" in region  # several articles: keep the page
    region, _ = main_region("<body><main><main>in</main>tail</main>out</body>")
    assert region == "<main>in</main>tail"
