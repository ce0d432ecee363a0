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
"""

from tooldeck.core.budget import DEFAULT_BUDGET, Pager, enforce_budget, estimate_tokens
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
from tooldeck.core.schema import ToolInput, decode_model, model_schema, parse_arguments
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
