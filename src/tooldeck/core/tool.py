"""Tool: model-visible metadata plus an implementation.

Two kinds, as in ochat's ``Ochat_function`` (seed 001):

* ``function``: JSON arguments; ``parameters`` is a JSON Schema (from a
  pydantic model when the tool is built from a typed function);
* ``custom``: a raw string input; ``parameters`` is a grammar/format object
  (apply_patch's Lark grammar).

Every tool has a decoder from the raw arguments to its typed input; the decoder
may reject input with ``invalid_arguments``. ``strict`` (default true) is
forwarded as provider metadata; it does not enforce anything here.

Build tools with :func:`tool` (a decorator for typed sync or async functions),
:func:`create_function` / :func:`create_streaming_function` (explicit schema and
decoder, the seed's API), or :func:`custom_tool`.
"""

from __future__ import annotations

import asyncio
import contextvars
import functools
import inspect
import re
import sys
from collections.abc import Awaitable, Callable, Mapping
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Literal, get_type_hints

from tooldeck.core.errors import invalid_arguments
from tooldeck.core.invocation import Invocation
from tooldeck.core.output import Output, coerce_output
from tooldeck.core.workers import WORKERS

if TYPE_CHECKING:
    from pydantic import BaseModel

NAME_RE = re.compile(r"^[a-zA-Z0-9_-]{1,64}$")

# What a custom (raw-text) tool is advertised as taking wherever a wire wants a
# JSON object: MCP ``inputSchema``, a model's function tools (the one home).
CUSTOM_INPUT_SCHEMA: dict[str, Any] = {
    "type": "object",
    "properties": {"input": {"type": "string", "description": "The raw tool input (see the description)."}},
    "required": ["input"],
    "additionalProperties": False,
}

RawArguments = str | bytes | Mapping[str, Any] | None
Decoder = Callable[[RawArguments], Any]
Handler = Callable[[Any, Invocation], Awaitable[Any]]


@dataclass(frozen=True, slots=True)
class ToolAnnotations:
    """MCP tool annotations (hints to clients, not enforcement)."""

    title: str | None = None
    read_only: bool = False
    destructive: bool = False
    idempotent: bool = False
    open_world: bool = False


@dataclass(frozen=True, eq=False)
class Tool:
    name: str
    description: str
    parameters: dict[str, Any]
    decode: Decoder
    handler: Handler
    kind: Literal["function", "custom"] = "function"
    strict: bool = True
    annotations: ToolAnnotations = field(default_factory=ToolAnnotations)
    input_model: type[BaseModel] | None = None

    def __post_init__(self) -> None:
        if not NAME_RE.match(self.name):
            raise ValueError(f"tool name {self.name!r} must match {NAME_RE.pattern}")
        if self.kind not in ("function", "custom"):
            raise ValueError(f"tool kind must be 'function' or 'custom', not {self.kind!r}")

    async def run(self, arguments: RawArguments = None, invocation: Invocation | None = None) -> Output:
        """Decode ``arguments`` and run. Raises ``ToolError`` for bad input or a
        failure the tool reports; hosts should dispatch through a Toolbox, which
        also turns unexpected exceptions into error results."""
        inv = invocation if invocation is not None else Invocation.silent()
        typed = self.decode(arguments)
        return coerce_output(await self.handler(typed, inv))

    def run_sync(self, arguments: RawArguments = None, invocation: Invocation | None = None) -> Output:
        return asyncio.run(self.run(arguments, invocation))

    def with_name(self, name: str, description: str | None = None) -> Tool:
        """The same tool under another model-visible name (for ChatMD aliases)."""
        return Tool(
            name=name,
            description=description if description is not None else self.description,
            parameters=self.parameters,
            decode=self.decode,
            handler=self.handler,
            kind=self.kind,
            strict=self.strict,
            annotations=self.annotations,
            input_model=self.input_model,
        )


