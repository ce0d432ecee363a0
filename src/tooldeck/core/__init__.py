"""tooldeck.core: the tool model (Tool, Output, Invocation, Toolbox, ToolError).

This layer imports nothing else of tooldeck, so a program can define and
dispatch its own tools with only ``tooldeck.core``::

    from tooldeck.core import Toolbox, tool

    @tool(read_only=True)
    def echo(text: str) -> str:
        "Return the supplied text."
        return text

    box = Toolbox([echo])
    print(box.call_sync("echo", '{"text": "hello"}').text)

The public names are loaded on first use (module ``__getattr__``): importing
``tooldeck.core`` or one of its modules does not load pydantic and every
other core module, which a start of ``tooldeck serve`` does not need yet.
"""

from __future__ import annotations

import importlib
import sys
import types
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from tooldeck.core.budget import DEFAULT_BUDGET, Pager, enforce_budget, estimate_tokens
    from tooldeck.core.decode import parse_arguments
    from tooldeck.core.errors import ErrorCode, ToolError, invalid_arguments
    from tooldeck.core.invocation import (
        SILENT,
        Append,
        Channel,
        Invocation,
        Progress,
        Replace,
        ToolFinished,
        ToolProgress,
        ToolStarted,
        TraceEvent,
    )
    from tooldeck.core.output import ImagePart, Output, TextPart, coerce_output
    from tooldeck.core.schema import ToolInput, decode_model, model_schema
    from tooldeck.core.tool import (
        Tool,
        ToolAnnotations,
        create_function,
        create_streaming_function,
        custom_tool,
        raw_string_decoder,
        run_blocking,
        tool,
    )
    from tooldeck.core.toolbox import Toolbox, ToolCall, ToolResult

_HOMES: dict[str, str] = {  # public name -> the module of tooldeck.core that defines it
    "DEFAULT_BUDGET": "budget",
    "Pager": "budget",
    "enforce_budget": "budget",
    "estimate_tokens": "budget",
    "ErrorCode": "errors",
    "ToolError": "errors",
    "invalid_arguments": "errors",
    "Append": "invocation",
    "Channel": "invocation",
    "Invocation": "invocation",
    "Progress": "invocation",
    "Replace": "invocation",
    "SILENT": "invocation",
    "ToolFinished": "invocation",
    "ToolProgress": "invocation",
    "ToolStarted": "invocation",
    "TraceEvent": "invocation",
    "ImagePart": "output",
    "Output": "output",
    "TextPart": "output",
    "coerce_output": "output",
    "ToolInput": "schema",
    "decode_model": "schema",
    "model_schema": "schema",
    "parse_arguments": "decode",
    "Tool": "tool",
    "ToolAnnotations": "tool",
    "create_function": "tool",
    "create_streaming_function": "tool",
    "custom_tool": "tool",
    "raw_string_decoder": "tool",
    "run_blocking": "tool",
    "tool": "tool",
    "ToolCall": "toolbox",
    "ToolResult": "toolbox",
    "Toolbox": "toolbox",
}

__all__ = [
    "DEFAULT_BUDGET",
    "SILENT",
    "Append",
    "Channel",
    "ErrorCode",
    "ImagePart",
    "Invocation",
    "Output",
    "Pager",
    "Progress",
    "Replace",
    "TextPart",
    "Tool",
    "ToolAnnotations",
    "ToolCall",
    "ToolError",
    "ToolFinished",
    "ToolInput",
    "ToolProgress",
    "ToolResult",
    "ToolStarted",
    "Toolbox",
    "TraceEvent",
    "coerce_output",
    "create_function",
    "create_streaming_function",
    "custom_tool",
    "decode_model",
    "enforce_budget",
    "estimate_tokens",
    "invalid_arguments",
    "model_schema",
    "parse_arguments",
    "raw_string_decoder",
    "run_blocking",
    "tool",
]


def __getattr__(name: str) -> Any:
    home = _HOMES.get(name)
    if home is None:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    value = getattr(importlib.import_module(f"{__name__}.{home}"), name)
    globals()[name] = value  # the next lookup is a plain global
    return value


def __dir__() -> list[str]:
    return sorted(set(globals()) | set(__all__))


class _Package(types.ModuleType):
    """Importing the submodule ``tooldeck.core.tool`` sets the package's
    attribute ``tool`` to it; the public name ``tool`` is the decorator."""

    def __setattr__(self, name: str, value: Any) -> None:
        if name in _HOMES and isinstance(value, types.ModuleType):
            return
        super().__setattr__(name, value)


sys.modules[__name__].__class__ = _Package
