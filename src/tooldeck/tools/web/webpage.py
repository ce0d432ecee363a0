"""webpage_to_markdown: a public web page (or a GitHub blob URL) as Markdown.

The work is in :mod:`tooldeck.web_fetch`; this module is the model-facing
surface: the input, the description, and where the policy comes from (the
user's config file ``[web]`` table, then ``Runtime.settings["web"]`` from an
embedding host). A long page is paged by the Toolbox's output budget.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from pydantic import Field

from tooldeck.config import ConfigError, load_config
from tooldeck.core import ToolInput, tool
from tooldeck.core.errors import ErrorCode, ToolError
from tooldeck.core.invocation import Invocation
from tooldeck.core.tool import Tool
from tooldeck.runtime import Runtime
from tooldeck.web_fetch.policy import WebPolicy

if TYPE_CHECKING:
    from tooldeck.web_fetch.service import WebService

SERVICE_KEY = "web.service"


class WebpageInput(ToolInput):
    url: str = Field(
        description="http(s) URL of the page. A github.com/OWNER/REPO/blob/REF/PATH URL is fetched raw; "
        "add #L10-L40 (or #L10) to get just those lines, numbered.",
        min_length=1,
        max_length=8192,
    )


def web_policy(rt: Runtime) -> WebPolicy:
    """The ``[web]`` table of the user's config file (never a project file: a
    checkout must not open the private network), overlaid with
    ``rt.settings["web"]`` (hosts and tests)."""
    try:
        table: dict[str, Any] = dict(load_config(None).section("web"))
    except ConfigError as exc:
        raise ToolError(ErrorCode.UNSUPPORTED, f"the configuration file is invalid: {exc}") from exc
    override = rt.settings.get("web")
    if isinstance(override, dict):
        table.update(override)
    try:
        return WebPolicy.from_table(table)
    except (TypeError, ValueError) as exc:
        raise ToolError(ErrorCode.UNSUPPORTED, f"the [web] configuration is invalid: {exc}") from exc


def web_service(rt: Runtime) -> WebService:
    # lazy: the fetcher (httpx, the HTML converter) loads on the first fetch, not at catalog build
    from tooldeck.web_fetch.service import WebService

    return rt.service(SERVICE_KEY, lambda r: WebService(web_policy(r)))


def build(rt: Runtime) -> Tool:
    def webpage_to_markdown(args: WebpageInput, inv: Invocation) -> str:
        return web_service(rt).markdown(args.url, inv.check_cancelled)

    return tool(
        webpage_to_markdown,
        description=(
            "Download a public web page (url) as Markdown: headings, tables, links and code kept; menus and "
            "banners dropped. GitHub blob URLs are fetched raw. A long page is paged (continue with the cursor "
            "the result names). Private and local network addresses are refused."
        ),
        read_only=True,
        idempotent=True,
        open_world=True,
    )