async def run_blocking(fn: Callable[..., Any], *args: Any, **kwargs: Any) -> Any:
    """Run a sync function in a worker thread, keeping context variables.

    The thread comes from :data:`tooldeck.core.workers.WORKERS`, not the
    loop's default executor: a call that times out while its thread is stuck
    (a tool that ignores cancellation) abandons the thread, and a fixed pool
    would then starve every later call (and ``asyncio.run`` would wait for it
    at exit)."""
    loop = asyncio.get_running_loop()
    fut: asyncio.Future[Any] = loop.create_future()
    ctx = contextvars.copy_context()
    call = functools.partial(fn, *args, **kwargs)

    def work() -> Callable[[], None]:
        try:
            result = ctx.run(call)
        except BaseException as exc:  # handed to the awaiting task
            return functools.partial(_deliver, loop, fut, None, exc)
        return functools.partial(_deliver, loop, fut, result, None)

    WORKERS.submit(work)
    return await fut


def _deliver(loop: asyncio.AbstractEventLoop, fut: asyncio.Future[Any], result: Any, exc: BaseException | None) -> None:
    def settle() -> None:
        if fut.done():  # timed out or cancelled meanwhile: nobody waits for it
            return
        if exc is not None:
            fut.set_exception(exc)
        else:
            fut.set_result(result)

    try:
        loop.call_soon_threadsafe(settle)
    except RuntimeError:  # the loop is closed: the caller gave up long ago
        pass


def _wrap(fn: Callable[..., Any], call: Callable[[Any, Invocation], tuple[tuple, dict]]) -> Handler:
    """Adapt ``fn`` (sync or async) to the uniform async handler signature."""
    if inspect.iscoroutinefunction(fn):

        async def async_handler(typed: Any, inv: Invocation) -> Any:
            args, kwargs = call(typed, inv)
            return await fn(*args, **kwargs)

        return async_handler

    async def sync_handler(typed: Any, inv: Invocation) -> Any:
        args, kwargs = call(typed, inv)
        return await run_blocking(fn, *args, **kwargs)

    return sync_handler


def tool(
    fn: Callable[..., Any] | None = None,
    *,
    name: str | None = None,
    description: str | None = None,
    title: str | None = None,
    read_only: bool = False,
    destructive: bool = False,
    idempotent: bool = False,
    open_world: bool = False,
    strict: bool = True,
) -> Any:
    """Build a :class:`Tool` from a typed function.

    The function takes either one pydantic model (the whole input) or plain
    typed parameters (a model is generated from them); a parameter annotated
    :class:`Invocation` receives the call's invocation (a streaming tool). It
    may be sync (run in a worker thread) or async, and return ``str``,
    :class:`Output`, a dict or a pydantic model. The docstring is the
    description unless ``description`` is given.
    """

    # names local to the defining scope (a model declared inside a function)
    caller_locals = dict(sys._getframe(1).f_locals)

    def build(f: Callable[..., Any]) -> Tool:
        # lazy: pydantic only where a tool is built from a typed function (a hand-built one never loads it)
        from pydantic import BaseModel, ConfigDict, create_model

        from tooldeck.core.schema import decode_model, model_schema  # lazy: with pydantic, just above

        try:
            hints = get_type_hints(f, localns=caller_locals, include_extras=True)
        except NameError as exc:
            raise TypeError(f"tool {f.__name__}: cannot resolve a type annotation ({exc})") from exc
        sig = inspect.signature(f)
        inv_param: str | None = None
        fields: dict[str, Any] = {}
        for pname, param in sig.parameters.items():
            ann = hints.get(pname, Any)
            if ann is Invocation:
                inv_param = pname
                continue
            default = ... if param.default is inspect.Parameter.empty else param.default
            fields[pname] = (ann, default)

        model_param: str | None = None
        if len(fields) == 1:
            (only, (ann, _default)) = next(iter(fields.items()))
            if inspect.isclass(ann) and issubclass(ann, BaseModel):
                model_param = only
                model: type[BaseModel] = ann
        if model_param is None:
            model = create_model(  # type: ignore[call-overload]
                f"{f.__name__}_input", __config__=ConfigDict(extra="forbid"), **fields
            )

        def call(typed: Any, inv: Invocation) -> tuple[tuple, dict]:
            kwargs: dict[str, Any] = {model_param: typed} if model_param else {k: getattr(typed, k) for k in fields}
            if inv_param:
                kwargs[inv_param] = inv
            return (), kwargs

        return Tool(
            name=name or f.__name__,
            description=description if description is not None else inspect.cleandoc(f.__doc__ or ""),
            parameters=model_schema(model),
            decode=functools.partial(decode_model, model),
            handler=_wrap(f, call),
            kind="function",
            strict=strict,
            annotations=ToolAnnotations(title, read_only, destructive, idempotent, open_world),
            input_model=model,
        )

    return build(fn) if fn is not None else build


