"""Web and images: webpage_to_markdown, import_image."""

from __future__ import annotations

from tooldeck.core.tool import Tool
from tooldeck.runtime import Runtime
from tooldeck.tools.web import image, webpage


def tools(rt: Runtime) -> list[Tool]:
    return [webpage.build(rt), image.build(rt)]