def create_function(
    *,
    name: str,
    description: str,
    parameters: dict[str, Any] | type[BaseModel],
    run: Callable[[Any], Any],
    decode: Decoder | None = None,
    strict: bool = True,
    annotations: ToolAnnotations | None = None,
) -> Tool:
    """The seed's ``create_function``: explicit metadata, a decoder, and an
    implementation that receives only the decoded input."""
    return _explicit(name, description, parameters, run, decode, strict, annotations, streaming=False)


def create_streaming_function(
    *,
    name: str,
    description: str,
    parameters: dict[str, Any] | type[BaseModel],
    run: Callable[[Any, Invocation], Any],
    decode: Decoder | None = None,
    strict: bool = True,
    annotations: ToolAnnotations | None = None,
) -> Tool:
    """Like :func:`create_function`, but ``run(input, invocation)`` may emit progress."""
    return _explicit(name, description, parameters, run, decode, strict, annotations, streaming=True)


def _explicit(
    name: str,
    description: str,
    parameters: dict[str, Any] | type[BaseModel],
    run: Callable[..., Any],
    decode: Decoder | None,
    strict: bool,
    annotations: ToolAnnotations | None,
    *,
    streaming: bool,
) -> Tool:
    model: type[BaseModel] | None = None
    if isinstance(parameters, Mapping):  # a hand-written JSON Schema: pydantic is not loaded for it
        schema = dict(parameters)
        if decode is None:
            raise ValueError("a tool with a hand-written JSON Schema needs an explicit decoder")
        decoder = decode
    else:
        from pydantic import BaseModel  # lazy: a model's tool loads pydantic

        from tooldeck.core.schema import decode_model, model_schema  # lazy: with pydantic, just above

        if not (inspect.isclass(parameters) and issubclass(parameters, BaseModel)):
            raise TypeError("parameters must be a JSON Schema (a mapping) or a pydantic model class")
        model = parameters
        schema = model_schema(parameters)
        decoder = decode or functools.partial(decode_model, parameters)

    def call(typed: Any, inv: Invocation) -> tuple[tuple, dict]:
        return ((typed, inv) if streaming else (typed,)), {}

    return Tool(
        name=name,
        description=description,
        parameters=schema,
        decode=decoder,
        handler=_wrap(run, call),
        kind="function",
        strict=strict,
        annotations=annotations or ToolAnnotations(),
        input_model=model,
    )


def raw_string_decoder(raw: RawArguments) -> str:
    """Decoder for custom tools: the raw input string; a JSON object with an
    ``input`` field is unwrapped (how MCP clients deliver custom input)."""
    if raw is None:
        return ""
    if isinstance(raw, bytes):
        try:
            return raw.decode("utf-8")
        except UnicodeDecodeError as exc:
            raise invalid_arguments("input is not valid UTF-8") from exc
    if isinstance(raw, Mapping):
        value = raw.get("input")
        if not isinstance(value, str):
            raise invalid_arguments("field `input`: a string is required")
        return value
    return raw


def custom_tool(
    *,
    name: str,
    description: str,
    grammar: dict[str, Any],
    run: Callable[[str, Invocation], Any],
    decode: Decoder = raw_string_decoder,
    annotations: ToolAnnotations | None = None,
) -> Tool:
    """A ``custom`` tool: raw text input described by a grammar object,
    e.g. ``{"type": "grammar", "syntax": "lark", "definition": ...}``."""

    def call(typed: Any, inv: Invocation) -> tuple[tuple, dict]:
        return (typed, inv), {}

    return Tool(
        name=name,
        description=description,
        parameters=grammar,
        decode=decode,
        handler=_wrap(run, call),
        kind="custom",
        strict=True,
        annotations=annotations or ToolAnnotations(),
    )
